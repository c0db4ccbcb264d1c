//! `grad`, `value_and_grad`, `vjp`, `jvp`, `jacrev`, `jacfwd`, `hessian`: against finite
//! differences in f64, closed forms, each other, ordinary `backward`, and composed with `vmap`
//! and TinyJit.

mod common;
use common::Rng;
use ferrograd::func::{grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp, vmap};
use ferrograd::{DType, Tensor, TinyJit};

fn rand64(rng: &mut Rng, shape: &[usize]) -> Tensor {
    Tensor::from_vec(rng.vec(shape.iter().product(), -1.0, 1.0), shape.to_vec())
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.cast(DType::F64).to_vec::<f64>().unwrap()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}: element {i}: got {g}, want {w}");
    }
}

/// A smooth function of two arguments mixing elementwise ops, broadcasting, a reduce and a
/// matmul: `sum(tanh(x @ w) * exp(-x²).sum(1)) + sum(w³)`.
fn smooth(a: &[Tensor]) -> Vec<Tensor> {
    let (x, w) = (&a[0], &a[1]);
    let h = x.matmul(w).tanh() * x.square().neg().exp().sum_keepdim(1);
    vec![h.sum() + w.pow(3.0).sum()]
}

/// Central differences of `f`'s first result in f64, per element of argument `k`.
fn finite_differences(f: fn(&[Tensor]) -> Vec<Tensor>, args: &[Tensor], k: usize) -> Vec<f64> {
    let base = vals(&args[k]);
    let eps = 1e-6;
    (0..base.len())
        .map(|i| {
            let at = |d: f64| {
                let mut v = base.clone();
                v[i] += d;
                let mut a = args.to_vec();
                a[k] = Tensor::from_vec(v, args[k].shape());
                vals(&f(&a)[0])[0]
            };
            (at(eps) - at(-eps)) / (2.0 * eps)
        })
        .collect()
}

#[test]
fn grad_matches_finite_differences_and_backward() {
    let mut rng = Rng::new(1);
    let args = [rand64(&mut rng, &[3, 4]), rand64(&mut rng, &[4, 2])];
    let g = grad(smooth, &[])(&args);
    for (k, gk) in g.iter().enumerate() {
        assert_close(&vals(gk), &finite_differences(smooth, &args, k), 1e-6, &format!("grad of argument {k}"));
    }
    // The same as backward() on tensors that require grad.
    let (x, w) = (args[0].clone().requires_grad(), args[1].clone().requires_grad());
    smooth(&[x.clone(), w.clone()])[0].backward();
    assert_close(&vals(&g[0]), &vals(&x.grad().unwrap()), 1e-12, "grad vs backward");
    // argnums and value_and_grad.
    let only_w = grad(smooth, &[1])(&args);
    assert_eq!(only_w.len(), 1);
    assert_close(&vals(&only_w[0]), &vals(&g[1]), 0.0, "argnums [1]");
    let vg = value_and_grad(smooth, &[0])(&args);
    assert_close(&vals(&vg[0]), &vals(&smooth(&args)[0]), 0.0, "value");
    assert_close(&vals(&vg[1]), &vals(&g[0]), 0.0, "value_and_grad's gradient");
}

#[test]
fn second_derivatives_compose() {
    // d²/dx² of sum(sin(x) * x) = 2cos(x) - x sin(x), elementwise.
    let x = Tensor::from_vec(vec![-1.5f64, -0.2, 0.0, 0.7, 2.0], [5]);
    let f = |a: &[Tensor]| vec![(a[0].sin() * &a[0]).sum()];
    let df = |a: &[Tensor]| vec![grad(f, &[])(a)[0].sum()];
    let d2 = grad(df, &[])(std::slice::from_ref(&x));
    let want: Vec<f64> = vals(&x).iter().map(|v| 2.0 * v.cos() - v * v.sin()).collect();
    assert_close(&vals(&d2[0]), &want, 1e-12, "grad(grad)");
    // The Hessian is diagonal with the same entries, by jacfwd(jacrev) and by jacrev(jacrev).
    let h = hessian(f, 0)(std::slice::from_ref(&x)).remove(0);
    assert_eq!(h.shape(), [5, 5]);
    let diag: Vec<f64> = (0..5).map(|i| vals(&h)[i * 5 + i]).collect();
    assert_close(&diag, &want, 1e-12, "hessian diagonal");
    assert!(vals(&h).iter().enumerate().all(|(i, v)| i % 6 == 0 || *v == 0.0), "off-diagonal zeros");
    let first = |a: &[Tensor]| vec![f(a).remove(0)];
    let h2 = jacrev(jacrev(first, 0), 0)(std::slice::from_ref(&x)).remove(0);
    assert_close(&vals(&h2), &vals(&h), 1e-12, "jacrev(jacrev)");
}

