//! load_state_dict: values written in place, every problem reported at once, strict and
//! non-strict modes, dtype conversion within a kind, and a save/load round trip through
//! safetensors.

use ferrograd::nn::{get_state_dict, load_state_dict, load_state_dict_with, safe_load, safe_save, Module};
use ferrograd::{DType, Error, Tensor};
use std::collections::BTreeMap;

#[derive(Module)]
struct Linear {
    weight: Tensor,
    bias: Tensor,
}

#[derive(Module)]
struct Net {
    layers: Vec<Linear>,
    steps: Tensor,
}

fn net() -> Net {
    let lin = || Linear { weight: Tensor::zeros([2, 3]).requires_grad(), bias: Tensor::zeros([3]).requires_grad() };
    Net { layers: vec![lin(), lin()], steps: Tensor::from_vec(vec![0i32], [1]) }
}

fn f32s(v: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape.to_vec())
}

fn full_dict() -> BTreeMap<String, Tensor> {
    let mut d = BTreeMap::new();
    for l in 0..2 {
        let w: Vec<f32> = (0..6).map(|i| (10 * l + i) as f32).collect();
        d.insert(format!("layers.{l}.weight"), f32s(&w, &[2, 3]));
        d.insert(format!("layers.{l}.bias"), f32s(&[0.5, -0.5, l as f32], &[3]));
    }
    d.insert("steps".into(), Tensor::from_vec(vec![7i32], [1]));
    d
}

#[test]
fn loads_values_in_place() {
    // A model whose tensors have buffers; keep a handle and a lazy view of one of them: both
    // must see the loaded values, because they are written into the existing buffer.
    let lin = || Linear { weight: f32s(&[0.0; 6], &[2, 3]), bias: f32s(&[0.0; 3], &[3]).requires_grad() };
    let model = Net { layers: vec![lin(), lin()], steps: Tensor::from_vec(vec![0i32], [1]) };
    let old_buffer_view = model.layers[0].bias.uop();
    let handle = model.layers[1].weight.clone();
    let view = model.layers[1].weight.reshape([6]);
    load_state_dict(&model, full_dict()).unwrap();
    assert_eq!(handle.to_vec::<f32>().unwrap(), vec![10.0, 11.0, 12.0, 13.0, 14.0, 15.0]);
    assert_eq!(view.to_vec::<f32>().unwrap(), vec![10.0, 11.0, 12.0, 13.0, 14.0, 15.0]);
    assert_eq!(model.layers[0].bias.to_vec::<f32>().unwrap(), vec![0.5, -0.5, 0.0]);
    assert_eq!(model.steps.to_vec::<i32>().unwrap(), vec![7]);
    // The very same buffer holds the new values.
    assert_eq!(Tensor::from_uop(old_buffer_view).to_vec::<f32>().unwrap(), vec![0.5, -0.5, 0.0]);
    // Still parameters, and still usable for training.
    assert!(model.layers[0].bias.is_requires_grad());
}

#[test]
fn loading_copies_instead_of_sharing_the_dicts_buffers() {
    // The model's tensors are lazy (never realized); after loading they must own their memory,
    // so changing the model later does not change the dict's tensors.
    let model = net();
    let dict = full_dict();
    let src = dict["steps"].clone();
    load_state_dict(&model, dict).unwrap();
    model.steps.assign(Tensor::from_vec(vec![99i32], [1])).realize().unwrap();
    assert_eq!(model.steps.to_vec::<i32>().unwrap(), vec![99]);
    assert_eq!(src.to_vec::<i32>().unwrap(), vec![7]);
}

