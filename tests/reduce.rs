//! Reductions (sum, prod, max, min, mean) over all, single, negative and several axes, with and
//! without keepdim, on views that are not contiguous, on integer/bool/half dtypes, on empty
//! axes, and composed with elementwise ops (normalization, softmax), against f64 loops.

mod common;

use common::*;
use ferrograd::{DType, Tensor};

#[derive(Clone, Copy, Debug)]
enum Red {
    Sum,
    Prod,
    Max,
    Min,
    Mean,
}

/// Applies a reduction through the public API: `None` axes uses the no-argument form (`sum()`)
/// or `()` for keepdim.
fn apply(t: &Tensor, r: Red, axes: Option<Vec<isize>>, keepdim: bool) -> Tensor {
    match (axes, keepdim) {
        (None, false) => match r {
            Red::Sum => t.sum(),
            Red::Prod => t.prod(),
            Red::Max => t.max(),
            Red::Min => t.min(),
            Red::Mean => t.mean(),
        },
        (None, true) => match r {
            Red::Sum => t.sum_keepdim(()),
            Red::Prod => t.prod_keepdim(()),
            Red::Max => t.max_keepdim(()),
            Red::Min => t.min_keepdim(()),
            Red::Mean => t.mean_keepdim(()),
        },
        (Some(a), false) => match r {
            Red::Sum => t.sum_axis(a),
            Red::Prod => t.prod_axis(a),
            Red::Max => t.max_axis(a),
            Red::Min => t.min_axis(a),
            Red::Mean => t.mean_axis(a),
        },
        (Some(a), true) => match r {
            Red::Sum => t.sum_keepdim(a),
            Red::Prod => t.prod_keepdim(a),
            Red::Max => t.max_keepdim(a),
            Red::Min => t.min_keepdim(a),
            Red::Mean => t.mean_keepdim(a),
        },
    }
}

/// The reference reduction; negative axes resolved, `None` = all axes.
fn reference(x: &Nd, r: Red, axes: &Option<Vec<isize>>, keepdim: bool) -> Nd {
    let n = x.shape.len() as isize;
    let mut ax: Vec<usize> = match axes {
        None => x.all_axes(),
        Some(a) => a.iter().map(|&v| if v < 0 { v + n } else { v } as usize).collect(),
    };
    ax.sort_unstable();
    ax.dedup();
    match r {
        Red::Sum => x.sum(&ax, keepdim),
        Red::Prod => x.prod(&ax, keepdim),
        Red::Max => x.max(&ax, keepdim),
        Red::Min => x.min(&ax, keepdim),
        Red::Mean => x.mean(&ax, keepdim),
    }
}

/// Inputs of shape [2,3,4]: contiguous, and four views that are not.
fn inputs_234(rng: &mut Rng, lo: f64, hi: f64) -> Vec<(&'static str, Tensor, Nd)> {
    let mut out = Vec::new();
    let x = Nd::rand(rng, &[2, 3, 4], lo, hi);
    out.push(("contiguous", x.f32(), x));
    let x = Nd::rand(rng, &[4, 3, 2], lo, hi);
    out.push(("permuted [4,3,2]", x.f32().permute([2, 1, 0]), x.permute(&[2, 1, 0])));
    let x = Nd::rand(rng, &[2, 5, 4], lo, hi);
    let r = [(0, 2), (1, 4), (0, 4)];
    out.push(("shrunk+flipped [2,5,4]", x.f32().shrink(&r).flip(2), x.shrink(&r).flip(&[2])));
    let x = Nd::rand(rng, &[3, 1], lo, hi);
    out.push(("expanded [3,1]", x.f32().expand([2, 3, 4]), x.expand(&[2, 3, 4])));
    let x = Nd::rand(rng, &[2, 1, 4], lo, hi);
    // Padding adds zeros, which matter for every reduction.
    let p = [(0, 0), (1, 1), (0, 0)];
    out.push(("padded [2,1,4]", x.f32().pad(&p), x.pad(&p)));
    out
}