#[test]
fn jacobians_forward_and_reverse_agree_with_finite_differences() {
    let mut rng = Rng::new(2);
    let a = rand64(&mut rng, &[3, 4]);
    let x = rand64(&mut rng, &[4]);
    let a2 = a.clone();
    let f = move |t: &[Tensor]| vec![a2.matmul(&t[0]).tanh(), t[0].exp().sum()];
    let jr = jacrev(&f, 0)(std::slice::from_ref(&x));
    let jf = jacfwd(&f, 0)(std::slice::from_ref(&x));
    assert_eq!(jr[0].shape(), [3, 4]);
    assert_eq!(jf[0].shape(), [3, 4]);
    assert_eq!(jr[1].shape(), [4]);
    // Closed form: d tanh(Ax)_i / dx_j = (1 - tanh²) A_ij.
    let t = vals(&a.matmul(&x).tanh());
    let av = vals(&a);
    let want: Vec<f64> = (0..12).map(|k| (1.0 - t[k / 4] * t[k / 4]) * av[k]).collect();
    assert_close(&vals(&jr[0]), &want, 1e-12, "jacrev");
    assert_close(&vals(&jf[0]), &want, 1e-12, "jacfwd");
    assert_close(&vals(&jr[1]), &vals(&x.exp()), 1e-12, "jacrev of the sum");
    assert_close(&vals(&jf[1]), &vals(&x.exp()), 1e-12, "jacfwd of the sum");
}

#[test]
fn vjp_and_jvp_are_transposes() {
    let mut rng = Rng::new(3);
    let args = [rand64(&mut rng, &[3, 4]), rand64(&mut rng, &[4, 2])];
    let f = |a: &[Tensor]| vec![(a[0].matmul(&a[1]).sigmoid() * 2.0).log_softmax(-1)];
    let (outs, pull) = vjp(f, &args);
    let u = rand64(&mut rng, &outs[0].shape());
    let t = [rand64(&mut rng, &[3, 4]), rand64(&mut rng, &[4, 2])];
    let pulled = pull(std::slice::from_ref(&u));
    let (outs2, pushed) = jvp(f, &args, &t);
    assert_close(&vals(&outs2[0]), &vals(&outs[0]), 0.0, "jvp's primal result");
    // <u, J t> == <Jᵀ u, t>
    let lhs = vals(&(&u * &pushed[0]).sum())[0];
    let rhs = vals(&((&pulled[0] * &t[0]).sum() + (&pulled[1] * &t[1]).sum()))[0];
    assert!((lhs - rhs).abs() < 1e-12, "<u, Jt> = {lhs}, <Jᵀu, t> = {rhs}");
    // J t by central differences along t.
    let eps = 1e-6;
    let at = |s: f64| {
        let moved: Vec<Tensor> = args.iter().zip(&t).map(|(a, d)| a + d * s).collect();
        vals(&f(&moved)[0])
    };
    let fd: Vec<f64> = at(eps).iter().zip(at(-eps)).map(|(p, m)| (p - m) / (2.0 * eps)).collect();
    assert_close(&vals(&pushed[0]), &fd, 1e-6, "jvp vs finite differences");
}

