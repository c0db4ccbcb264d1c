//! `qr`, `svd` and `copy` beyond the PyTorch fixtures (tests/torch/linalg.rs): larger and
//! batched matrices checked by the defining identities in f64 on the host (orthonormal factors,
//! the product gives the input back, triangular `r`, sorted singular values), the number of
//! kernels a cold cache compiles (the same for 4 and 12 columns: steps differ by data, not by
//! code), and that a copy owns its buffer.

mod common;

use common::*;
use ferrograd::schedule::distinct_kernel_count;
use ferrograd::Tensor;

fn random(shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut rng = Rng::new(seed);
    Tensor::from_vec((0..n).map(|_| rng.uniform(-1.0, 1.0) as f32).collect::<Vec<f32>>(), shape)
}

fn host(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f32>().expect("realize").into_iter().map(f64::from).collect()
}

/// `a [m, k] · b [k, n]` in f64 on the host, `bt` transposing b (given as `[n, k]`).
fn mm(a: &[f64], b: &[f64], m: usize, k: usize, n: usize, bt: bool) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| a[i * k + l] * if bt { b[j * k + l] } else { b[l * n + j] }).sum();
        }
    }
    c
}

fn transpose(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    (0..n * m).map(|i| a[(i % m) * n + i / m]).collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let worst = got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
    assert!(worst <= tol, "{what}: max error {worst:e} > {tol:e}");
}

fn eye(n: usize) -> Vec<f64> {
    (0..n * n).map(|i| if i / n == i % n { 1.0 } else { 0.0 }).collect()
}

fn check_qr(m: usize, n: usize, dev: &str) {
    let a = random(&[m, n], (m * 31 + n) as u64);
    let (q, r) = a.qr();
    let k = m.min(n);
    assert_eq!((q.shape(), r.shape()), (vec![m, k], vec![k, n]), "qr shapes of {m}x{n}");
    let (av, qv, rv) = (host(&a), host(&q), host(&r));
    let ctx = format!("qr {m}x{n} on {dev}");
    assert_close(&mm(&qv, &rv, m, k, n, false), &av, 2e-5, &format!("{ctx}: q r = a"));
    assert_close(&mm(&transpose(&qv, m, k), &qv, k, m, k, false), &eye(k), 2e-5, &format!("{ctx}: qᵀq = I"));
    for i in 0..k {
        for j in 0..i.min(n) {
            assert_eq!(rv[i * n + j], 0.0, "{ctx}: r[{i}, {j}] below the diagonal");
        }
    }
}

fn check_svd(m: usize, n: usize, dev: &str) {
    let a = random(&[m, n], (m * 17 + n) as u64);
    let (u, s, v) = a.svd();
    let k = m.min(n);
    assert_eq!((u.shape(), s.shape(), v.shape()), (vec![m, k], vec![k], vec![n, k]), "svd shapes of {m}x{n}");
    let (av, uv, sv, vv) = (host(&a), host(&u), host(&s), host(&v));
    let ctx = format!("svd {m}x{n} on {dev}");
    assert!(sv.windows(2).all(|w| w[0] >= w[1]) && sv[k - 1] >= 0.0, "{ctx}: s = {sv:?} is not descending");
    let us: Vec<f64> = (0..m * k).map(|i| uv[i] * sv[i % k]).collect();
    assert_close(&mm(&us, &vv, m, k, n, true), &av, 3e-5, &format!("{ctx}: u s vᵀ = a"));
    assert_close(&mm(&transpose(&uv, m, k), &uv, k, m, k, false), &eye(k), 3e-5, &format!("{ctx}: uᵀu = I"));
    assert_close(&mm(&transpose(&vv, n, k), &vv, k, n, k, false), &eye(k), 3e-5, &format!("{ctx}: vᵀv = I"));
}

#[test]
fn qr_and_svd_satisfy_their_identities() {
    for_each_device(|dev| {
        for (m, n) in [(12, 9), (9, 12), (16, 16), (1, 3), (7, 1)] {
            check_qr(m, n, dev);
            check_svd(m, n, dev);
        }
    });
}

