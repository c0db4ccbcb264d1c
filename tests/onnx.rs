//! ONNX models (feature `onnx`): real models exported from PyTorch against onnxruntime's outputs
//! (tests/fixtures/onnx, written by scripts/onnx_fixture.py), and files that lie or break: an
//! `Err` naming the file and the problem, never a panic.
#![cfg(feature = "onnx")]

mod common;

use ferrograd::error::Error;
use ferrograd::onnx::proto::Message;
use ferrograd::onnx::proto::{GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, ValueInfoProto};
use ferrograd::onnx::{load_tensor, OnnxModel};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/onnx").join(name)
}

/// The model's output on the fixture's input, against onnxruntime's, to 1e-5, on every device
/// (weights and inputs on the default device).
fn check_against_onnxruntime(name: &str) {
    common::for_each_device(|dev| check_on(name, dev));
}

fn check_on(name: &str, dev: &str) {
    let dir = fixture(name);
    let model = OnnxModel::load(dir.join("model.onnx")).unwrap();
    let x = load_tensor(dir.join("test_data_set_0/input_0.pb")).unwrap();
    let want = load_tensor(dir.join("test_data_set_0/output_0.pb")).unwrap();
    let out = model.run([(model.inputs()[0].clone(), x)]).unwrap();
    let got = &out[&model.outputs()[0]];
    assert_eq!(got.device(), dev);
    assert_eq!(got.shape(), want.shape(), "{name}");
    let (g, w) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
    let worst = g.iter().zip(&w).map(|(a, b)| (a - b).abs() / (1.0 + b.abs())).fold(0f32, f32::max);
    assert!(worst <= 1e-5, "{name} on {dev}: worst difference from onnxruntime {worst:e}");
}

#[test]
fn beautiful_mnist_exported_from_pytorch_matches_onnxruntime() {
    check_against_onnxruntime("mnist");
}

#[test]
fn transformer_block_exported_from_pytorch_matches_onnxruntime() {
    check_against_onnxruntime("transformer");
}

fn tensor_info(name: &str) -> ValueInfoProto {
    ValueInfoProto { name: Some(name.into()), r#type: None }
}

/// A one-node model: `op` from x to y at `opset`.
fn one_node(op: &str, opset: i64, initializer: Vec<TensorProto>) -> Vec<u8> {
    let node =
        NodeProto { input: vec!["x".into()], output: vec!["y".into()], op_type: Some(op.into()), ..Default::default() };
    let graph = GraphProto {
        node: vec![node],
        initializer,
        input: vec![tensor_info("x")],
        output: vec![tensor_info("y")],
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(opset) }],
        graph: Some(graph),
        ..Default::default()
    };
    model.encode_to_vec()
}

#[test]
fn an_op_ferrograd_lacks_is_unsupported_naming_it_and_the_opset() {
    let bytes = one_node("NoSuchOp", 17, vec![]);
    let model = OnnxModel::from_bytes(&bytes, Path::new("made.onnx")).unwrap();
    let err = model.run([("x", ferrograd::Tensor::ones([2]))]).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("NoSuchOp") && msg.contains("opset 17"), "{msg}");
    // A missing input is named too.
    let err = model.run(Vec::<(&str, ferrograd::Tensor)>::new()).unwrap_err().to_string();
    assert!(err.contains("\"x\" was not given"), "{err}");
}

#[test]
fn a_tensor_whose_data_does_not_fill_its_dims_is_an_error_naming_it() {
    let lying = TensorProto {
        name: Some("w".into()),
        dims: vec![1000, 1000],
        data_type: Some(1),
        raw_data: Some(vec![0; 16]),
        ..Default::default()
    };
    let err =
        OnnxModel::from_bytes(&one_node("Relu", 17, vec![lying]), Path::new("lying.onnx")).unwrap_err().to_string();
    assert!(err.contains("lying.onnx") && err.contains("\"w\"") && err.contains("4000000 bytes"), "{err}");
    let strings = TensorProto { name: Some("s".into()), dims: vec![1], data_type: Some(8), ..Default::default() };
    let err = OnnxModel::from_bytes(&one_node("Relu", 17, vec![strings]), Path::new("s.onnx")).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)) && err.to_string().contains("STRING"), "{err}");
}

#[test]
fn a_protobuf_with_a_lying_length_is_an_error() {
    let mut bytes = one_node("Relu", 17, vec![]);
    // Field 7 (the graph), length-delimited: claim far more bytes than the file has.
    let at = bytes.iter().position(|&b| b == (7 << 3 | 2)).unwrap();
    bytes[at + 1] = 0x7f;
    let err = OnnxModel::from_bytes(&bytes, Path::new("short.onnx")).unwrap_err().to_string();
    assert!(err.contains("short.onnx") && err.contains("protobuf"), "{err}");
    let err = OnnxModel::load("/nonexistent/model.onnx").unwrap_err().to_string();
    assert!(err.contains("/nonexistent/model.onnx"), "{err}");
}

/// Random byte changes and truncations of a real model: loading and running either works or is
/// an `Err`; nothing panics.
#[test]
fn corrupt_models_never_panic() {
    let bytes = std::fs::read(fixture("transformer/model.onnx")).unwrap();
    let x = load_tensor(fixture("transformer/test_data_set_0/input_0.pb")).unwrap();
    let mut rng = common::Rng::new(11);
    let (mut errors, mut runs) = (0, 0);
    for i in 0..60 {
        let bad = rng.corrupt(&bytes, 1 + i % 4, i % 3 == 0);
        let result = std::panic::catch_unwind(|| {
            let model = OnnxModel::from_bytes(&bad, Path::new("corrupt.onnx"))?;
            let out = model.run([("tokens", x.clone())])?;
            out.values().map(|t| t.to_vec::<f32>().map(|_| ())).collect::<Result<Vec<()>, Error>>()
        });
        match result {
            Ok(Ok(_)) => runs += 1,
            Ok(Err(e)) => {
                errors += 1;
                assert!(
                    e.to_string().contains("corrupt.onnx") || matches!(e, Error::Unsupported(_) | Error::DType { .. }),
                    "{e}"
                );
            }
            Err(_) => panic!("corruption {i} panicked"),
        }
    }
    assert!(errors > 10 && errors + runs == 60, "{errors} errors, {runs} runs");
}
