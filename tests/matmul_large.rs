//! Large matmuls take the packed path on SIMD CPUs (the right operand copied into 32-column
//! panels): values, batched left operands and gradients against f64 references.

use ferrograd::Tensor;

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

fn reference(a: &[f32], b: &[f32], rows: usize, k: usize, m: usize) -> Vec<f64> {
    let mut out = vec![0.0; rows * m];
    for i in 0..rows {
        for t in 0..k {
            let x = a[i * k + t] as f64;
            for j in 0..m {
                out[i * m + j] += x * b[t * m + j] as f64;
            }
        }
    }
    out
}

fn close(got: &[f32], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((*g as f64 - w).abs() <= 1e-4 * (1.0 + w.abs()), "{what}[{i}]: got {g}, want {w}");
    }
}

#[test]
fn packed_matmul_values_batches_and_gradients() {
    // B is 256 x 16384: 4M elements, whole 32-column panels.
    let (rows, k, m) = (6usize, 256usize, 16384usize);
    let (xa, xb) = (data(2 * rows * k, 1), data(k * m, 2));
    let a = Tensor::from_vec(xa[..rows * k].to_vec(), [rows, k]);
    let b = Tensor::from_vec(xb.clone(), [k, m]).requires_grad();
    let c = a.matmul(&b);
    close(&c.to_vec::<f32>().unwrap(), &reference(&xa[..rows * k], &xb, rows, k, m), "a @ b");

    // A batched left operand against the same 2-D right operand.
    let a3 = Tensor::from_vec(xa.clone(), [2, rows, k]);
    let c3 = a3.matmul(&b);
    assert_eq!(c3.shape(), vec![2, rows, m]);
    close(&c3.to_vec::<f32>().unwrap(), &reference(&xa, &xb, 2 * rows, k, m), "batched a @ b");

    // d(sum(a @ b))/db[t, j] = sum_i a[i, t].
    c.sum().backward();
    let gb = b.grad().unwrap().to_vec::<f32>().unwrap();
    for t in 0..k {
        let want: f64 = (0..rows).map(|i| xa[i * k + t] as f64).sum();
        for j in [0, 31, 32, m - 1] {
            let g = gb[t * m + j] as f64;
            assert!((g - want).abs() <= 1e-4 * (1.0 + want.abs()), "grad b[{t}, {j}]: got {g}, want {want}");
        }
    }
}

fn kernels(t: &Tensor) -> usize {
    use ferrograd::schedule::{create_schedule, ItemKind};
    create_schedule(&[t.uop()]).items.iter().filter(|i| i.kind == ItemKind::Kernel).count()
}

#[test]
fn the_scheduler_packs_only_large_right_operands_on_simd_cpus() {
    let simd = ferrograd::runtime::get_device("CPU").unwrap().renderer().target().simd_bytes > 0;
    let a = Tensor::from_vec(data(6 * 256, 3), [6, 256]).realize().unwrap();
    let big = Tensor::from_vec(data(256 * 16384, 4), [256, 16384]).realize().unwrap();
    let small = Tensor::from_vec(data(256 * 1024, 5), [256, 1024]).realize().unwrap();
    if a.device() == "CPU" {
        assert_eq!(kernels(&a.matmul(&big)), if simd { 2 } else { 1 }, "4M-element b: panel copy + matmul");
    }
    assert_eq!(kernels(&a.matmul(&small)), 1, "256K-element b: no copy");
}

/// `x @ w.T` with `w` stored `[out, in]` (nn::Linear's weight), transposed by
/// `reference`'s caller into `[in, out]`.
fn transposed(w: &[f32], out: usize, inp: usize) -> Vec<f32> {
    (0..inp * out).map(|i| w[(i % out) * inp + i / out]).collect()
}

#[test]
fn linear_layout_matmul_is_packed_and_right() {
    // 48 rows of x, w 128 x 320 ([out, in]): past the 16-row, 32K-element threshold.
    let (rows, inp, out) = (48usize, 320usize, 128usize);
    let (xv, wv) = (data(2 * rows * inp, 6), data(out * inp, 7));
    let x = Tensor::from_vec(xv[..rows * inp].to_vec(), [rows, inp]);
    let w = Tensor::from_vec(wv.clone(), [out, inp]).requires_grad();
    let wt = transposed(&wv, out, inp);
    let c = x.matmul(&w.t());
    close(&c.to_vec::<f32>().unwrap(), &reference(&xv[..rows * inp], &wt, rows, inp, out), "x @ w.T");
    let x3 = Tensor::from_vec(xv.clone(), [2, rows, inp]);
    close(&x3.linear(&w, None).to_vec::<f32>().unwrap(), &reference(&xv, &wt, 2 * rows, inp, out), "batched linear");
    // d(sum(x @ w.T))/dw[o, t] = sum_i x[i, t].
    c.sum().backward();
    let gw = w.grad().unwrap().to_vec::<f32>().unwrap();
    for o in [0, 31, 32, out - 1] {
        for t in 0..inp {
            let want: f64 = (0..rows).map(|i| xv[i * inp + t] as f64).sum();
            let g = gw[o * inp + t] as f64;
            assert!((g - want).abs() <= 1e-4 * (1.0 + want.abs()), "grad w[{o}, {t}]: got {g}, want {want}");
        }
    }
    let simd = ferrograd::runtime::get_device("CPU").unwrap().renderer().target().simd_bytes > 0;
    let xr = Tensor::from_vec(xv[..rows * inp].to_vec(), [rows, inp]).realize().unwrap();
    let wr = Tensor::from_vec(wv, [out, inp]).realize().unwrap();
    if xr.device() == "CPU" {
        assert_eq!(kernels(&xr.matmul(&wr.t())), if simd { 2 } else { 1 }, "x @ w.T: panel copy + matmul");
        let x3 = xr.reshape([2, rows / 2, inp]);
        assert_eq!(kernels(&x3.linear(&wr, None)), if simd { 2 } else { 1 }, "batched x @ w.T: panel copy + matmul");
        let one_row = xr.shrink(&[(0, 1), (0, inp)]).realize().unwrap();
        assert_eq!(kernels(&one_row.matmul(&wr.t())), 1, "a single row reads w as it is");
    }
}