#[test]
fn batched_factors_match_each_matrix_alone() {
    for_each_device(|dev| {
        let a = random(&[3, 5, 4], 7);
        let (q, r) = a.qr();
        let (u, s, v) = a.svd();
        for b in 0..3 {
            let ab = a.shrink(&[(b, b + 1), (0, 5), (0, 4)]).reshape([5, 4]);
            let pick = |t: &Tensor| {
                let sh = t.shape();
                host(&t.shrink(&[(b, b + 1), (0, sh[1]), (0, sh[2])]).reshape([sh[1], sh[2]]))
            };
            let (qb, rb) = ab.qr();
            assert_close(&pick(&q), &host(&qb), 1e-6, &format!("batch {b} q on {dev}"));
            assert_close(&pick(&r), &host(&rb), 1e-6, &format!("batch {b} r on {dev}"));
            let (ub, sb, vb) = ab.svd();
            assert_close(
                &host(&s.shrink(&[(b, b + 1), (0, 4)]).reshape([4])),
                &host(&sb),
                1e-5,
                &format!("batch {b} s on {dev}"),
            );
            assert_close(&pick(&u), &host(&ub), 1e-4, &format!("batch {b} u on {dev}"));
            assert_close(&pick(&v), &host(&vb), 1e-4, &format!("batch {b} v on {dev}"));
        }
    });
}

#[test]
fn every_step_reuses_the_same_kernels() {
    let outs = |n: usize| {
        let a = random(&[n, n], 3);
        let (q, r) = a.qr();
        let (u, s, v) = a.svd();
        distinct_kernel_count(&[q.uop(), r.uop(), u.uop(), s.uop(), v.uop()])
    };
    let (small, large) = (outs(4), outs(12));
    assert_eq!(small, large, "qr + svd compile {small} kernels for 4x4 but {large} for 12x12");
}

#[test]
fn copy_owns_its_buffer_and_passes_the_gradient() {
    for_each_device(|dev| {
        let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0]).requires_grad();
        let y = x.copy();
        y.realize().expect("realize");
        x.detach().assign(Tensor::from_slice(&[7.0f32, 8.0, 9.0])).realize().expect("assign");
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0], "the copy kept its values on {dev}");
        assert_eq!(x.to_vec::<f32>().unwrap(), vec![7.0, 8.0, 9.0], "the original changed on {dev}");
        let z = Tensor::from_slice(&[1.0f32, -2.0]).requires_grad();
        z.copy().mul(3.0).sum().backward();
        assert_eq!(z.grad().unwrap().to_vec::<f32>().unwrap(), vec![3.0, 3.0], "gradient through copy on {dev}");
        let view = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]).t().copy();
        assert_eq!(view.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 2.0, 4.0], "copy of a view on {dev}");
    });
}

#[test]
fn tiny_and_huge_matrices_factor_as_well_as_unit_ones() {
    // Squares of entries near 1e-25 are below f32's smallest subnormal and those of 1e25
    // overflow: the factorizations scale by a power of two first, as LAPACK does.
    for_each_device(|dev| {
        let a = random(&[6, 4], 5);
        let (_, s1, _) = a.svd();
        let s1 = host(&s1);
        for scale in [1e-25f32, 1e25] {
            let b = a.mul(scale).realize().unwrap();
            let bv = host(&b);
            let ctx = format!("scale {scale:e} on {dev}");
            let (q, r) = b.qr();
            let (qv, rv) = (host(&q), host(&r));
            let qr: Vec<f64> = mm(&qv, &rv, 6, 4, 4, false).iter().map(|x| x / scale as f64).collect();
            let unit: Vec<f64> = bv.iter().map(|x| x / scale as f64).collect();
            assert_close(&qr, &unit, 2e-5, &format!("{ctx}: q r = a"));
            assert_close(&mm(&transpose(&qv, 6, 4), &qv, 4, 6, 4, false), &eye(4), 2e-5, &format!("{ctx}: qᵀq = I"));
            let (u, s, v) = b.svd();
            let (uv, sv, vv) = (host(&u), host(&s), host(&v));
            let rel: Vec<f64> = sv.iter().map(|x| x / scale as f64).collect();
            assert_close(&rel, &s1, 3e-5, &format!("{ctx}: s / scale = s of the unit matrix"));
            assert_close(&mm(&transpose(&uv, 6, 4), &uv, 4, 6, 4, false), &eye(4), 3e-5, &format!("{ctx}: uᵀu = I"));
            assert_close(&mm(&transpose(&vv, 4, 4), &vv, 4, 4, 4, false), &eye(4), 3e-5, &format!("{ctx}: vᵀv = I"));
        }
    });
}
