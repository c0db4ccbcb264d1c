//! `nn::torch_load` on checkpoints `torch.save` wrote (`scripts/torch_fixture.py`): every value
//! against `expected.json`, strided views of one storage, nn state dicts loaded into ferrograd
//! layers; a pickle that names a function is refused by name; corrupted pickles inside valid
//! archives are errors, never panics.

mod common;
use ferrograd::nn::{
    load_state_dict, torch_load, torch_load_state_dict, BatchNorm, Conv2d, Linear, Module, TorchValue,
};
use ferrograd::{DType, Tensor};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/torch_load").join(name)
}

fn dtype_of(name: &str) -> DType {
    match name {
        "float32" => DType::F32,
        "float64" => DType::F64,
        "float16" => DType::F16,
        "bfloat16" => DType::BF16,
        "int64" => DType::I64,
        "int32" => DType::I32,
        "int16" => DType::I16,
        "int8" => DType::I8,
        "uint8" => DType::U8,
        "bool" => DType::BOOL,
        other => panic!("dtype {other}"),
    }
}

fn check(t: &Tensor, want: &Value, what: &str) {
    let shape: Vec<usize> = want["shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
    assert_eq!(t.shape(), shape, "{what}: shape");
    assert_eq!(t.dtype(), dtype_of(want["dtype"].as_str().unwrap()), "{what}: dtype");
    let data: Vec<f64> = want["data"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    // (serde_json's float parsing may be one ulp off Python's shortest repr.)
    let got = t.cast(DType::F64).to_vec::<f64>().unwrap();
    assert_eq!(got.len(), data.len(), "{what}: values");
    for (k, (g, w)) in got.iter().zip(&data).enumerate() {
        assert!((g - w).abs() <= 1e-15 * w.abs(), "{what}: element {k}: {g} != {w}");
    }
}

#[test]
fn reads_every_value_torch_saved() {
    reads_every_value("checkpoint.pt");
}

/// The same values saved in the legacy format (PyTorch before 1.6: no zip).
#[test]
fn reads_the_legacy_format() {
    reads_every_value("legacy.pt");
}

fn reads_every_value(file: &str) {
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(fixture("expected.json")).unwrap()).unwrap();
    let ck = torch_load(fixture(file)).unwrap();
    for group in ["views", "dtypes"] {
        for (name, want) in expected[group].as_object().unwrap() {
            let t = ck.get(group).and_then(|g| g.get(name)).and_then(TorchValue::as_tensor).expect(name);
            check(t, want, &format!("{group}.{name}"));
        }
    }
    let flat = ck.state_dict();
    for (name, want) in expected["layers"].as_object().unwrap() {
        check(&flat[&format!("layers.{name}")], want, name);
    }
    // Containers and plain values.
    assert!(matches!(ck.get("n"), Some(TorchValue::Int(3))));
    assert!(matches!(ck.get("name"), Some(TorchValue::Str(s)) if s == "ferrograd"));
    let Some(TorchValue::Tuple(t)) = ck.get("tuple") else { panic!("a tuple") };
    assert!(
        matches!(t[..], [TorchValue::Int(1), TorchValue::Float(f), TorchValue::None, TorchValue::Bool(true)] if f == 2.0)
    );
    let Some(TorchValue::List(l)) = ck.get("list") else { panic!("a list") };
    assert!(matches!(l[1..], [TorchValue::Int(1), TorchValue::Str(ref s)] if s == "a"));
    let row: Vec<f64> =
        expected["views"]["base"]["data"].as_array().unwrap()[..5].iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(l[0].as_tensor().unwrap().cast(DType::F64).to_vec::<f64>().unwrap(), row, "list[0]");
    // The views of one storage read one buffer: a transpose is a permute of it, not a copy, and
    // every view but the overlapping one is movement ops only (no gather).
    let t = flat["views.t"].uop();
    assert!(t.toposort().iter().any(|n| n.op() == ferrograd::Ops::PERMUTE), "the transpose is a view");
    for view in ["t", "stepped", "offset", "row_broadcast"] {
        let ops: Vec<ferrograd::Ops> = flat[&format!("views.{view}")].uop().toposort().iter().map(|n| n.op()).collect();
        assert!(ops.iter().all(|o| o.is_movement() || *o == ferrograd::Ops::BUFFER), "{view}: {ops:?}");
    }
}

#[test]
fn state_dicts_load_into_ferrograd_layers() {
    #[derive(Module)]
    struct Layers {
        linear: Linear,
        conv: Conv2d,
        bn: BatchNorm,
    }
    let sd = torch_load_state_dict(fixture("checkpoint.pt")).unwrap();
    let layers: std::collections::BTreeMap<String, Tensor> =
        sd.into_iter().filter_map(|(k, v)| Some((k.strip_prefix("layers.")?.to_string(), v))).collect();
    let m = Layers { linear: Linear::new(3, 2, true), conv: Conv2d::new(1, 2, 3), bn: BatchNorm::new(2) };
    load_state_dict(&m, layers.clone()).unwrap();
    let x = Tensor::from_vec(vec![1.0f32, -2.0, 0.5], [1, 3]);
    let want = x.matmul(&layers["linear.weight"].t()) + &layers["linear.bias"];
    assert_eq!(m.linear.forward(&x).to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
}

#[test]
fn a_pickle_that_names_a_function_is_refused() {
    let err = torch_load(fixture("hostile.pt")).expect_err("refused").to_string();
    // (Protocol 2 names Python 3's builtins by their Python 2 module.)
    assert!(err.contains("__builtin__.print") && err.contains("hostile.pt"), "{err}");
}

/// The archive with its data.pkl replaced.
fn with_pickle(pickle: &[u8]) -> Vec<u8> {
    rezip(Some(pickle), zip::CompressionMethod::Stored)
}

/// The checkpoint archive written again with `method`, its data.pkl replaced when given.
fn rezip(pickle: Option<&[u8]>, method: zip::CompressionMethod) -> Vec<u8> {
    let mut src = zip::ZipArchive::new(std::fs::File::open(fixture("checkpoint.pt")).unwrap()).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(method);
    for i in 0..src.len() {
        let mut e = src.by_index(i).unwrap();
        let name = e.name().unwrap().to_string();
        let mut bytes = Vec::new();
        e.read_to_end(&mut bytes).unwrap();
        out.start_file(name.clone(), opts).unwrap();
        out.write_all(match pickle {
            Some(p) if name.ends_with("data.pkl") => p,
            _ => &bytes,
        })
        .unwrap();
    }
    out.finish().unwrap().into_inner()
}

#[test]
fn deflated_archives_read_the_same() {
    // torch.save stores entries uncompressed (read straight from a memory map); a re-packed,
    // deflated archive is decompressed instead, with the same values.
    let p = std::env::temp_dir().join(format!("ferrograd-torch-deflated-{}.pt", std::process::id()));
    std::fs::write(&p, rezip(None, zip::CompressionMethod::Deflated)).unwrap();
    let (a, b) = (torch_load_state_dict(fixture("checkpoint.pt")).unwrap(), torch_load_state_dict(&p).unwrap());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, t) in &a {
        assert_eq!(t.to_bytes().unwrap(), b[k].to_bytes().unwrap(), "{k}");
    }
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn corrupt_checkpoints_are_errors() {
    let dir = std::env::temp_dir().join(format!("ferrograd-torch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = std::fs::read(fixture("checkpoint.pt")).unwrap();
    let p = dir.join("bad.pt");
    std::fs::write(&p, &file[..file.len() / 2]).unwrap();
    assert!(torch_load(&p).is_err(), "a truncated archive");
    std::fs::write(&p, b"not a zip at all").unwrap();
    assert!(torch_load(&p).unwrap_err().to_string().contains("not a PyTorch checkpoint"));
    let mut src = zip::ZipArchive::new(std::fs::File::open(fixture("checkpoint.pt")).unwrap()).unwrap();
    let mut pickle = Vec::new();
    src.by_name("checkpoint/data.pkl").unwrap().read_to_end(&mut pickle).unwrap();
    // Random corruption of the pickle: an Err or a value, never a panic or a hang.
    let mut rng = common::Rng::new(7);
    let mut errors = 0;
    for round in 0..400 {
        let b = rng.corrupt(&pickle, 1 + round % 3, round % 9 == 0);
        std::fs::write(&p, with_pickle(&b)).unwrap();
        let outcome = std::panic::catch_unwind(|| match torch_load(&p) {
            Ok(v) => {
                // Whatever it read must realize without reading out of bounds.
                for t in v.state_dict().values() {
                    let _ = t.to_bytes();
                }
                false
            }
            Err(_) => true,
        });
        errors += outcome.unwrap_or_else(|_| panic!("round {round}: a corrupt pickle panicked")) as usize;
    }
    assert!(errors > 100, "most corruptions are caught: {errors} of 400");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Random corruption and truncation of a legacy-format file (pickles, then raw storages): an
/// Err or a value, never a panic.
#[test]
fn corrupt_legacy_checkpoints_are_errors() {
    let dir = std::env::temp_dir().join(format!("ferrograd-legacy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = std::fs::read(fixture("legacy.pt")).unwrap();
    let p = dir.join("bad.pt");
    let mut rng = common::Rng::new(8);
    let mut errors = 0;
    for round in 0..300 {
        std::fs::write(&p, rng.corrupt(&file, 1 + round % 3, round % 4 == 0)).unwrap();
        let outcome = std::panic::catch_unwind(|| match torch_load(&p) {
            Ok(v) => {
                for t in v.state_dict().values() {
                    let _ = t.to_bytes();
                }
                false
            }
            Err(e) => {
                assert!(e.to_string().contains("bad.pt"), "{e}");
                true
            }
        });
        errors += outcome.unwrap_or_else(|_| panic!("round {round}: a corrupt legacy file panicked")) as usize;
    }
    assert!(errors > 100, "most corruptions are caught: {errors} of 300");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[path = "../examples/shared/mnist_model.rs"]
#[allow(dead_code)] // its training step is for the training examples
mod mnist_model;

/// beautiful_mnist's model trained 20 steps in PyTorch (`bench/mnist_torch.py` with SAVE): its
/// checkpoint, loaded into ferrograd's model, classifies the 10,000 test images as PyTorch did.
#[test]
fn a_model_trained_in_pytorch_evaluates_the_same() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/mnist");
    if !ferrograd::nn::datasets::missing_mnist_files(&dir).is_empty() {
        println!("skipping: MNIST files not found in {}", dir.display());
        return;
    }
    let info: Value = serde_json::from_str(&std::fs::read_to_string(fixture("mnist.pt.json")).unwrap()).unwrap();
    let model = mnist_model::Model::new();
    load_state_dict(&model, torch_load_state_dict(fixture("mnist.pt")).unwrap()).unwrap();
    let (_, _, x_test, y_test) = ferrograd::nn::datasets::mnist_from(&dir).unwrap();
    let pred = model.forward(&x_test).argmax_axis(1);
    let acc = pred.eq(y_test.cast(pred.dtype())).cast(DType::F32).mean().item::<f32>().unwrap() as f64 * 100.0;
    let want = info["test_accuracy"].as_f64().unwrap();
    println!("test accuracy: ferrograd {acc:.2}%, PyTorch {want:.2}%");
    assert!((acc - want).abs() <= 0.03, "ferrograd {acc}% against PyTorch's {want}% on the same weights");
}