/// Attention's `q @ k.T` with keys stored `[batch, heads, keys, dim]`: each head's keys are
/// packed into panels of their own. Values against f64 for plain, broadcast (grouped-query)
/// and lazy (sliced, scaled) keys, and gradients through the packed path.
#[test]
fn batched_keys_layout_is_packed_per_batch_and_right() {
    let (b, h, l, s, d) = (2, 3, 20, 96, 64);
    let qv = data(b * h * l * d, 11);
    let kv = data(b * h * s * d, 12);
    // want[bh, i, j] = sum_t q[bh, i, t] * keys(bh)[j, t]
    let scores = |keys: &dyn Fn(usize, usize, usize) -> f64| -> Vec<f64> {
        let mut out = Vec::new();
        for bh in 0..b * h {
            for i in 0..l {
                for j in 0..s {
                    out.push((0..d).map(|t| qv[(bh * l + i) * d + t] as f64 * keys(bh, j, t)).sum());
                }
            }
        }
        out
    };
    let q = Tensor::from_vec(qv.clone(), [b, h, l, d]).requires_grad();
    let k = Tensor::from_vec(kv.clone(), [b, h, s, d]).requires_grad();
    let c = q.matmul(&k.transpose(-1, -2));
    let plain = scores(&|bh, j, t| kv[(bh * s + j) * d + t] as f64);
    close(&c.to_vec::<f32>().unwrap(), &plain, "q @ k.T");
    // Grouped-query: one key head serves all three query heads (batch dim 1, broadcast).
    let k1 = Tensor::from_vec(kv[..b * s * d].to_vec(), [b, 1, s, d]);
    let shared = scores(&|bh, j, t| kv[((bh / h) * s + j) * d + t] as f64);
    close(&q.matmul(&k1.transpose(-1, -2)).to_vec::<f32>().unwrap(), &shared, "q @ k.T, shared key head");
    // Lazy keys: every other key row of a longer tensor, scaled.
    let long = Tensor::from_vec(data(b * h * 2 * s * d, 13), [b, h, 2 * s, d]);
    let lv = long.to_vec::<f32>().unwrap();
    let lazy =
        long.reshape([b, h, s, 2, d]).shrink(&[(0, b), (0, h), (0, s), (1, 2), (0, d)]).reshape([b, h, s, d]) * 0.5;
    let want = scores(&|bh, j, t| 0.5 * lv[(bh * 2 * s + 2 * j + 1) * d + t] as f64);
    close(&q.matmul(&lazy.transpose(-1, -2)).to_vec::<f32>().unwrap(), &want, "q @ (lazy k).T");
    // d(sum(q @ k.T))/dk[bh, j, t] = sum_i q[bh, i, t].
    c.sum().backward();
    let gk = k.grad().unwrap().to_vec::<f32>().unwrap();
    for (bh, j, t) in [(0, 0, 0), (5, 95, 63), (3, 40, 17)] {
        let want: f64 = (0..l).map(|i| qv[(bh * l + i) * d + t] as f64).sum();
        let g = gk[(bh * s + j) * d + t] as f64;
        assert!((g - want).abs() <= 1e-4 * (1.0 + want.abs()), "grad k[{bh}, {j}, {t}]: got {g}, want {want}");
    }
    let simd = ferrograd::runtime::get_device("CPU").unwrap().renderer().target().simd_bytes > 0;
    if q.device() == "CPU" {
        let (qr, kr) = (q.detach().realize().unwrap(), k.detach().realize().unwrap());
        assert_eq!(kernels(&qr.matmul(&kr.transpose(-1, -2))), if simd { 2 } else { 1 }, "panel copy + matmul");
        // A key tensor stored transposed (`[.., dim, keys]`) is already contiguous along keys.
        let kt = kr.transpose(-1, -2).contiguous().realize().unwrap();
        assert_eq!(kernels(&qr.matmul(&kt)), 1, "keys stored [dim, keys] are read as they are");
        // A decode step (one query row per head) reads the keys as they are.
        let one = qr.shrink(&[(0, b), (0, h), (0, 1), (0, d)]).realize().unwrap();
        assert_eq!(kernels(&one.matmul(&kr.transpose(-1, -2))), 1, "one row reads k as it is");
    }
}
