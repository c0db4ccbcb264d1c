//! The nn layers against PyTorch (fixture: scripts/nn_fixture.py → tests/fixtures/nn.json):
//! for each case the layer's state dict has PyTorch's names, shapes and dtypes (and the same
//! entries are parameters), PyTorch's values load into it, and the forward, the gradients of
//! `sum_k (out_k * w_k).sum()` with respect to the inputs and the parameters, and (BatchNorm in
//! training mode) the running statistics match to 1e-5 absolute + 1e-4 relative. Then the
//! initialization statistics of the layers and Dropout's train/eval behaviour.

use ferrograd::nn::{
    get_parameters, load_state_dict, state_dict, BatchNorm, Conv1d, Conv2d, ConvTranspose2d, Dropout, Embedding,
    GroupNorm, InstanceNorm, LSTMCell, LayerNorm, Linear, Module, RMSNorm,
};
use ferrograd::tensor::train;
use ferrograd::Tensor;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::OnceLock;

const ATOL: f64 = 1e-5;
const RTOL: f64 = 1e-4;

fn fixture(name: &str) -> &'static Value {
    static FX: OnceLock<Value> = OnceLock::new();
    let fx = FX.get_or_init(|| serde_json::from_str(include_str!("fixtures/nn.json")).expect("nn.json"));
    let case = &fx[name];
    assert!(case.is_object(), "no case `{name}` in tests/fixtures/nn.json (rerun scripts/nn_fixture.py)");
    case
}