#[test]
fn a_buffer_reachable_from_elsewhere_is_copied_not_taken_over() {
    // A lazy model takes over the dict's buffers only when nothing else can reach them (as
    // for `safe_load`'s tensors); here other handles reach the same memory through another
    // handle on the same node and through a reshape.
    let model = net();
    let mut dict = full_dict();
    let bias = f32s(&[1.0, 2.0, 3.0], &[3]).realize().unwrap();
    let weight = f32s(&[1.0; 6], &[6]).realize().unwrap();
    dict.insert("layers.0.bias".into(), Tensor::from_uop(bias.uop()));
    dict.insert("layers.0.weight".into(), weight.reshape([2, 3]));
    load_state_dict(&model, dict).unwrap();
    model.layers[0].bias.assign(Tensor::full([3], 9.0)).realize().unwrap();
    model.layers[0].weight.assign(Tensor::full([2, 3], 9.0)).realize().unwrap();
    assert_eq!(bias.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
    assert_eq!(weight.to_vec::<f32>().unwrap(), vec![1.0; 6]);
    // Loaded from a file, the model owns the tensors outright and trains as usual.
    let path = std::env::temp_dir().join(format!("ferrograd-state-own-{}.safetensors", std::process::id()));
    safe_save(&full_dict(), &path).unwrap();
    let fresh = net();
    load_state_dict(&fresh, safe_load(&path).unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(fresh.layers[1].weight.is_requires_grad());
    fresh.layers[1].weight.sum().backward();
    assert_eq!(fresh.layers[1].weight.grad().unwrap().to_vec::<f32>().unwrap(), vec![1.0; 6]);
    fresh.layers[1].weight.assign(Tensor::full([2, 3], -1.0)).realize().unwrap();
    assert_eq!(fresh.layers[1].weight.to_vec::<f32>().unwrap(), vec![-1.0; 6]);
}

#[test]
fn every_problem_is_reported_in_one_error_and_nothing_changes() {
    let model = net();
    let mut d = full_dict();
    d.remove("layers.0.bias");
    d.remove("steps");
    d.insert("layers.2.weight".into(), f32s(&[1.0], &[1]));
    d.insert("layers.1.weight".into(), f32s(&[1.0; 6], &[3, 2]));
    d.insert("layers.1.bias".into(), Tensor::from_vec(vec![1i32, 2, 3], [3]));
    let e = load_state_dict(&model, d).unwrap_err();
    let Error::StateDict { missing, unexpected, mismatched } = &e else { panic!("wrong error: {e:?}") };
    assert_eq!(missing, &vec!["layers.0.bias".to_string(), "steps".to_string()]);
    assert_eq!(unexpected, &vec!["layers.2.weight".to_string()]);
    assert_eq!(mismatched.len(), 2);
    let msg = e.to_string();
    for needle in [
        "5 problems",
        "missing key `layers.0.bias`",
        "missing key `steps`",
        "unexpected key `layers.2.weight`",
        "`layers.1.weight`: shape mismatch: model has [2, 3], state dict has [3, 2]",
        "`layers.1.bias`: dtype mismatch: model has float32, state dict has int32",
    ] {
        assert!(msg.contains(needle), "missing {needle:?} in:\n{msg}");
    }
    // The good entries were not loaded either.
    assert_eq!(model.layers[0].weight.to_vec::<f32>().unwrap(), vec![0.0; 6]);
}

#[test]
fn non_strict_skips_missing_and_unexpected_keys_but_not_mismatches() {
    let model = net();
    let mut d = full_dict();
    d.remove("steps");
    d.insert("extra".into(), f32s(&[1.0], &[1]));
    load_state_dict_with(&model, d.clone(), false).unwrap();
    assert_eq!(model.layers[1].bias.to_vec::<f32>().unwrap(), vec![0.5, -0.5, 1.0]);
    assert_eq!(model.steps.to_vec::<i32>().unwrap(), vec![0]);
    assert!(load_state_dict(&model, d.clone()).is_err());

    d.insert("layers.0.bias".into(), f32s(&[1.0, 2.0], &[2]));
    let msg = load_state_dict_with(&model, d, false).unwrap_err().to_string();
    assert!(msg.contains("1 problem") && msg.contains("`layers.0.bias`: shape mismatch"), "{msg}");
    assert!(!msg.contains("extra") && !msg.contains("steps"), "{msg}");
}

#[test]
fn converts_within_a_kind_of_dtype() {
    let model = net();
    let mut d = full_dict();
    // f16 checkpoint values into an f32 model; int64 into int32.
    let h: Vec<half::f16> = [0.25f32, -1.5, 3.0].iter().map(|&x| half::f16::from_f32(x)).collect();
    d.insert("layers.0.bias".into(), Tensor::from_vec(h, [3]));
    d.insert("steps".into(), Tensor::from_vec(vec![123i64], [1]));
    load_state_dict(&model, d).unwrap();
    assert_eq!(model.layers[0].bias.dtype(), DType::F32);
    assert_eq!(model.layers[0].bias.to_vec::<f32>().unwrap(), vec![0.25, -1.5, 3.0]);
    assert_eq!(model.steps.dtype(), DType::I32);
    assert_eq!(model.steps.to_vec::<i32>().unwrap(), vec![123]);
}

#[test]
fn values_on_another_device_are_moved() {
    let model = net();
    let d: BTreeMap<String, Tensor> = full_dict().into_iter().map(|(k, v)| (k, v.to("INTERP"))).collect();
    load_state_dict(&model, d).unwrap();
    assert_eq!(model.layers[0].weight.device(), Tensor::zeros([1]).device());
    assert_eq!(model.layers[0].weight.to_vec::<f32>().unwrap(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
}

#[test]
fn round_trips_through_safetensors() {
    let trained = net();
    load_state_dict(&trained, full_dict()).unwrap();
    let path = std::env::temp_dir().join(format!("ferrograd-state-{}.safetensors", std::process::id()));
    safe_save(&get_state_dict(&trained), &path).unwrap();
    let fresh = net();
    let loaded = safe_load(&path);
    let _ = std::fs::remove_file(&path);
    load_state_dict(&fresh, loaded.unwrap()).unwrap();
    for (k, v) in get_state_dict(&trained) {
        assert_eq!(get_state_dict(&fresh)[&k].to_bytes().unwrap(), v.to_bytes().unwrap(), "{k}");
    }
}

#[test]
fn ignored_keys_are_dropped_by_name_or_pattern() {
    use ferrograd::nn::{load_state_dict_opts, LoadOptions};
    let mut d = full_dict();
    d.insert("layers.0.rotary_emb.inv_freq".into(), f32s(&[1.0], &[1]));
    d.insert("layers.1.rotary_emb.inv_freq".into(), f32s(&[1.0], &[1]));
    d.insert("lm_head.weight".into(), f32s(&[1.0], &[1]));
    let n = net();
    let err = load_state_dict(&n, d.clone()).unwrap_err().to_string();
    assert!(err.contains("inv_freq") && err.contains("lm_head"), "{err}");
    let ignore = vec!["*.rotary_emb.inv_freq".to_string(), "lm_head.weight".to_string()];
    load_state_dict_opts(&n, d, &LoadOptions { ignore, ..LoadOptions::default() }).unwrap();
    assert_eq!(n.steps.to_vec::<i32>().unwrap(), vec![7]);
    // A pattern matches whole names only: `layers.*.bias` does not drop `layers.0.weight`.
    let ignore = vec!["layers.*.bias".to_string()];
    let err = load_state_dict_opts(&net(), full_dict(), &LoadOptions { ignore, ..LoadOptions::default() });
    let err = err.unwrap_err().to_string();
    assert!(err.contains("layers.0.bias") && !err.contains("layers.0.weight"), "{err}");
}

/// `keep_stored`: a model built in `skip_init` takes 16-bit values as stored (a lazy cast of
/// the f16 buffer, no f32 copy); without it, the value is converted into an f32 buffer.
#[test]
fn keep_stored_installs_values_as_they_are_stored() {
    use ferrograd::nn::{load_state_dict_opts, LoadOptions};
    let half: BTreeMap<String, Tensor> = full_dict()
        .into_iter()
        .map(|(k, v)| if v.dtype() == DType::F32 { (k, v.cast(DType::F16).realize().unwrap()) } else { (k, v) })
        .collect();
    let bytes_read = ferrograd::nn::stored_bytes;
    let kept = ferrograd::nn::skip_init(net);
    let opts = LoadOptions { keep_stored: true, ..LoadOptions::default() };
    load_state_dict_opts(&kept, half.clone(), &opts).unwrap();
    let w = &kept.layers[1].weight;
    assert_eq!(w.dtype(), DType::F32);
    assert_eq!(bytes_read(w), 6 * 2, "the weight reads its f16 buffer");
    assert_eq!(w.to_vec::<f32>().unwrap(), (10..16).map(|i| i as f32).collect::<Vec<_>>());
    let converted = ferrograd::nn::skip_init(net);
    load_state_dict(&converted, half).unwrap();
    assert_eq!(bytes_read(&converted.layers[1].weight), 6 * 4, "converted into an f32 buffer");
}