#[test]
fn per_example_gradients_with_vmap_of_grad() {
    let mut rng = Rng::new(4);
    let w = rand64(&mut rng, &[5, 3]).cast(DType::F32);
    let xs = rand64(&mut rng, &[8, 5]).cast(DType::F32);
    let ys = Tensor::from_vec((0..8).map(|i| (i % 3) as i64).collect::<Vec<_>>(), [8]);
    let loss = |a: &[Tensor]| {
        let logits = a[1].unsqueeze(0).matmul(&a[0]);
        vec![logits.cross_entropy(&a[2].unsqueeze(0))]
    };
    let per_example =
        vmap(grad(loss, &[0]), &[None, Some(0), Some(0)], &[])(&[w.clone(), xs.clone(), ys.clone()]).remove(0);
    assert_eq!(per_example.shape(), [8, 5, 3]);
    for i in 0..8 {
        let one =
            grad(loss, &[0])(&[w.clone(), xs.narrow(0, i, 1).squeeze(0), ys.narrow(0, i, 1).squeeze(0)]).remove(0);
        let got = vals(&per_example.narrow(0, i, 1).squeeze(0));
        assert_close(&got, &vals(&one), 1e-5, &format!("example {i}"));
    }
}

#[test]
fn transforms_run_under_tinyjit() {
    let mut jit = TinyJit::new(|ins: &[Tensor]| grad(smooth, &[])(ins));
    let mut rng = Rng::new(9);
    for step in 0..4 {
        let args = [rand64(&mut rng, &[3, 4]).cast(DType::F32), rand64(&mut rng, &[4, 2]).cast(DType::F32)];
        let got = jit.call(&[&args[0], &args[1]]).unwrap();
        let (x, w) = (args[0].clone().requires_grad(), args[1].clone().requires_grad());
        smooth(&[x.clone(), w.clone()])[0].backward();
        assert_close(&vals(&got[0]), &vals(&x.grad().unwrap()), 1e-5, &format!("step {step} x"));
        assert_close(&vals(&got[1]), &vals(&w.grad().unwrap()), 1e-5, &format!("step {step} w"));
    }
    assert!(jit.captured_len().is_some());
}

#[test]
fn transforms_compose_in_any_order() {
    let mut rng = Rng::new(12);
    let x = rand64(&mut rng, &[4, 3]);
    let w = rand64(&mut rng, &[3]);
    // f(x_i, w) = sin(x_i · w) for a row; summed over the rows after vmap.
    let row = |a: &[Tensor]| vec![(&a[0] * &a[1]).sum().sin()];
    let mapped_sum = |a: &[Tensor]| vec![vmap(row, &[Some(0), None], &[])(a)[0].sum()];
    // grad(vmap(f)) with respect to w: Σ_i cos(x_i · w) x_i.
    let gw = grad(mapped_sum, &[1])(&[x.clone(), w.clone()]).remove(0);
    let c = x.matmul(&w).cos();
    assert_close(&vals(&gw), &vals(&(c.unsqueeze(1) * &x).sum_axis(0)), 1e-12, "grad(vmap)");
    // vmap(grad(f)) with respect to x_i: cos(x_i · w) w per row.
    let gx = vmap(grad(row, &[0]), &[Some(0), None], &[])(&[x.clone(), w.clone()]).remove(0);
    assert_close(&vals(&gx), &vals(&(c.unsqueeze(1) * w.unsqueeze(0))), 1e-12, "vmap(grad)");
    // A Hessian-vector product by jvp(grad): H v with H = -sin(x_i · w) x_i x_iᵀ summed.
    let v = rand64(&mut rng, &[3]);
    let hv = jvp(grad(mapped_sum, &[1]), &[x.clone(), w.clone()], &[x.zeros_like(), v.clone()]).1.remove(0);
    let s = x.matmul(&w).sin().neg();
    let want = (x.matmul(&v) * s).unsqueeze(1) * &x;
    assert_close(&vals(&hv), &vals(&want.sum_axis(0)), 1e-12, "jvp(grad)");
    // Per-row Jacobians: vmap(jacrev) of a vector function.
    let vecf = |a: &[Tensor]| vec![a[0].tanh() * a[0].sum()];
    let jac = vmap(jacrev(vecf, 0), &[], &[])(std::slice::from_ref(&x)).remove(0);
    assert_eq!(jac.shape(), [4, 3, 3]);
    for i in 0..4 {
        let xi = x.narrow(0, i, 1).squeeze(0);
        let one = jacfwd(vecf, 0)(std::slice::from_ref(&xi)).remove(0);
        assert_close(&vals(&jac.narrow(0, i, 1).squeeze(0)), &vals(&one), 1e-12, &format!("vmap(jacrev) row {i}"));
    }
}