fn dims(e: &Value) -> Vec<usize> {
    e["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect()
}

fn values(e: &Value) -> Vec<f64> {
    e["data"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

/// A fixture entry `{shape, dtype, data}` as a tensor.
fn tensor(e: &Value) -> Tensor {
    match e["dtype"].as_str().unwrap() {
        "float32" => Tensor::from_vec(values(e).iter().map(|&v| v as f32).collect::<Vec<_>>(), dims(e)),
        "int64" => {
            Tensor::from_vec(e["data"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect(), dims(e))
        }
        d => panic!("fixture dtype {d}"),
    }
}

/// `got` has `want`'s shape and dtype, and its values within `ATOL + RTOL * |want|`.
fn close(what: &str, got: &Tensor, want: &Value) {
    assert_eq!(got.shape(), dims(want), "{what}: shape");
    assert_eq!(got.dtype().name(), want["dtype"].as_str().unwrap(), "{what}: dtype");
    let got = got.to_f64_vec().unwrap_or_else(|e| panic!("{what}: realizing: {e}"));
    for (i, (g, w)) in got.iter().zip(values(want)).enumerate() {
        assert!((g - w).abs() <= ATOL + RTOL * w.abs(), "{what}[{i}]: got {g}, want {w}");
    }
}

fn cfg_u(c: &Value, k: &str) -> usize {
    c["config"][k].as_u64().unwrap_or_else(|| panic!("config `{k}`")) as usize
}
fn cfg_f(c: &Value, k: &str) -> f64 {
    c["config"][k].as_f64().unwrap_or_else(|| panic!("config `{k}`"))
}
fn cfg_b(c: &Value, k: &str) -> bool {
    c["config"][k].as_bool().unwrap_or_else(|| panic!("config `{k}`"))
}

/// The state dict's layout: name → (shape, dtype, is a parameter).
type Layout = Vec<(String, Vec<usize>, String, bool)>;

fn layout(m: &impl Module) -> Layout {
    state_dict(m).into_iter().map(|(k, t)| (k, t.shape(), t.dtype().name().to_string(), t.is_requires_grad())).collect()
}

fn fixture_layout(c: &Value) -> Layout {
    let params: Vec<&str> = c["params"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    let mut out: Layout = c["state"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, e)| (k.clone(), dims(e), e["dtype"].as_str().unwrap().to_string(), params.contains(&k.as_str())))
        .collect();
    out.sort();
    out
}

/// Every entry of the module's state dict equals the fixture's `state` entry of the same name.
fn check_state(what: &str, m: &impl Module, want: &Value) {
    let sd = state_dict(m);
    let names: Vec<&String> = sd.keys().collect();
    let want_names: Vec<&String> = want.as_object().unwrap().keys().collect();
    assert_eq!(names, want_names, "{what}: state dict names");
    for (k, t) in &sd {
        close(&format!("{what}: `{k}`"), t, &want[k]);
    }
}

/// Checks `m`'s state dict layout against the case, loads PyTorch's values, runs `fwd` (in
/// training mode if the case says so) and compares outputs, running statistics and gradients.
fn check_case<M: Module>(name: &str, m: &M, fwd: impl Fn(&M, &[Tensor]) -> Vec<Tensor>) {
    let c = fixture(name);
    assert_eq!(layout(m), fixture_layout(c), "{name}: state dict layout (name, shape, dtype, is parameter)");
    assert_eq!(get_parameters(m).len(), c["params"].as_array().unwrap().len(), "{name}: parameter count");

    let dict: BTreeMap<String, Tensor> =
        c["state"].as_object().unwrap().iter().map(|(k, e)| (k.clone(), tensor(e))).collect();
    load_state_dict(m, dict).unwrap_or_else(|e| panic!("{name}: load_state_dict: {e}"));
    check_state(&format!("{name} loaded"), m, &c["state"]);

    let inputs: Vec<Tensor> = c["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let t = tensor(e);
            if t.dtype().is_float() {
                t.requires_grad()
            } else {
                t
            }
        })
        .collect();
    let training = c["train"].as_bool().unwrap();
    let outs = if training { train(|| fwd(m, &inputs)) } else { fwd(m, &inputs) };
    // Backward before reading anything: realizing a tensor makes it stand for its buffer, which
    // cuts it off from the autograd graph (reading the outputs first leaves every grad `None`).
    let loss =
        outs.iter().zip(c["w"].as_array().unwrap()).map(|(o, w)| o.mul(tensor(w)).sum()).reduce(|a, b| a + b).unwrap();
    loss.backward();
    let want_outs = c["outputs"].as_array().unwrap();
    assert_eq!(outs.len(), want_outs.len(), "{name}: number of outputs");
    for (i, (o, w)) in outs.iter().zip(want_outs).enumerate() {
        close(&format!("{name}: output {i}"), o, w);
    }
    // The outputs are realized: BatchNorm's running statistics have been updated with them.
    match c.get("state_after") {
        Some(after) => check_state(&format!("{name} after one forward"), m, after),
        None => check_state(&format!("{name} unchanged by the forward"), m, &c["state"]),
    }
    for (i, (x, g)) in inputs.iter().zip(c["input_grads"].as_array().unwrap()).enumerate() {
        match x.grad() {
            Some(got) => close(&format!("{name}: grad of input {i}"), &got, g),
            None => assert!(g.is_null(), "{name}: input {i} got no gradient"),
        }
    }
    let sd = state_dict(m);
    for (k, t) in &sd {
        match (t.grad(), c["param_grads"].get(k)) {
            (Some(got), Some(want)) => close(&format!("{name}: grad of `{k}`"), &got, want),
            (None, None) => {}
            (got, want) => panic!("{name}: `{k}` has gradient {} but PyTorch's {}", got.is_some(), want.is_some()),
        }
    }

    if let Some(after2) = c.get("state_after2") {
        let y = train(|| fwd(m, &[tensor(&c["second_input"])]));
        y[0].realize().unwrap();
        check_state(&format!("{name} after a second forward"), m, after2);
    }
}

// ---------------------------------------------------------------- linear and conv

fn linear(name: &str) {
    let c = fixture(name);
    let m = Linear::new(cfg_u(c, "in_features"), cfg_u(c, "out_features"), cfg_b(c, "bias"));
    check_case(name, &m, |m, x| vec![m.forward(&x[0])]);
}

#[test]
fn linear_with_bias() {
    linear("linear_bias");
}
#[test]
fn linear_on_a_1d_input() {
    linear("linear_1d_input");
}
#[test]
fn linear_without_bias() {
    linear("linear_nobias");
}

#[test]
fn conv1d() {
    let c = fixture("conv1d");
    let u = |k| cfg_u(c, k);
    let m = Conv1d::with(
        u("cin"),
        u("cout"),
        u("k"),
        u("stride"),
        u("padding"),
        u("dilation"),
        u("groups"),
        cfg_b(c, "bias"),
    );
    check_case("conv1d", &m, |m, x| vec![m.forward(&x[0])]);
}

fn conv2d(name: &str) {
    let c = fixture(name);
    let u = |k| cfg_u(c, k);
    let m = Conv2d::with(
        u("cin"),
        u("cout"),
        u("k"),
        u("stride"),
        u("padding"),
        u("dilation"),
        u("groups"),
        cfg_b(c, "bias"),
    );
    check_case(name, &m, |m, x| vec![m.forward(&x[0])]);
}

#[test]
fn conv2d_basic() {
    conv2d("conv2d_basic");
}
#[test]
fn conv2d_stride_padding_no_bias() {
    conv2d("conv2d_stride_pad");
}
#[test]
fn conv2d_dilation_groups() {
    conv2d("conv2d_dilation_groups");
}

fn conv_transpose2d(name: &str) {
    let c = fixture(name);
    let u = |k| cfg_u(c, k);
    let m = ConvTranspose2d::with(
        u("cin"),
        u("cout"),
        u("k"),
        u("stride"),
        u("padding"),
        u("output_padding"),
        u("groups"),
        cfg_b(c, "bias"),
    );
    check_case(name, &m, |m, x| vec![m.forward(&x[0])]);
}

#[test]
fn conv_transpose2d_stride_padding_output_padding() {
    conv_transpose2d("conv_transpose2d");
}
#[test]
fn conv_transpose2d_groups() {
    conv_transpose2d("conv_transpose2d_groups");
}

// ---------------------------------------------------------------- normalization

fn batchnorm(name: &str) {
    let c = fixture(name);
    let m = BatchNorm::with(
        cfg_u(c, "num_features"),
        cfg_f(c, "eps"),
        cfg_f(c, "momentum"),
        cfg_b(c, "affine"),
        cfg_b(c, "track"),
    );
    check_case(name, &m, |m, x| vec![m.forward(&x[0])]);
}

#[test]
fn batchnorm2d_training_updates_running_stats() {
    batchnorm("batchnorm2d_train");
}
#[test]
fn batchnorm2d_eval_uses_running_stats() {
    batchnorm("batchnorm2d_eval");
}
#[test]
fn batchnorm1d_training_on_n_c() {
    batchnorm("batchnorm1d_train");
}
#[test]
fn batchnorm1d_training_on_n_c_l_without_affine() {
    batchnorm("batchnorm1d_ncl_noaffine_train");
}
#[test]
fn batchnorm2d_without_running_stats_uses_batch_stats_in_eval() {
    batchnorm("batchnorm2d_no_stats_eval");
}

/// Reading the gradients first (before the output) also runs the pending running-stat update,
/// exactly once.
#[test]
fn batchnorm_running_stats_update_once_when_only_gradients_are_read() {
    let c = fixture("batchnorm2d_train");
    let m = BatchNorm::with(cfg_u(c, "num_features"), cfg_f(c, "eps"), cfg_f(c, "momentum"), true, true);
    let dict = c["state"].as_object().unwrap().iter().map(|(k, e)| (k.clone(), tensor(e))).collect();
    load_state_dict(&m, dict).unwrap();
    let x = tensor(&c["inputs"][0]).requires_grad();
    let y = train(|| m.forward(&x));
    y.mul(tensor(&c["w"][0])).sum().backward();
    close("grad of input", &x.grad().unwrap(), &c["input_grads"][0]);
    close("grad of weight", &m.weight.as_ref().unwrap().grad().unwrap(), &c["param_grads"]["weight"]);
    close("output", &y, &c["outputs"][0]);
    check_state("after one forward", &m, &c["state_after"]);
}

fn layernorm(name: &str) {
    let c = fixture(name);
    let shape: Vec<usize> =
        c["config"]["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let m = LayerNorm::with(shape, cfg_f(c, "eps"), cfg_b(c, "affine"));
    check_case(name, &m, |m, x| vec![m.forward(&x[0])]);
}

#[test]
fn layernorm_last_dim() {
    layernorm("layernorm_1d");
}
#[test]
fn layernorm_last_two_dims() {
    layernorm("layernorm_2d");
}
#[test]
fn layernorm_without_affine() {
    layernorm("layernorm_noaffine");
}

fn groupnorm(name: &str) {
    let c = fixture(name);
    let m = GroupNorm::with(cfg_u(c, "num_groups"), cfg_u(c, "num_channels"), cfg_f(c, "eps"), cfg_b(c, "affine"));
    check_case(name, &m, |m, x| vec![m.forward(&x[0])]);
}

#[test]
fn groupnorm_affine() {
    groupnorm("groupnorm");
}
#[test]
fn groupnorm_on_n_c_l_without_affine() {
    groupnorm("groupnorm_ncl_noaffine");
}

fn instancenorm(name: &str) {
    let c = fixture(name);
    let m = InstanceNorm::with(cfg_u(c, "num_features"), cfg_f(c, "eps"), cfg_b(c, "affine"));
    check_case(name, &m, |m, x| vec![m.forward(&x[0])]);
}

#[test]
fn instancenorm2d_plain() {
    instancenorm("instancenorm2d");
    // `new` is PyTorch's default: no affine transform, no state.
    assert!(state_dict(&InstanceNorm::new(3)).is_empty());
}
#[test]
fn instancenorm2d_affine() {
    instancenorm("instancenorm2d_affine");
}
#[test]
fn instancenorm1d_affine() {
    instancenorm("instancenorm1d_affine");
}

/// Without an eps in the config, `RMSNorm::new` (PyTorch's `eps=None`: float32's epsilon).
fn rmsnorm(name: &str) {
    let c = fixture(name);
    let m = match c["config"].get("eps") {
        Some(_) => RMSNorm::with(cfg_u(c, "dim"), cfg_f(c, "eps")),
        None => RMSNorm::new(cfg_u(c, "dim")),
    };
    check_case(name, &m, |m, x| vec![m.forward(&x[0])]);
}

#[test]
fn rmsnorm_given_eps() {
    rmsnorm("rmsnorm");
}
#[test]
fn rmsnorm_default_eps_is_f32_epsilon() {
    rmsnorm("rmsnorm_default_eps");
}

// ---------------------------------------------------------------- embedding, LSTM

#[test]
fn embedding() {
    let c = fixture("embedding");
    let m = Embedding::new(cfg_u(c, "num_embeddings"), cfg_u(c, "dim"));
    check_case("embedding", &m, |m, x| vec![m.forward(&x[0])]);
}

fn lstm(name: &str) {
    let c = fixture(name);
    let m = LSTMCell::new(cfg_u(c, "input_size"), cfg_u(c, "hidden_size"), cfg_b(c, "bias"));
    check_case(name, &m, |m, x| {
        let hc = if x.len() == 3 { Some((&x[1], &x[2])) } else { None };
        let (h, c) = m.forward(&x[0], hc);
        vec![h, c]
    });
}

#[test]
fn lstmcell_step_from_zeros() {
    lstm("lstmcell_zeros");
}
#[test]
fn lstmcell_step_from_given_state() {
    lstm("lstmcell_state");
}
#[test]
fn lstmcell_without_bias() {
    lstm("lstmcell_nobias");
}

// ---------------------------------------------------------------- initialization

/// Values of a `U(-bound, bound)` draw: all within the bound, reaching near both ends, mean
/// about 0, variance about bound²/3, and about a quarter in each quarter of the range.
fn check_uniform(what: &str, t: &Tensor, bound: f64) {
    let v = t.to_f64_vec().unwrap();
    let n = v.len() as f64;
    assert!(v.iter().all(|x| x.abs() <= bound), "{what}: a value outside ±{bound}");
    let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    assert!(lo < -0.9 * bound && hi > 0.9 * bound, "{what}: range [{lo}, {hi}] does not span ±{bound}");
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    // Standard error of the mean is bound / sqrt(3 n): allow about 5 of them.
    assert!(mean.abs() < 3.0 * bound / n.sqrt(), "{what}: mean {mean} for bound {bound}");
    let want_var = bound * bound / 3.0;
    assert!((var / want_var - 1.0).abs() < 0.15, "{what}: variance {var}, want about {want_var}");
    for q in 0..4 {
        let (a, b) = (-bound + q as f64 * bound / 2.0, -bound + (q + 1) as f64 * bound / 2.0);
        let frac = v.iter().filter(|&&x| x >= a && x < b).count() as f64 / n;
        assert!((frac - 0.25).abs() < 5.0 * (0.1875 / n).sqrt() + 0.01, "{what}: {frac} of the values in [{a}, {b})");
    }
}

#[test]
fn linear_init_is_uniform_within_one_over_sqrt_fan_in() {
    Tensor::manual_seed(11);
    let m = Linear::new(64, 48, true);
    let b = 1.0 / 64f64.sqrt();
    check_uniform("Linear weight", &m.weight, b);
    let bias = m.bias.as_ref().unwrap().to_f64_vec().unwrap();
    assert!(bias.iter().all(|x| x.abs() <= b) && bias.iter().any(|&x| x != bias[0]), "Linear bias {bias:?}");
    assert!(m.weight.is_requires_grad() && m.bias.as_ref().unwrap().is_requires_grad());
    // A second layer draws different numbers.
    let other = Linear::new(64, 48, true);
    assert_ne!(other.weight.to_vec::<f32>().unwrap(), m.weight.to_vec::<f32>().unwrap());
}

#[test]
fn conv_init_is_uniform_within_one_over_sqrt_fan_in() {
    Tensor::manual_seed(12);
    // fan in = in / groups * kernel area = 8 * 9.
    let m = Conv2d::with(16, 32, 3, 1, 0, 1, 2, true);
    assert_eq!(m.weight.shape(), vec![32, 8, 3, 3]);
    let b = 1.0 / 72f64.sqrt();
    check_uniform("Conv2d weight", &m.weight, b);
    assert!(m.bias.as_ref().unwrap().to_f64_vec().unwrap().iter().all(|x| x.abs() <= b));
    let m = Conv1d::with(12, 64, 5, 1, 0, 1, 1, true);
    check_uniform("Conv1d weight", &m.weight, 1.0 / 60f64.sqrt());
    // ConvTranspose2d: PyTorch's fan in is weight.size(1) * kernel area = out / groups * 9.
    let m = ConvTranspose2d::with(16, 24, 3, 2, 0, 0, 2, true);
    assert_eq!(m.weight.shape(), vec![16, 12, 3, 3]);
    check_uniform("ConvTranspose2d weight", &m.weight, 1.0 / 108f64.sqrt());
    let m = LSTMCell::new(10, 16, true);
    check_uniform("LSTMCell weight_ih", &m.weight_ih, 0.25);
    check_uniform("LSTMCell weight_hh", &m.weight_hh, 0.25);
}

#[test]
fn norm_layers_start_at_pytorch_defaults_and_embedding_is_standard_normal() {
    let bn = BatchNorm::new(4);
    let vals = |t: &Option<Tensor>| t.as_ref().unwrap().to_f64_vec().unwrap();
    assert_eq!(vals(&bn.weight), vec![1.0; 4]);
    assert_eq!(vals(&bn.bias), vec![0.0; 4]);
    assert_eq!(vals(&bn.running_mean), vec![0.0; 4]);
    assert_eq!(vals(&bn.running_var), vec![1.0; 4]);
    assert_eq!(vals(&bn.num_batches_tracked), vec![0.0]);
    assert_eq!((bn.eps, bn.momentum), (1e-5, 0.1));
    let ln = LayerNorm::new(vec![3, 2]);
    assert_eq!(vals(&ln.weight), vec![1.0; 6]);
    assert_eq!(RMSNorm::new(5).weight.to_f64_vec().unwrap(), vec![1.0; 5]);
    let gn = GroupNorm::new(2, 4);
    assert_eq!((vals(&gn.weight), vals(&gn.bias)), (vec![1.0; 4], vec![0.0; 4]));

    Tensor::manual_seed(13);
    let v = Embedding::new(100, 40).weight.to_f64_vec().unwrap();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    assert!(mean.abs() < 0.08 && (var - 1.0).abs() < 0.1, "Embedding weight mean {mean}, variance {var}");
}

// ---------------------------------------------------------------- dropout

#[test]
fn dropout_is_identity_outside_training() {
    let x = Tensor::from_vec((0..1000).map(|i| i as f32 * 0.01 - 3.0).collect::<Vec<_>>(), [10, 100]);
    let d = Dropout::new(0.5);
    assert!(!Tensor::training());
    assert_eq!(d.forward(&x).to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    assert!(state_dict(&d).is_empty());
}

#[test]
fn dropout_zeroes_about_p_in_training_and_scales_the_rest() {
    Tensor::manual_seed(14);
    let n = 20_000;
    let x = Tensor::ones([100, 200]);
    for p in [0.1, 0.25, 0.5] {
        let d = Dropout::new(p);
        let (a, b) = train(|| {
            assert!(Tensor::training());
            (d.forward(&x).to_vec::<f32>().unwrap(), d.forward(&x).to_vec::<f32>().unwrap())
        });
        assert!(!Tensor::training(), "train() restores eval mode");
        let zeros = a.iter().filter(|&&v| v == 0.0).count() as f64 / n as f64;
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        assert!((zeros - p).abs() < 5.0 * sd, "p = {p}: {zeros} of the values zeroed");
        let keep = 1.0 / (1.0 - p) as f32;
        assert!(a.iter().all(|&v| v == 0.0 || (v - keep).abs() < 1e-6), "p = {p}: kept values are not 1/(1-p)");
        assert_ne!(a, b, "p = {p}: two calls drew the same mask");
    }
    // The gradient flows through the kept values only, scaled like them.
    let x = Tensor::ones([50, 40]).requires_grad();
    let y = train(|| Dropout::new(0.5).forward(&x));
    y.sum().backward();
    let (y, g) = (y.to_vec::<f32>().unwrap(), x.grad().unwrap().to_vec::<f32>().unwrap());
    assert_eq!(g, y, "gradient of dropout(ones).sum() is the mask / (1 - p)");
    let x = Tensor::from_vec(vec![1.0f32, -2.0, 3.0], [3]);
    let (zero, one) = train(|| (Dropout::new(0.0).forward(&x), Dropout::new(1.0).forward(&x)));
    assert_eq!(zero.to_vec::<f32>().unwrap(), vec![1.0, -2.0, 3.0]);
    assert_eq!(one.to_vec::<f32>().unwrap(), vec![0.0; 3]);
}