fn check_reduce(r: Red, lo: f64, hi: f64) {
    let all: [Option<Vec<isize>>; 10] = [
        None,
        Some(vec![0]),
        Some(vec![1]),
        Some(vec![2]),
        Some(vec![-1]),
        Some(vec![-3]),
        Some(vec![0, 2]),
        Some(vec![-1, 0]),
        Some(vec![1, 2]),
        Some(vec![0, 1, 2]),
    ];
    for_each_device(|dev| {
        let mut rng = Rng::new(99);
        for (i, (label, t, x)) in inputs_234(&mut rng, lo, hi).into_iter().enumerate() {
            // Every axis spec on the contiguous input, a few on each view.
            let specs: Vec<&Option<Vec<isize>>> =
                if i == 0 { all.iter().collect() } else { vec![&all[0], &all[2], &all[4], &all[6]] };
            for axes in specs {
                for keepdim in [false, true] {
                    let want = reference(&x, r, axes, keepdim);
                    let ctx = format!("{r:?} axes {axes:?} keepdim {keepdim} on {dev}, {label}");
                    check_f32(&apply(&t, r, axes.clone(), keepdim), &want, &ctx);
                }
            }
        }
        // Odd shapes: 0-d, size-1 axes, 1-d, an empty axis list.
        let cases: [(&[usize], Option<Vec<isize>>); 6] = [
            (&[], None),
            (&[], Some(vec![])),
            (&[3, 1, 4], Some(vec![1])),
            (&[3, 1, 4], Some(vec![0, 1])),
            (&[1, 1], None),
            (&[5], Some(vec![0])),
        ];
        for (shape, axes) in cases {
            let x = Nd::rand(&mut rng, shape, lo, hi);
            for keepdim in [false, true] {
                let ctx = format!("{r:?} of {shape:?} axes {axes:?} keepdim {keepdim} on {dev}");
                check_f32(&apply(&x.f32(), r, axes.clone(), keepdim), &reference(&x, r, &axes, keepdim), &ctx);
            }
        }
    });
}

#[test]
fn sum_over_axes() {
    check_reduce(Red::Sum, -2.0, 2.0);
}
#[test]
fn prod_over_axes() {
    check_reduce(Red::Prod, 0.5, 1.8);
}
#[test]
fn max_over_axes() {
    check_reduce(Red::Max, -3.0, 3.0);
}
#[test]
fn min_over_axes() {
    check_reduce(Red::Min, -3.0, 3.0);
}
#[test]
fn mean_over_axes() {
    check_reduce(Red::Mean, -2.0, 2.0);
}

#[test]
fn max_and_min_of_all_negative_or_all_positive_values() {
    // A max over all-negative values must not be clamped at 0 (and a min of positives likewise).
    for_each_device(|dev| {
        let neg = Nd::new(&[2, 3], vec![-5.0, -3.5, -7.0, -1.25, -9.0, -2.0]);
        check_f32(&neg.f32().max_axis(1), &neg.max(&[1], false), &format!("max of negatives on {dev}"));
        check_f32(&neg.f32().max(), &Nd::scalar(-1.25), &format!("max() of negatives on {dev}"));
        let pos = neg.map(|v| -v);
        check_f32(&pos.f32().min_axis(0), &pos.min(&[0], false), &format!("min of positives on {dev}"));
        let inf = Nd::new(&[3], vec![f64::NEG_INFINITY, -1.0, f64::INFINITY]);
        check_f32(&inf.f32().max(), &Nd::scalar(f64::INFINITY), &format!("max with inf on {dev}"));
        check_f32(&inf.f32().min(), &Nd::scalar(f64::NEG_INFINITY), &format!("min with -inf on {dev}"));
    });
}

#[test]
fn large_sum_and_mean() {
    // 40k uniform values: f32 accumulation error stays far below rtol 1e-3.
    for_each_device(|dev| {
        let mut rng = Rng::new(8);
        let x = Nd::rand(&mut rng, &[200, 200], 0.0, 1.0);
        let t = x.f32();
        check_f32(&t.sum(), &x.sum(&[0, 1], false), &format!("sum of 40k on {dev}"));
        check_f32(&t.mean(), &x.mean(&[0, 1], false), &format!("mean of 40k on {dev}"));
        check_f32(&t.t().sum_axis(1), &x.sum(&[0], false), &format!("sum of t rows on {dev}"));
    });
}

// ---------------------------------------------------------------- empty axes