#[test]
fn grad_of_a_mapped_convolution_keeps_its_backward() {
    // The batched graph carries the convolution's own backward (a transposed convolution), so
    // grad(vmap(f)) equals the gradient of the unbatched batch computation.
    use ferrograd::tensor::ConvOpts;
    let mut rng = Rng::new(21);
    let x = rand64(&mut rng, &[4, 3, 7, 7]);
    let w = rand64(&mut rng, &[5, 3, 3, 3]);
    let row = |a: &[Tensor]| vec![a[0].unsqueeze(0).conv2d(&a[1], None, &ConvOpts::default().padding(1)).tanh().sum()];
    let total = move |a: &[Tensor]| vec![vmap(row, &[Some(0), None], &[])(a)[0].sum()];
    let direct = |a: &[Tensor]| vec![a[0].conv2d(&a[1], None, &ConvOpts::default().padding(1)).tanh().sum()];
    let mapped = grad(total, &[])(&[x.clone(), w.clone()]);
    let plain = grad(direct, &[])(&[x.clone(), w.clone()]);
    assert_close(&vals(&mapped[0]), &vals(&plain[0]), 1e-12, "input gradient");
    assert_close(&vals(&mapped[1]), &vals(&plain[1]), 1e-12, "weight gradient");
}

#[test]
fn functional_call_maps_an_ensemble_of_parameters() {
    // torch.func's model ensembling: one nn::Linear's forward, run with each of 3 stacked sets of
    // parameters by vmap over functional_call, equals each set's own forward.
    use ferrograd::func::functional_call;
    use ferrograd::nn::{get_parameters, Linear};
    let layer = Linear::new(4, 2, true);
    let params = get_parameters(&layer);
    let mut rng = Rng::new(31);
    let weights = rand64(&mut rng, &[3, 2, 4]).cast(DType::F32);
    let biases = rand64(&mut rng, &[3, 2]).cast(DType::F32);
    let x = rand64(&mut rng, &[5, 4]).cast(DType::F32);
    let run = |a: &[Tensor]| functional_call(&params, &a[..2], || vec![layer.forward(&a[2])]);
    let all = vmap(run, &[Some(0), Some(0), None], &[])(&[weights.clone(), biases.clone(), x.clone()]).remove(0);
    assert_eq!(all.shape(), [3, 5, 2]);
    for m in 0..3 {
        let (w, b) = (weights.narrow(0, m, 1).squeeze(0), biases.narrow(0, m, 1).squeeze(0));
        let want = x.matmul(&w.t()) + &b;
        assert_close(&vals(&all.narrow(0, m, 1).squeeze(0)), &vals(&want), 1e-6, &format!("member {m}"));
    }
    // Gradients with respect to the parameters given, not the layer's own.
    let loss = |a: &[Tensor]| vec![functional_call(&params, &a[..2], || vec![layer.forward(&a[2])])[0].square().sum()];
    let (w0, b0) = (weights.narrow(0, 0, 1).squeeze(0), biases.narrow(0, 0, 1).squeeze(0));
    let g = grad(loss, &[0])(&[w0.clone(), b0.clone(), x.clone()]).remove(0);
    let y = x.matmul(&w0.t()) + &b0;
    assert_close(&vals(&g), &vals(&(y * 2.0).t().matmul(&x)), 1e-5, "grad through functional_call");
}
