//! The functional transforms against torch.func in float64 (`scripts/func_fixture.py` wrote
//! `tests/fixtures/func.json`): grad, vjp, jvp, jacrev, jacfwd, hessian and vmap(grad) over
//! elementwise ops, movement ops, reductions, matmul and convolution.

use ferrograd::func::{grad, hessian, jacfwd, jacrev, jvp, vjp, vmap};
use ferrograd::tensor::{ConvOpts, PoolOpts};
use ferrograd::{DType, Tensor};
use serde_json::Value;

fn cases() -> Value {
    let fx: Value = serde_json::from_str(include_str!("fixtures/func.json")).unwrap();
    fx["cases"].clone()
}

fn tensor(v: &Value) -> Tensor {
    let shape: Vec<usize> = v["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let data: Vec<f64> = v["data"].as_array().unwrap().iter().map(|d| d.as_f64().unwrap()).collect();
    Tensor::from_vec(data, shape)
}

fn check(got: &Tensor, want: &Value, what: &str) {
    let w = tensor(want);
    assert_eq!(got.shape(), w.shape(), "{what}: shape");
    let (g, w) = (got.cast(DType::F64).to_vec::<f64>().unwrap(), w.to_vec::<f64>().unwrap());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!((a - b).abs() <= 1e-10 * (1.0 + b.abs()), "{what}: element {i}: ferrograd {a}, torch.func {b}");
    }
}

fn mlp(a: &[Tensor]) -> Vec<Tensor> {
    let (x, w) = (&a[0], &a[1]);
    let h = x.matmul(w).tanh() * (x * x).neg().exp().sum_keepdim(1);
    vec![h.sum() + w.pow(3.0).sum()]
}

fn movement(a: &[Tensor]) -> Vec<Tensor> {
    let x = &a[0];
    let p = x.pad(&[(0, 1), (1, 2)]).flip([0]).permute([1, 0]);
    vec![(p.shrink(&[(1, 4), (0, 4)]).unsqueeze(0).expand([2, 3, 4]) * x.sum()).sin()]
}

fn conv(a: &[Tensor]) -> Vec<Tensor> {
    let y = a[0].conv2d(&a[1], None, &ConvOpts::default().padding(1)).sigmoid();
    vec![y.avg_pool2d(2, &PoolOpts::default())]
}

fn softmax_attn(a: &[Tensor]) -> Vec<Tensor> {
    vec![(a[0].matmul(&a[1].t()) / 2.0).log_softmax(-1)]
}

fn scalar(a: &[Tensor]) -> Vec<Tensor> {
    vec![(a[0].sin() * a[0].cumsum(0)).logsumexp(0)]
}

#[test]
fn grad_of_elementwise_reduce_and_matmul() {
    let c = &cases()["grad_mlp"];
    let g = grad(mlp, &[])(&[tensor(&c["x"]), tensor(&c["w"])]);
    check(&g[0], &c["gx"], "grad x");
    check(&g[1], &c["gw"], "grad w");
}

#[test]
fn vjp_and_jvp_of_movement_ops() {
    let c = &cases()["vjp_movement"];
    let (out, pull) = vjp(movement, &[tensor(&c["x"])]);
    check(&out[0], &c["out"], "movement result");
    check(&pull(&[tensor(&c["u"])])[0], &c["vjp"], "vjp");
    let c = &cases()["jvp_movement"];
    check(&jvp(movement, &[tensor(&c["x"])], &[tensor(&c["t"])]).1[0], &c["jvp"], "jvp");
}

#[test]
fn vjp_and_jvp_of_a_convolution() {
    let c = &cases()["conv"];
    let args = [tensor(&c["img"]), tensor(&c["k"])];
    let (out, pull) = vjp(conv, &args);
    check(&out[0], &c["out"], "conv result");
    let cot = pull(&[tensor(&c["u"])]);
    check(&cot[0], &c["vjp_img"], "vjp image");
    check(&cot[1], &c["vjp_k"], "vjp kernel");
    check(&jvp(conv, &args, &[tensor(&c["t_img"]), tensor(&c["t_k"])]).1[0], &c["jvp"], "jvp");
}

#[test]
fn jacobians_and_hessian() {
    let c = &cases()["jacobians_attn"];
    let args = [tensor(&c["q"]), tensor(&c["k"])];
    check(&jacrev(softmax_attn, 0)(&args)[0], &c["jacrev"], "jacrev");
    check(&jacfwd(softmax_attn, 1)(&args)[0], &c["jacfwd"], "jacfwd");
    let c = &cases()["hessian"];
    check(&hessian(scalar, 0)(&[tensor(&c["x"])])[0], &c["hessian"], "hessian");
}

#[test]
fn per_example_gradients() {
    let c = &cases()["per_example"];
    let y: Vec<i64> = c["y"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    let n = y.len();
    let loss = |a: &[Tensor]| vec![a[1].matmul(&a[0]).unsqueeze(0).cross_entropy(&a[2].unsqueeze(0))];
    let g = vmap(grad(loss, &[0]), &[None, Some(0), Some(0)], &[])(&[
        tensor(&c["w"]),
        tensor(&c["x"]),
        Tensor::from_vec(y, [n]),
    ]);
    check(&g[0], &c["grads"], "vmap(grad)");
}