#[test]
fn reductions_over_empty_axes() {
    for_each_device(|dev| {
        let e = Nd::new(&[0, 3], vec![]);
        let t = e.f32();
        check_f32(&t.sum_axis(0), &Nd::full(&[3], 0.0), &format!("sum over empty axis on {dev}"));
        check_f32(&t.prod_axis(0), &Nd::full(&[3], 1.0), &format!("prod over empty axis on {dev}"));
        check_f32(&t.sum(), &Nd::scalar(0.0), &format!("sum() of empty on {dev}"));
        check_f32(&t.prod(), &Nd::scalar(1.0), &format!("prod() of empty on {dev}"));
        check_f32(&t.sum_keepdim(0), &Nd::full(&[1, 3], 0.0), &format!("sum_keepdim over empty on {dev}"));
        check_f32(&t.sum_axis(1), &Nd::new(&[0], vec![]), &format!("sum over non-empty axis of empty on {dev}"));
        // mean over nothing is 0/0.
        check_f32(&t.mean_axis(0), &Nd::full(&[3], f64::NAN), &format!("mean over empty axis on {dev}"));
        let i = tensor_of(&[], &[0, 2], DType::I32);
        check_exact(&i.sum_axis(0), &Nd::full(&[2], 0.0), DType::I32, &format!("i32 sum over empty on {dev}"));
        check_exact(&i.prod_axis(0), &Nd::full(&[2], 1.0), DType::I32, &format!("i32 prod over empty on {dev}"));
        // A broadcast constant with an empty inner axis.
        check_f32(&Tensor::zeros([2, 0]).sum_axis(1), &Nd::full(&[2], 0.0), &format!("sum of zeros([2,0]) on {dev}"));
        // Shrunk to nothing, then reduced.
        let (full, fr) = (Nd::iota(&[3, 4]).f32(), Nd::full(&[3], 0.0));
        check_f32(&full.shrink(&[(0, 3), (2, 2)]).sum_axis(1), &fr, &format!("sum of shrunk-to-empty on {dev}"));
    });
}

#[test]
fn reductions_over_empty_inner_axis_of_a_buffer() {
    for_each_device(|dev| {
        let e = Nd::new(&[2, 0], vec![]);
        check_f32(&e.f32().sum_axis(1), &Nd::full(&[2], 0.0), &format!("sum over empty inner axis on {dev}"));
        check_f32(&e.f32().sum_keepdim(1), &Nd::full(&[2, 1], 0.0), &format!("sum_keepdim on {dev}"));
        check_f32(&e.f32().prod_axis(1), &Nd::full(&[2], 1.0), &format!("prod over empty inner axis on {dev}"));
        let i = tensor_of(&[], &[2, 0, 3], DType::I32);
        check_exact(&i.sum_axis(1), &Nd::full(&[2, 3], 0.0), DType::I32, &format!("i32 [2,0,3] sum(1) on {dev}"));
    });
}

#[test]
fn reductions_over_empty_axis_of_an_intermediate() {
    for_each_device(|dev| {
        let x = Nd::iota(&[2, 3]).f32().shrink(&[(0, 2), (1, 1)]).contiguous();
        check_f32(&x.sum_axis(1), &Nd::full(&[2], 0.0), &format!("sum over empty axis of contiguous on {dev}"));
    });
}

// ---------------------------------------------------------------- dtypes

#[test]
fn integer_sums_and_products() {
    for_each_device(|dev| {
        let mut rng = Rng::new(17);
        let x = Nd::rand_int(&mut rng, &[3, 5], -100_000, 100_000);
        let c = |w: &str| format!("{w} on {dev}");
        check_exact(&x.to(|v| v as i32).sum_axis(1), &x.sum(&[1], false), DType::I32, &c("i32 sum"));
        check_exact(&x.to(|v| v as i32).t().sum_axis(0), &x.sum(&[1], false), DType::I32, &c("i32 sum of t"));
        check_exact(&x.to(|v| v as i64).sum(), &x.sum(&[0, 1], false), DType::I64, &c("i64 sum"));
        // Small ints accumulate in 32 bits: 255 * 6 does not wrap in u8.
        let u = Nd::full(&[2, 6], 255.0);
        check_exact(&u.to(|v| v as u8).sum_axis(1), &u.sum(&[1], false), DType::U32, &c("u8 sum -> u32"));
        let s = Nd::full(&[100], -128.0);
        check_exact(&s.to(|v| v as i8).sum(), &Nd::scalar(-12800.0), DType::I32, &c("i8 sum -> i32"));
        check_exact(&s.to(|v| v as i16).sum(), &Nd::scalar(-12800.0), DType::I32, &c("i16 sum -> i32"));
        let p = Nd::new(&[2, 3], vec![2.0, -3.0, 4.0, 1.0, 5.0, -1.0]);
        check_exact(&p.to(|v| v as i32).prod_axis(1), &p.prod(&[1], false), DType::I32, &c("i32 prod"));
        // Mean of ints is float32.
        let m = Nd::new(&[2, 2], vec![1.0, 2.0, 3.0, 5.0]);
        check_f32(&m.to(|v| v as i32).mean_axis(1), &Nd::new(&[2], vec![1.5, 4.0]), &c("i32 mean"));
    });
}

