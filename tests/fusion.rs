//! Fusion is tested by kernel counts: how many kernels a graph schedules to. Each case also
//! checks the values against a plain f64 loop, so a wrong fusion cannot pass.

use ferrograd::schedule::kernel_count;
use ferrograd::Tensor;

fn count(ts: &[&Tensor]) -> usize {
    kernel_count(&ts.iter().map(|t| t.uop()).collect::<Vec<_>>())
}

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s % 2000) as f32 / 1000.0) - 1.0
        })
        .collect()
}

fn assert_close(got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((*g as f64 - w).abs() <= tol * (1.0 + w.abs()), "element {i}: got {g}, want {w}");
    }
}

#[test]
fn ten_elementwise_ops_on_broadcast_inputs_are_one_kernel() {
    let (av, bv) = (data(4, 1), data(3, 2));
    let a = Tensor::from_vec(av.clone(), [4, 1]);
    let b = Tensor::from_vec(bv.clone(), [3]);
    let mut x = &a + &b;
    for i in 0..9 {
        x = match i % 3 {
            0 => &x * 1.5,
            1 => &x - &a,
            _ => x.maximum(&b),
        };
    }
    assert_eq!(count(&[&x]), 1);
    let mut want = Vec::new();
    for &a in &av {
        for &b in &bv {
            let (a, b) = (a as f64, b as f64);
            let mut v = a + b;
            for k in 0..9 {
                v = match k % 3 {
                    0 => v * 1.5,
                    1 => v - a,
                    _ => v.max(b),
                };
            }
            want.push(v);
        }
    }
    assert_close(&x.to_vec::<f32>().unwrap(), &want, 1e-5);
}

#[test]
fn matmul_as_reshape_multiply_sum_is_one_kernel() {
    let n = 16;
    let (av, bv) = (data(n * n, 3), data(n * n, 4));
    let a = Tensor::from_vec(av.clone(), [n, n]);
    let b = Tensor::from_vec(bv.clone(), [n, n]);
    let c = (a.reshape([n, 1, n]) * b.t().reshape([1, n, n])).sum_axis(2);
    assert_eq!(count(&[&c]), 1);
    let want: Vec<f64> =
        (0..n * n).map(|ij| (0..n).map(|k| av[ij / n * n + k] as f64 * bv[k * n + ij % n] as f64).sum()).collect();
    assert_close(&c.to_vec::<f32>().unwrap(), &want, 1e-5);
}

#[test]
fn elementwise_feeding_a_reduce_is_one_kernel() {
    let (av, bv, cv) = (data(12, 5), data(12, 6), data(12, 7));
    let [a, b, c] = [&av, &bv, &cv].map(|v| Tensor::from_vec(v.clone(), [3, 4]));
    let r = ((&a + &b) * &c).sum_axis(1);
    assert_eq!(count(&[&r]), 1);
    let want: Vec<f64> = (0..3)
        .map(|i| (0..4).map(|j| (av[i * 4 + j] as f64 + bv[i * 4 + j] as f64) * cv[i * 4 + j] as f64).sum())
        .collect();
    assert_close(&r.to_vec::<f32>().unwrap(), &want, 1e-5);
}

#[test]
fn softmax_is_at_most_three_kernels() {
    let v = data(5 * 7, 8);
    let x = Tensor::from_vec(v.clone(), [5, 7]);
    let m = x.max_keepdim(1);
    let e = (&x - &m).exp();
    let s = &e / e.sum_keepdim(1);
    assert!(count(&[&s]) <= 3, "softmax scheduled {} kernels", count(&[&s]));
    let mut want = Vec::new();
    for i in 0..5 {
        let row: Vec<f64> = v[i * 7..i * 7 + 7].iter().map(|&x| x as f64).collect();
        let mx = row.iter().cloned().fold(f64::MIN, f64::max);
        let z: f64 = row.iter().map(|x| (x - mx).exp()).sum();
        want.extend(row.iter().map(|x| (x - mx).exp() / z));
    }
    assert_close(&s.to_vec::<f32>().unwrap(), &want, 1e-5);
}

#[test]
fn sum_of_two_sums_is_at_most_two_kernels() {
    let (av, bv) = (data(100, 9), data(37, 10));
    let a = Tensor::from_vec(av.clone(), [10, 10]);
    let b = Tensor::from_slice(&bv);
    let r = a.sum() + b.sum();
    assert!(count(&[&r]) <= 2);
    let want = av.iter().map(|&x| x as f64).sum::<f64>() + bv.iter().map(|&x| x as f64).sum::<f64>();
    assert_close(&[r.item::<f32>().unwrap()], &[want], 1e-5);
}

#[test]
fn reduce_broadcast_back_materializes_once() {
    // x - mean(x) needs the mean in memory (it is broadcast over the reduced axis): 2 kernels.
    let v = data(6 * 8, 11);
    let x = Tensor::from_vec(v.clone(), [6, 8]);
    let y = &x - x.mean_keepdim(1);
    assert_eq!(count(&[&y]), 2);
    let mut want = Vec::new();
    for i in 0..6 {
        let m: f64 = v[i * 8..i * 8 + 8].iter().map(|&x| x as f64).sum::<f64>() / 8.0;
        want.extend(v[i * 8..i * 8 + 8].iter().map(|&x| x as f64 - m));
    }
    assert_close(&y.to_vec::<f32>().unwrap(), &want, 1e-5);
}

#[test]
fn movement_ops_never_copy() {
    let v = data(24, 12);
    let x = Tensor::from_vec(v.clone(), [2, 3, 4]);
    let y = x.permute([2, 0, 1]).reshape([4, 6]).flip(0).pad(&[(1, 1), (0, 2)]).shrink(&[(1, 5), (0, 6)]) * 2.0;
    assert_eq!(count(&[&y]), 1);
    let mut want = Vec::new();
    for i in 0..4 {
        for j in 0..6 {
            // y[i][j] = 2 * flipped[i][j] = 2 * p[3 - i][j] where p[k][l] = x[l/3][l%3][k].
            let (k, l) = (3 - i, j);
            want.push(2.0 * v[(l / 3) * 12 + (l % 3) * 4 + k] as f64);
        }
    }
    assert_close(&y.to_vec::<f32>().unwrap(), &want, 0.0);
}

#[test]
fn contiguous_forces_a_kernel_break() {
    let a = Tensor::from_vec(data(16, 13), [4, 4]);
    let y = (&a + 1.0).contiguous() * 2.0;
    assert_eq!(count(&[&y]), 2);
}

#[test]
fn realized_intermediates_are_freed() {
    // The softmax max and sum buffers are only referenced by the schedule; after realize
    // the output is the only buffer alive besides the input.
    let x = Tensor::from_vec(data(64, 14), [8, 8]);
    let m = x.max_keepdim(1);
    let e = (&x - &m).exp();
    let s = &e / e.sum_keepdim(1);
    let sched = ferrograd::schedule::create_schedule(&[s.uop()]);
    let inter: Vec<std::sync::Weak<ferrograd::runtime::Buffer>> =
        sched.items[..sched.items.len() - 1].iter().map(|it| std::sync::Arc::downgrade(&it.bufs[0])).collect();
    drop(sched);
    assert!(inter.iter().all(|w| w.upgrade().is_none()), "intermediate buffers outlived their schedule");
    s.realize().unwrap();
}