#[test]
fn integer_max_and_min() {
    for_each_device(|dev| {
        let c = |w: &str| format!("{w} on {dev}");
        let u = Nd::new(&[2, 4], vec![0.0, 255.0, 17.0, 3.0, 9.0, 200.0, 1.0, 128.0]);
        let ut = u.to(|v| v as u8);
        check_exact(&ut.max_axis(1), &u.max(&[1], false), DType::U8, &c("u8 max"));
        check_exact(&ut.min_axis(1), &u.min(&[1], false), DType::U8, &c("u8 min"));
        check_exact(&ut.max(), &Nd::scalar(255.0), DType::U8, &c("u8 max()"));
        check_exact(&ut.min(), &Nd::scalar(0.0), DType::U8, &c("u8 min()"));
        check_exact(&ut.t().min_keepdim(0), &u.min(&[1], true).transpose(0, 1), DType::U8, &c("u8 min of t"));
        let i = Nd::new(&[2, 3], vec![-7.0, 4.0, -2.0, 2147483647.0, -2147483647.0, 0.0]);
        let it = i.to(|v| v as i32);
        check_exact(&it.max_axis(0), &i.max(&[0], false), DType::I32, &c("i32 max"));
        check_exact(&it.min_axis(0), &i.min(&[0], false), DType::I32, &c("i32 min"));
        check_exact(&it.min_axis(1), &i.min(&[1], false), DType::I32, &c("i32 min axis 1"));
        let l = Nd::new(&[3], vec![-5e15, 3e15, 7.0]);
        check_exact(&l.to(|v| v as i64).max(), &Nd::scalar(3e15), DType::I64, &c("i64 max"));
        check_exact(&l.to(|v| v as i64).min(), &Nd::scalar(-5e15), DType::I64, &c("i64 min"));
    });
}

#[test]
fn integer_min_with_type_minimum() {
    for_each_device(|dev| {
        let t = Tensor::from_slice(&[0i32, i32::MIN, 5]);
        assert_eq!(t.min().item::<i32>().unwrap(), i32::MIN, "i32 min on {dev}");
        let b = Tensor::from_slice(&[3i8, -128, 100]);
        assert_eq!(b.min().item::<i8>().unwrap(), -128, "i8 min on {dev}");
    });
}

#[test]
fn bool_reductions() {
    for_each_device(|dev| {
        let c = |w: &str| format!("{w} on {dev}");
        let b = Nd::new(&[3, 3], vec![1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        let bt = b.to(|v| v != 0.0);
        check_exact(&bt.sum_axis(1), &b.sum(&[1], false), DType::I32, &c("bool sum counts"));
        check_exact(&bt.sum(), &Nd::scalar(5.0), DType::I32, &c("bool sum()"));
        check_exact(&bt.max_axis(1), &b.max(&[1], false), DType::BOOL, &c("bool max (any)"));
        check_exact(&bt.min_axis(1), &b.min(&[1], false), DType::BOOL, &c("bool min (all)"));
        check_exact(&bt.t().max_axis(1), &b.max(&[0], false), DType::BOOL, &c("bool max of t"));
        // Counting with a comparison.
        let x = Nd::iota(&[4, 5]);
        let want = x.map(|v| b2f(v % 3.0 == 0.0)).sum(&[1], false);
        let t = x.f32();
        let got = t.sub(t.div(3.0).trunc().mul(3.0)).eq(0.0).sum_axis(1);
        check_exact(&got, &want, DType::I32, &c("count multiples of 3"));
    });
}

#[test]
fn half_precision_sums_accumulate_in_f32() {
    // 4096 ones: an f16 accumulator would stop at 2048; accumulating in f32 gives 4096, which f16
    // represents exactly.
    for_each_device(|dev| {
        let ones = tensor_of(&vec![1.0; 4096], &[4096], DType::F16);
        check_exact(&ones.sum(), &Nd::scalar(4096.0), DType::F16, &format!("f16 sum on {dev}"));
        let bones = tensor_of(&vec![1.0; 4096], &[64, 64], DType::BF16);
        check_exact(&bones.sum(), &Nd::scalar(4096.0), DType::BF16, &format!("bf16 sum on {dev}"));
        let h = Nd::new(&[2, 2], vec![0.5, -1.5, 2.0, 65504.0]);
        check_exact(
            &tensor_of(&h.data, &[2, 2], DType::F16).max_axis(0),
            &h.max(&[0], false),
            DType::F16,
            &format!("f16 max on {dev}"),
        );
    });
}

// ---------------------------------------------------------------- compositions

#[test]
fn reductions_of_reductions() {
    for_each_device(|dev| {
        let mut rng = Rng::new(4);
        let x = Nd::rand(&mut rng, &[3, 4, 5], -2.0, 2.0);
        let t = x.f32();
        let c = |w: &str| format!("{w} on {dev}");
        check_f32(&t.sum_axis(2).max_axis(0), &x.sum(&[2], false).max(&[0], false), &c("max(sum)"));
        check_f32(&t.max_keepdim(1).sum_axis(0), &x.max(&[1], true).sum(&[0], false), &c("sum(max_keepdim)"));
        check_f32(&t.min_axis(0).mean(), &x.min(&[0], false).mean(&[0, 1], false), &c("mean(min)"));
        check_f32(&t.sum_axis(1).sum_axis(0).sum(), &x.sum(&[0, 1, 2], false), &c("sum(sum(sum))"));
        let want = x.max(&[2], false).transpose(0, 1).sum(&[1], false);
        check_f32(&t.max_axis(2).t().sum_axis(1), &want, &c("sum over t of max"));
    });
}

#[test]
fn reduce_after_broadcast() {
    for_each_device(|dev| {
        let mut rng = Rng::new(6);
        let (a, b) = (Nd::rand(&mut rng, &[3, 1], -1.0, 1.0), Nd::rand(&mut rng, &[4], -1.0, 1.0));
        let ab = a.zip(&b, |p, q| p * q + p);
        let t = a.f32().mul(b.f32()).add(a.f32());
        let c = |w: &str| format!("{w} on {dev}");
        check_f32(&t.sum_axis(0), &ab.sum(&[0], false), &c("sum(a*b+a, 0)"));
        check_f32(&t.sum_axis(1), &ab.sum(&[1], false), &c("sum(a*b+a, 1)"));
        check_f32(&t.max(), &ab.max(&[0, 1], false), &c("max(a*b+a)"));
        // The sum of a broadcast constant counts the elements.
        check_f32(&Tensor::ones([7, 9]).sum(), &Nd::scalar(63.0), &c("sum of ones"));
        check_f32(&Tensor::full([3, 4], 2.5).sum_axis(1), &Nd::full(&[3], 10.0), &c("sum of full"));
        check_f32(&Tensor::full([2, 3], 2.0).prod(), &Nd::scalar(64.0), &c("prod of full"));
    });
}

#[test]
fn elementwise_after_reduce_broadcasts_back() {
    for_each_device(|dev| {
        let mut rng = Rng::new(12);
        let x = Nd::rand(&mut rng, &[4, 6], -3.0, 3.0);
        let t = x.f32();
        let c = |w: &str| format!("{w} on {dev}");
        let centered = x.zip(&x.mean(&[1], true), |p, q| p - q);
        check_f32(&t.sub(t.mean_keepdim(1)), &centered, &c("x - mean_keepdim(1)"));
        let var = centered.map(|v| v * v).mean(&[1], true);
        let tc = t.sub(t.mean_keepdim(1));
        check_f32(&tc.square().mean_keepdim(1), &var, &c("variance"));
        let norm = centered.zip(&var, |p, v| p / (v + 1e-5).sqrt());
        check_f32(&tc.div(tc.square().mean_keepdim(1).add(1e-5).sqrt()), &norm, &c("layer norm"));
        // Along axis 0 on a transposed view.
        let xt = x.transpose(0, 1);
        let want = xt.zip(&xt.max(&[0], true), |p, q| p - q);
        check_f32(&t.t().sub(t.t().max_keepdim(0)), &want, &c("x.t() - max_keepdim(0)"));
        // Divide by the total.
        let want = x.zip(&x.map(f64::abs).sum(&[0, 1], false), |p, s| p / s);
        check_f32(&t.div(t.abs().sum()), &want, &c("x / sum(|x|)"));
    });
}

fn softmax_ref(x: &Nd, axis: usize) -> Nd {
    let e = x.zip(&x.max(&[axis], true), |p, m| (p - m).exp());
    e.zip(&e.sum(&[axis], true), |p, s| p / s)
}

fn softmax(t: &Tensor, axis: isize) -> Tensor {
    let e = t.sub(t.max_keepdim(axis)).exp();
    e.div(e.sum_keepdim(axis))
}

#[test]
fn softmax_from_public_ops() {
    for_each_device(|dev| {
        let mut rng = Rng::new(77);
        let x = Nd::rand(&mut rng, &[3, 5], -10.0, 10.0);
        let t = x.f32();
        let c = |w: &str| format!("{w} on {dev}");
        check_f32(&softmax(&t, -1), &softmax_ref(&x, 1), &c("softmax(-1)"));
        check_f32(&softmax(&t, 0), &softmax_ref(&x, 0), &c("softmax(0)"));
        check_f32(&softmax(&t.t(), 1), &softmax_ref(&x.transpose(0, 1), 1), &c("softmax of t"));
        check_f32(&softmax(&t, 1).sum_axis(1), &Nd::full(&[3], 1.0), &c("softmax rows sum to 1"));
        // Large logits: subtracting the max keeps exp finite.
        let big = Nd::new(&[1, 3], vec![1000.0, 1001.0, 999.0]);
        check_f32(&softmax(&big.f32(), 1), &softmax_ref(&big, 1), &c("softmax of large logits"));
        // 3-d, middle axis, size-1 leading axis.
        let y = Nd::rand(&mut rng, &[1, 4, 3], -2.0, 2.0);
        check_f32(&softmax(&y.f32(), 1), &softmax_ref(&y, 1), &c("softmax 3-d axis 1"));
        // log-softmax.
        let ls = x.zip(&x.max(&[1], true), |p, m| p - m);
        let ls = ls.zip(&ls.map(f64::exp).sum(&[1], true), |p, s| p - s.ln());
        let tm = t.sub(t.max_keepdim(1));
        check_f32(&tm.sub(tm.exp().sum_keepdim(1).log()), &ls, &c("log_softmax"));
    });
}

#[test]
#[should_panic(expected = "max: axis -3 out of range for shape [2, 3] (2 dims)")]
fn max_axis_out_of_range_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).max_axis(-3);
    });
}

#[test]
fn axis_0_of_a_scalar_is_the_scalar() {
    // As PyTorch: a 0-d tensor takes axis 0 or -1 (as if it had one axis of size 1).
    for_each_device(|dev| {
        let s = Tensor::scalar(2.5f32);
        assert_eq!(s.mean_axis(0).to_vec::<f32>().unwrap(), vec![2.5], "mean on {dev}");
        assert_eq!(s.sum_keepdim(-1).shape(), Vec::<usize>::new(), "sum keepdim on {dev}");
    });
}

#[test]
#[should_panic(expected = "mean: axis 1 out of range for a 0-d tensor (it takes 0 or -1)")]
fn mean_axis_1_of_scalar_panics() {
    for_each_device(|_| {
        let _ = Tensor::scalar(1.0f32).mean_axis(1);
    });
}

#[test]
fn realize_all_computes_several_reductions_of_one_input() {
    for_each_device(|dev| {
        let mut rng = Rng::new(31);
        let x = Nd::rand(&mut rng, &[5, 7], -4.0, 4.0);
        let t = x.f32().exp().add(1.0);
        let xe = x.map(|v| v.exp() + 1.0);
        let (s, m, n) = (t.sum_axis(1), t.max_axis(0), t.min());
        Tensor::realize_all(&[&s, &m, &n]).unwrap_or_else(|e| panic!("realize_all on {dev}: {e}"));
        check_f32(&s, &xe.sum(&[1], false), &format!("sum after realize_all on {dev}"));
        check_f32(&m, &xe.max(&[0], false), &format!("max after realize_all on {dev}"));
        check_f32(&n, &xe.min(&[0, 1], false), &format!("min after realize_all on {dev}"));
        // The realized results feed further work.
        check_f32(
            &s.div(n.clone()),
            &xe.sum(&[1], false).map(|v| v / xe.min(&[0, 1], false).data[0]),
            &format!("reuse on {dev}"),
        );
    });
}
