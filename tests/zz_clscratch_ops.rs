//! Elementwise ops: unary math, binary ops with broadcasting and dtype promotion, comparisons,
//! `where_`, casts, operator overloads and weakly typed scalars, checked against f64 loops.

#[path = "/tmp/clsuite/common.rs"] mod common;

use common::*;
use ferrograd::{DType, Tensor};

// ---------------------------------------------------------------- layouts

/// Inputs of the shapes and layouts every op is checked on: a contiguous tensor, a 0-d tensor,
/// size-1 axes, views that are not contiguous (transpose, permute, shrink + flip, expand), and an
/// empty tensor. Each comes with its reference values.
fn unary_inputs(rng: &mut Rng, lo: f64, hi: f64) -> Vec<(&'static str, Tensor, Nd)> {
    let mut out = Vec::new();
    let x = Nd::rand(rng, &[3, 4], lo, hi);
    out.push(("contiguous [3,4]", x.f32(), x));
    let x = Nd::rand(rng, &[], lo, hi);
    out.push(("0-d", x.f32(), x));
    let x = Nd::rand(rng, &[1, 5, 1], lo, hi);
    out.push(("size-1 axes [1,5,1]", x.f32(), x));
    let x = Nd::rand(rng, &[4, 3], lo, hi);
    out.push(("transposed [4,3].t()", x.f32().t(), x.transpose(0, 1)));
    let x = Nd::rand(rng, &[2, 3, 4], lo, hi);
    out.push(("permuted [2,3,4]->[4,2,3]", x.f32().permute([2, 0, 1]), x.permute(&[2, 0, 1])));
    let x = Nd::rand(rng, &[5, 6], lo, hi);
    let r = [(1, 4), (2, 6)];
    out.push(("shrunk+flipped [5,6]", x.f32().shrink(&r).flip(1), x.shrink(&r).flip(&[1])));
    let x = Nd::rand(rng, &[3, 1], lo, hi);
    out.push(("expanded [3,1]->[3,4]", x.f32().expand([3, 4]), x.expand(&[3, 4])));
    let x = Nd::rand(rng, &[0, 3], lo, hi);
    out.push(("empty [0,3]", x.f32(), x));
    out
}

/// Checks a float unary op on every layout of [`unary_inputs`] and both devices.
fn check_unary(name: &str, lo: f64, hi: f64, atol: f64, f: impl Fn(&Tensor) -> Tensor, r: impl Fn(f64) -> f64) {
    for_each_device(|dev| {
        let mut rng = Rng::new(name.len() as u64 * 7919);
        for (label, x, xr) in unary_inputs(&mut rng, lo, hi) {
            let y = f(&x);
            assert_tensor(&y, &xr.map(&r), DType::F32, atol, RTOL, &format!("{name} on {dev}, {label}"));
        }
    });
}

/// Pairs of operand shapes and layouts for binary ops (broadcasting, 0-d, views, empty).
fn binary_inputs(rng: &mut Rng, a: (f64, f64), b: (f64, f64)) -> Vec<(&'static str, Tensor, Nd, Tensor, Nd)> {
    let pairs: [(&'static str, &[usize], &[usize]); 7] = [
        ("[3,4] & [3,4]", &[3, 4], &[3, 4]),
        ("[3,1] & [4]", &[3, 1], &[4]),
        ("[] & [2,3]", &[], &[2, 3]),
        ("[2,1,4] & [3,1]", &[2, 1, 4], &[3, 1]),
        ("[1] & []", &[1], &[]),
        ("[0,4] & [4]", &[0, 4], &[4]),
        ("[5,1,1] & [1,1,2]", &[5, 1, 1], &[1, 1, 2]),
    ];
    let mut out = Vec::new();
    for (label, sa, sb) in pairs {
        let (x, y) = (Nd::rand(rng, sa, a.0, a.1), Nd::rand(rng, sb, b.0, b.1));
        out.push((label, x.f32(), x, y.f32(), y));
    }
    // Views that are not contiguous on both sides.
    let (x, y) = (Nd::rand(rng, &[4, 3], a.0, a.1), Nd::rand(rng, &[1, 4], b.0, b.1));
    out.push(("[4,3].t() & [1,4]", x.f32().t(), x.transpose(0, 1), y.f32(), y));
    let (x, y) = (Nd::rand(rng, &[2, 5], a.0, a.1), Nd::rand(rng, &[7], b.0, b.1));
    let (xt, yt) = (x.f32().flip(1), y.f32().shrink(&[(1, 6)]));
    out.push(("flip [2,5] & shrink [7]->[5]", xt, x.flip(&[1]), yt, y.shrink(&[(1, 6)])));
    out
}

fn check_binary(
    name: &str,
    a: (f64, f64),
    b: (f64, f64),
    f: impl Fn(&Tensor, &Tensor) -> Tensor,
    r: impl Fn(f64, f64) -> f64,
) {
    for_each_device(|dev| {
        let mut rng = Rng::new(name.len() as u64 * 104729);
        for (label, x, xr, y, yr) in binary_inputs(&mut rng, a, b) {
            let z = f(&x, &y);
            assert_tensor(&z, &xr.zip(&yr, &r), DType::F32, ATOL, RTOL, &format!("{name} on {dev}, {label}"));
        }
    });
}

// ---------------------------------------------------------------- unary

#[test]
fn exp_matches_reference() {
    check_unary("exp", -10.0, 10.0, ATOL, |x| x.exp(), f64::exp);
}
#[test]
fn log_matches_reference() {
    check_unary("log", 1e-3, 100.0, ATOL, |x| x.log(), f64::ln);
}
#[test]
fn exp2_matches_reference() {
    check_unary("exp2", -20.0, 20.0, ATOL, |x| x.exp2(), f64::exp2);
}
#[test]
fn log2_matches_reference() {
    check_unary("log2", 1e-4, 1e4, ATOL, |x| x.log2(), f64::log2);
}
#[test]
fn sqrt_matches_reference() {
    check_unary("sqrt", 0.0, 100.0, ATOL, |x| x.sqrt(), f64::sqrt);
}
// sin/cos on |x| <= 10: the f32 input itself and cos's `pi/2 - x` carry rounding errors up to
// ~5e-7 in the argument, so the absolute tolerance is loosened to 1e-5 (values cross zero).
#[test]
fn sin_matches_reference() {
    check_unary("sin", -10.0, 10.0, 1e-5, |x| x.sin(), f64::sin);
}
#[test]
fn cos_matches_reference() {
    check_unary("cos", -10.0, 10.0, 1e-5, |x| x.cos(), f64::cos);
}
#[test]
fn relu_matches_reference() {
    check_unary("relu", -3.0, 3.0, ATOL, |x| x.relu(), |v| v.max(0.0));
}
#[test]
fn sigmoid_matches_reference() {
    check_unary("sigmoid", -12.0, 12.0, ATOL, |x| x.sigmoid(), |v| 1.0 / (1.0 + (-v).exp()));
}
#[test]
fn tanh_matches_reference() {
    check_unary("tanh", -6.0, 6.0, ATOL, |x| x.tanh(), f64::tanh);
}
#[test]
fn abs_matches_reference() {
    check_unary("abs", -5.0, 5.0, ATOL, |x| x.abs(), f64::abs);
}
#[test]
fn neg_matches_reference() {
    check_unary("neg", -5.0, 5.0, ATOL, |x| x.neg(), |v| -v);
}
#[test]
fn reciprocal_matches_reference() {
    check_unary("reciprocal", 0.1, 10.0, ATOL, |x| x.reciprocal(), |v| 1.0 / v);
}
#[test]
fn square_matches_reference() {
    check_unary("square", -5.0, 5.0, ATOL, |x| x.square(), |v| v * v);
}
#[test]
fn trunc_rounds_toward_zero() {
    check_unary("trunc", -8.0, 8.0, ATOL, |x| x.trunc(), f64::trunc);
}
#[test]
fn chained_unary_ops_fuse_correctly() {
    check_unary("chain", -2.0, 2.0, ATOL, |x| x.exp().add(1.0).log().sqrt(), |v| (v.exp() + 1.0).ln().sqrt());
}

#[test]
fn unary_ops_on_integers() {
    for_each_device(|dev| {
        let v = [-7.0, -1.0, 0.0, 3.0, 100.0];
        let x = tensor_of(&v, &[5], DType::I32);
        let xr = Nd::new(&[5], v.to_vec());
        check_exact(&x.neg(), &xr.map(|v| -v), DType::I32, &format!("neg i32 on {dev}"));
        check_exact(&x.abs(), &xr.map(f64::abs), DType::I32, &format!("abs i32 on {dev}"));
        check_exact(&x.square(), &xr.map(|v| v * v), DType::I32, &format!("square i32 on {dev}"));
        check_exact(&x.relu(), &xr.map(|v| v.max(0.0)), DType::I32, &format!("relu i32 on {dev}"));
        // Float functions of ints compute in float32.
        check_f32(&x.cast(DType::F32).add(8.0).sqrt(), &xr.map(|v| (v + 8.0).sqrt()), &format!("sqrt on {dev}"));
        let pos = tensor_of(&[1.0, 2.0, 4.0], &[3], DType::I32);
        check_f32(&pos.reciprocal(), &Nd::new(&[3], vec![1.0, 0.5, 0.25]), &format!("recip i32 on {dev}"));
        check_f32(&pos.log2(), &Nd::new(&[3], vec![0.0, 1.0, 2.0]), &format!("log2 i32 on {dev}"));
        check_f32(&pos.exp2(), &Nd::new(&[3], vec![2.0, 4.0, 16.0]), &format!("exp2 i32 on {dev}"));
    });
}

// ---------------------------------------------------------------- binary

#[test]
fn add_broadcasts() {
    check_binary("add", (-5.0, 5.0), (-5.0, 5.0), |a, b| a.add(b), |x, y| x + y);
}
#[test]
fn sub_broadcasts() {
    check_binary("sub", (-5.0, 5.0), (-5.0, 5.0), |a, b| a.sub(b), |x, y| x - y);
}
#[test]
fn mul_broadcasts() {
    check_binary("mul", (-5.0, 5.0), (-5.0, 5.0), |a, b| a.mul(b), |x, y| x * y);
}
#[test]
fn div_broadcasts() {
    check_binary("div", (-5.0, 5.0), (0.25, 4.0), |a, b| a.div(b), |x, y| x / y);
}
#[test]
fn maximum_broadcasts() {
    check_binary("maximum", (-5.0, 5.0), (-5.0, 5.0), |a, b| a.maximum(b), f64::max);
}
#[test]
fn minimum_broadcasts() {
    check_binary("minimum", (-5.0, 5.0), (-5.0, 5.0), |a, b| a.minimum(b), f64::min);
}
#[test]
fn pow_positive_bases() {
    check_binary("pow", (0.1, 4.0), (-3.0, 3.0), |a, b| a.pow(b), f64::powf);
}

#[test]
fn pow_special_cases() {
    // (base, exponent, expected): negative bases with integer exponents keep their sign,
    // 0^0 = 1, non-integer powers of negatives are NaN.
    let cases: [(f64, f64, f64); 12] = [
        (-2.0, 3.0, -8.0),
        (-2.0, 2.0, 4.0),
        (-3.0, 1.0, -3.0),
        (-2.0, -1.0, -0.5),
        (-2.0, -2.0, 0.25),
        (-1.5, 0.0, 1.0),
        (0.0, 0.0, 1.0),
        (0.0, 2.0, 0.0),
        (0.0, -1.0, f64::INFINITY),
        (2.0, 10.0, 1024.0),
        (-8.0, 0.5, f64::NAN),
        (4.0, 0.5, 2.0),
    ];
    let (bases, exps): (Vec<f64>, Vec<f64>) = cases.iter().map(|c| (c.0, c.1)).unzip();
    let want = Nd::new(&[cases.len()], cases.iter().map(|c| c.2).collect());
    for_each_device(|dev| {
        let n = cases.len();
        let (a, b) = (Nd::new(&[n], bases.clone()).f32(), Nd::new(&[n], exps.clone()).f32());
        check_f32(&a.pow(&b), &want, &format!("pow table on {dev}"));
        // Scalar exponents, and an integer tensor raised to a float.
        let x = Nd::new(&[2, 2], vec![-2.0, -1.0, 0.5, 3.0]);
        check_f32(&x.f32().pow(3), &x.map(|v| v.powi(3)), &format!("pow(3) on {dev}"));
        check_f32(&x.f32().pow(2.0), &x.map(|v| v * v), &format!("pow(2.0) on {dev}"));
        let i = tensor_of(&[1.0, 4.0, 9.0], &[3], DType::I32);
        check_f32(&i.pow(0.5), &Nd::new(&[3], vec![1.0, 2.0, 3.0]), &format!("int pow on {dev}"));
    });
}

#[test]
fn integer_arithmetic_is_exact() {
    for_each_device(|dev| {
        let mut rng = Rng::new(5);
        let (x, y) = (Nd::rand_int(&mut rng, &[3, 1], -1000, 1000), Nd::rand_int(&mut rng, &[4], -1000, 1000));
        let (a, b) = (x.to(|v| v as i32), y.to(|v| v as i32));
        check_exact(&a.add(&b), &x.zip(&y, |p, q| p + q), DType::I32, &format!("i32 add on {dev}"));
        check_exact(&a.sub(&b), &x.zip(&y, |p, q| p - q), DType::I32, &format!("i32 sub on {dev}"));
        check_exact(&a.mul(&b), &x.zip(&y, |p, q| p * q), DType::I32, &format!("i32 mul on {dev}"));
        check_exact(&a.maximum(&b), &x.zip(&y, f64::max), DType::I32, &format!("i32 max on {dev}"));
        check_exact(&a.minimum(&b), &x.zip(&y, f64::min), DType::I32, &format!("i32 min on {dev}"));
    });
}

#[test]
fn integer_division_is_true_division_in_float32() {
    for_each_device(|dev| {
        let a = tensor_of(&[7.0, -7.0, 1.0, 0.0, 9.0, -9.0], &[2, 3], DType::I32);
        let b = tensor_of(&[2.0, 2.0, 3.0], &[3], DType::I32);
        let want = Nd::new(&[2, 3], vec![3.5, -3.5, 1.0 / 3.0, 0.0, 4.5, -3.0]);
        check_f32(&a.div(&b), &want, &format!("int/int on {dev}"));
        let u = tensor_of(&[1.0, 255.0], &[2], DType::U8);
        check_f32(&(&u / 2), &Nd::new(&[2], vec![0.5, 127.5]), &format!("u8/2 on {dev}"));
    });
}

// ---------------------------------------------------------------- comparisons and bitwise

fn check_cmp(name: &str, f: impl Fn(&Tensor, &Tensor) -> Tensor, r: impl Fn(f64, f64) -> bool) {
    for_each_device(|dev| {
        let mut rng = Rng::new(name.len() as u64 + 11);
        // Small integers as floats, so that equal elements actually occur.
        let pairs: [(&[usize], &[usize]); 4] = [(&[3, 4], &[3, 4]), (&[3, 1], &[4]), (&[], &[2, 3]), (&[0, 2], &[2])];
        for (sa, sb) in pairs {
            let (x, y) = (Nd::rand_int(&mut rng, sa, -2, 2), Nd::rand_int(&mut rng, sb, -2, 2));
            let want = x.zip(&y, |p, q| b2f(r(p, q)));
            let ctx = format!("{name} on {dev}, {sa:?} & {sb:?}");
            check_exact(&f(&x.f32(), &y.f32()), &want, DType::BOOL, &format!("{ctx} (f32)"));
            check_exact(&f(&x.to(|v| v as i32), &y.to(|v| v as i32)), &want, DType::BOOL, &format!("{ctx} (i32)"));
        }
        // A non-contiguous left side.
        let (x, y) = (Nd::rand_int(&mut rng, &[4, 3], -2, 2), Nd::rand_int(&mut rng, &[3, 1], -2, 2));
        let want = x.transpose(0, 1).zip(&y, |p, q| b2f(r(p, q)));
        check_exact(&f(&x.f32().t(), &y.f32()), &want, DType::BOOL, &format!("{name} on {dev}, transposed"));
    });
}

#[test]
fn lt_compares() {
    check_cmp("lt", |a, b| a.lt(b), |x, y| x < y);
}
#[test]
fn gt_compares() {
    check_cmp("gt", |a, b| a.gt(b), |x, y| x > y);
}
#[test]
fn le_compares() {
    check_cmp("le", |a, b| a.le(b), |x, y| x <= y);
}
#[test]
fn ge_compares() {
    check_cmp("ge", |a, b| a.ge(b), |x, y| x >= y);
}
#[test]
fn eq_compares() {
    check_cmp("eq", |a, b| a.eq(b), |x, y| x == y);
}
#[test]
fn ne_compares() {
    check_cmp("ne", |a, b| a.ne(b), |x, y| x != y);
}

#[test]
fn comparisons_with_scalars() {
    for_each_device(|dev| {
        let x = Nd::new(&[5], vec![-1.5, 0.0, 0.5, 1.0, 2.0]);
        let t = x.f32();
        check_exact(&t.lt(0.5), &x.map(|v| b2f(v < 0.5)), DType::BOOL, &format!("lt 0.5 on {dev}"));
        check_exact(&t.ge(1), &x.map(|v| b2f(v >= 1.0)), DType::BOOL, &format!("ge 1 on {dev}"));
        check_exact(&t.eq(0.0), &x.map(|v| b2f(v == 0.0)), DType::BOOL, &format!("eq 0 on {dev}"));
        let i = tensor_of(&[1.0, 2.0, 3.0], &[3], DType::I32);
        // An int compared with a float scalar compares in float: 2 < 2.5.
        check_exact(&i.lt(2.5), &Nd::new(&[3], vec![1.0, 1.0, 0.0]), DType::BOOL, &format!("i32 lt 2.5 on {dev}"));
    });
}

#[test]
fn bitwise_ops_on_ints_and_bools() {
    for_each_device(|dev| {
        let (xv, yv) = ([12.0, 10.0, -1.0, 0.0], [10.0, 6.0, 255.0, 7.0]);
        let (x, y) = (tensor_of(&xv, &[4], DType::I32), tensor_of(&yv, &[4], DType::I32));
        let r = |f: fn(i32, i32) -> i32| Nd::new(&[4], (0..4).map(|i| f(xv[i] as i32, yv[i] as i32) as f64).collect());
        check_exact(&(&x & &y), &r(|a, b| a & b), DType::I32, &format!("and on {dev}"));
        check_exact(&(&x | &y), &r(|a, b| a | b), DType::I32, &format!("or on {dev}"));
        check_exact(&(&x ^ &y), &r(|a, b| a ^ b), DType::I32, &format!("xor on {dev}"));
        let s = tensor_of(&[1.0, 2.0, 3.0, 4.0], &[4], DType::I32);
        check_exact(&s.shl(3), &Nd::new(&[4], vec![8.0, 16.0, 24.0, 32.0]), DType::I32, &format!("shl on {dev}"));
        check_exact(&s.shr(1), &Nd::new(&[4], vec![0.0, 1.0, 1.0, 2.0]), DType::I32, &format!("shr on {dev}"));
        let (p, q) =
            (tensor_of(&[0.0, 0.0, 1.0, 1.0], &[4], DType::BOOL), tensor_of(&[0.0, 1.0, 0.0, 1.0], &[4], DType::BOOL));
        check_exact(&(&p | &q), &Nd::new(&[4], vec![0.0, 1.0, 1.0, 1.0]), DType::BOOL, &format!("bool | on {dev}"));
        check_exact(&(&p & &q), &Nd::new(&[4], vec![0.0, 0.0, 0.0, 1.0]), DType::BOOL, &format!("bool & on {dev}"));
        check_exact(&(&p ^ &q), &Nd::new(&[4], vec![0.0, 1.0, 1.0, 0.0]), DType::BOOL, &format!("bool ^ on {dev}"));
        check_exact(&p.logical_not(), &Nd::new(&[4], vec![1.0, 1.0, 0.0, 0.0]), DType::BOOL, &format!("not on {dev}"));
        check_exact(&(-&p), &Nd::new(&[4], vec![1.0, 1.0, 0.0, 0.0]), DType::BOOL, &format!("-bool on {dev}"));
    });
}

// ---------------------------------------------------------------- where

#[test]
fn where_selects_with_broadcasting() {
    for_each_device(|dev| {
        let mut rng = Rng::new(3);
        let c = Nd::rand_int(&mut rng, &[3, 1], 0, 1);
        let a = Nd::rand(&mut rng, &[4], -3.0, 3.0);
        let b = Nd::rand(&mut rng, &[2, 1, 1], -3.0, 3.0);
        let ct = c.to(|v| v != 0.0);
        check_f32(&ct.where_(a.f32(), b.f32()), &Nd::where3(&c, &a, &b), &format!("where [3,1]/[4]/[2,1,1] on {dev}"));
        // Scalar branches.
        let want = Nd::where3(&c, &a, &Nd::scalar(0.0));
        check_f32(&ct.where_(a.f32(), 0.0), &want, &format!("where(x, 0.0) on {dev}"));
        let want = Nd::where3(&c, &Nd::scalar(1.0), &Nd::scalar(-1.0)).expand(&[3, 1]);
        check_f32(&ct.where_(1.0, -1.0), &want, &format!("where(1.0, -1.0) on {dev}"));
        // Condition from a comparison on a transposed view.
        let x = Nd::rand(&mut rng, &[4, 3], -1.0, 1.0);
        let xt = x.transpose(0, 1);
        let want = xt.map(|v| if v > 0.0 { v } else { 10.0 * v });
        let t = x.f32().t();
        check_f32(&t.gt(0.0).where_(&t, t.mul(10.0)), &want, &format!("leaky where on {dev}"));
        // Integer branches keep their dtype; a non-bool condition means `!= 0`.
        let ci = tensor_of(&[0.0, 2.0, -1.0], &[3], DType::I32);
        let got = ci.where_(tensor_of(&[1.0, 2.0, 3.0], &[3], DType::I32), 7);
        check_exact(&got, &Nd::new(&[3], vec![7.0, 2.0, 3.0]), DType::I32, &format!("int where on {dev}"));
    });
}

// ---------------------------------------------------------------- casts

#[test]
fn cast_between_dtypes() {
    // (values, from, to, expected)
    let cases: Vec<(Vec<f64>, DType, DType, Vec<f64>)> = vec![
        (vec![-2.7, -0.5, 0.0, 1.9, 100.2], DType::F32, DType::I32, vec![-2.0, 0.0, 0.0, 1.0, 100.0]),
        (vec![0.0, 1.5, 254.9], DType::F32, DType::U8, vec![0.0, 1.0, 254.0]),
        (vec![0.0, -0.0, 0.5, -3.0, f64::NAN], DType::F32, DType::BOOL, vec![0.0, 0.0, 1.0, 1.0, 1.0]),
        (vec![-5.0, 0.0, 16777216.0], DType::I32, DType::F32, vec![-5.0, 0.0, 16777216.0]),
        (vec![300.0, -129.0, 127.0], DType::I32, DType::I8, vec![44.0, 127.0, 127.0]),
        (vec![-1.0, 256.0, 255.0], DType::I32, DType::U8, vec![255.0, 0.0, 255.0]),
        (vec![0.0, 1.0], DType::BOOL, DType::F32, vec![0.0, 1.0]),
        (vec![0.0, 1.0], DType::BOOL, DType::I32, vec![0.0, 1.0]),
        (vec![0.0, 3.0, -1.0], DType::I32, DType::BOOL, vec![0.0, 1.0, 1.0]),
        (vec![200.0, 255.0], DType::U8, DType::I32, vec![200.0, 255.0]),
        (vec![-1.0, 5.0], DType::I8, DType::U8, vec![255.0, 5.0]),
        (vec![0.1, -1e10], DType::F32, DType::F64, vec![0.1f32 as f64, -1e10]),
        (vec![0.1, 1e300], DType::F64, DType::F32, vec![0.1f32 as f64, f64::INFINITY]),
        (vec![-3.0, 4e9], DType::I64, DType::F32, vec![-3.0, 4e9f32 as f64]),
    ];
    for_each_device(|dev| {
        for (vals, from, to, want) in &cases {
            let n = vals.len();
            let t = tensor_of(vals, &[n], *from);
            let ctx = format!("cast {from:?} -> {to:?} on {dev}");
            check_exact(&t.cast(*to), &Nd::new(&[n], want.clone()), *to, &ctx);
            // Through a non-contiguous view as well.
            let flipped: Vec<f64> = want.iter().rev().copied().collect();
            check_exact(&t.flip(0).cast(*to), &Nd::new(&[n], flipped), *to, &format!("{ctx}, flipped"));
        }
    });
}

// ---------------------------------------------------------------- operators and scalars

#[test]
fn operator_overloads() {
    for_each_device(|dev| {
        let mut rng = Rng::new(21);
        let (x, y) = (Nd::rand(&mut rng, &[2, 3], 0.5, 3.0), Nd::rand(&mut rng, &[3], 0.5, 3.0));
        let (a, b) = (x.f32(), y.f32());
        let c = |t: &Tensor, want: Nd, what: &str| check_f32(t, &want, &format!("{what} on {dev}"));
        c(&(&a + &b), x.zip(&y, |p, q| p + q), "&a + &b");
        c(&(&a - &b), x.zip(&y, |p, q| p - q), "&a - &b");
        c(&(&a * &b), x.zip(&y, |p, q| p * q), "&a * &b");
        c(&(&a / &b), x.zip(&y, |p, q| p / q), "&a / &b");
        c(&(a.clone() + b.clone()), x.zip(&y, |p, q| p + q), "a + b (owned)");
        c(&(&a * 2.0), x.map(|v| v * 2.0), "&a * 2.0");
        c(&(&a + 1.5f32), x.map(|v| v + 1.5), "&a + 1.5f32");
        c(&(2.0 - &a), x.map(|v| 2.0 - v), "2.0 - &a");
        c(&(3.0 / &a), x.map(|v| 3.0 / v), "3.0 / &a");
        c(&(2.0 * &a), x.map(|v| 2.0 * v), "2.0 * &a");
        c(&(1.0 + a.clone()), x.map(|v| 1.0 + v), "1.0 + a");
        c(&(-&a), x.map(|v| -v), "-&a");
        c(&(-a.clone()), x.map(|v| -v), "-a");
        c(&((&a - &b) * (&a + 1.0) / 2.0), x.zip(&y, |p, q| (p - q) * (p + 1.0) / 2.0), "expression");
        c(&(&a - 2), x.map(|v| v - 2.0), "&a - 2 (int scalar)");
    });
}

#[test]
fn scalar_operands_are_weakly_typed() {
    for_each_device(|dev| {
        let i = tensor_of(&[1.0, -2.0, 3.0], &[3], DType::I32);
        let f = tensor_of(&[1.5, -2.0, 3.0], &[3], DType::F32);
        let ctx = |w: &str| format!("{w} on {dev}");
        check_f32(&(&i + 2.5), &Nd::new(&[3], vec![3.5, 0.5, 5.5]), &ctx("i32 + 2.5"));
        check_f32(&(&f + 2), &Nd::new(&[3], vec![3.5, 0.0, 5.0]), &ctx("f32 + 2"));
        check_exact(&(&i + 2), &Nd::new(&[3], vec![3.0, 0.0, 5.0]), DType::I32, &ctx("i32 + 2"));
        check_exact(&(10 - &i), &Nd::new(&[3], vec![9.0, 12.0, 7.0]), DType::I32, &ctx("10 - i32"));
        check_f32(&(2.0 - &i), &Nd::new(&[3], vec![1.0, 4.0, -1.0]), &ctx("2.0 - i32"));
        check_exact(&(&i * 3i64), &Nd::new(&[3], vec![3.0, -6.0, 9.0]), DType::I32, &ctx("i32 * 3i64"));
        // Weak ints keep small integer dtypes (and wrap in them).
        let u = tensor_of(&[250.0, 1.0], &[2], DType::U8);
        check_exact(&(&u + 10), &Nd::new(&[2], vec![4.0, 11.0]), DType::U8, &ctx("u8 + 10"));
        let i8t = tensor_of(&[3.0, -4.0], &[2], DType::I8);
        check_f32(&(&i8t * 0.5), &Nd::new(&[2], vec![1.5, -2.0]), &ctx("i8 * 0.5"));
        // A float scalar keeps a half-precision tensor half precision.
        let h = tensor_of(&[1.0, 2.0], &[2], DType::F16);
        check_exact(&(&h * 2.5), &Nd::new(&[2], vec![2.5, 5.0]), DType::F16, &ctx("f16 * 2.5"));
        // An int scalar makes a bool tensor int32.
        let b = tensor_of(&[0.0, 1.0], &[2], DType::BOOL);
        check_exact(&(&b + 1), &Nd::new(&[2], vec![1.0, 2.0]), DType::I32, &ctx("bool + 1"));
        check_f32(&(&b * 1.5), &Nd::new(&[2], vec![0.0, 1.5]), &ctx("bool * 1.5"));
    });
}

#[test]
fn dtype_promotion() {
    // (a, b, result of a + b)
    let cases = [
        (DType::U8, DType::I8, DType::I16),
        (DType::I32, DType::F16, DType::F16),
        (DType::F16, DType::BF16, DType::F32),
        (DType::U8, DType::U16, DType::U16),
        (DType::I8, DType::U32, DType::I64),
        (DType::U32, DType::I32, DType::I64),
        (DType::BOOL, DType::I32, DType::I32),
        (DType::BOOL, DType::F32, DType::F32),
        (DType::I64, DType::F32, DType::F32),
        (DType::F32, DType::F64, DType::F64),
        (DType::I16, DType::I16, DType::I16),
        (DType::BOOL, DType::U8, DType::U8),
    ];
    for_each_device(|dev| {
        let (xv, yv) = ([0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]);
        for (da, db, want) in cases {
            let (a, b) = (tensor_of(&xv, &[2, 2], da), tensor_of(&yv, &[4, 1, 1], db));
            let r = Nd::new(&[2, 2], xv.to_vec()).zip(&Nd::new(&[4, 1, 1], yv.to_vec()), |p, q| p + q);
            let ctx = format!("{da:?} + {db:?} on {dev}");
            assert_eq!(DType::promote(da, db), want, "{ctx}: DType::promote");
            check_exact(&a.add(&b), &r, want, &ctx);
            let m = Nd::new(&[4, 1, 1], yv.to_vec()).zip(&Nd::new(&[2, 2], xv.to_vec()), |p, q| p * q);
            check_exact(&b.mul(&a), &m, want, &format!("{ctx} (mul)"));
        }
        // bool | bool stays bool.
        let p = tensor_of(&[0.0, 1.0], &[2], DType::BOOL);
        assert_eq!((&p | &p).dtype(), DType::BOOL, "bool | bool on {dev}");
    });
}

// ---------------------------------------------------------------- NaN and infinity

#[test]
fn nan_and_inf_inputs() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let x = Nd::new(&[5], vec![inf, -inf, nan, 0.0, -1.0]);
    type Case = (&'static str, fn(&Tensor) -> Tensor, [f64; 5]);
    let cases: [Case; 10] = [
        ("exp", |t| t.exp(), [inf, 0.0, nan, 1.0, (-1f64).exp()]),
        ("log", |t| t.log(), [inf, nan, nan, -inf, nan]),
        ("sqrt", |t| t.sqrt(), [inf, nan, nan, 0.0, nan]),
        // relu = (x <= 0).where(0, x): NaN stays NaN, as in PyTorch.
        ("relu", |t| t.relu(), [inf, 0.0, nan, 0.0, 0.0]),
        ("sigmoid", |t| t.sigmoid(), [1.0, 0.0, nan, 0.5, 1.0 / (1.0 + 1f64.exp())]),
        ("tanh", |t| t.tanh(), [1.0, -1.0, nan, 0.0, (-1f64).tanh()]),
        ("abs", |t| t.abs(), [inf, inf, nan, 0.0, 1.0]),
        ("reciprocal", |t| t.reciprocal(), [0.0, 0.0, nan, inf, -1.0]),
        ("add 1", |t| t.add(1.0), [inf, -inf, nan, 1.0, 0.0]),
        ("exp2", |t| t.exp2(), [inf, 0.0, nan, 1.0, 0.5]),
    ];
    for_each_device(|dev| {
        for (name, f, want) in &cases {
            check_f32(&f(&x.f32()), &Nd::new(&[5], want.to_vec()), &format!("{name} of [inf,-inf,nan,0,-1] on {dev}"));
        }
        // Comparisons with NaN are false, except `!=`.
        let n = Nd::new(&[3], vec![nan, 1.0, nan]).f32();
        let one = Nd::new(&[3], vec![1.0, 1.0, nan]).f32();
        let f = |t: Tensor, w: [f64; 3], what: &str| {
            check_exact(&t, &Nd::new(&[3], w.to_vec()), DType::BOOL, &format!("{what} with NaN on {dev}"))
        };
        f(n.lt(&one), [0.0, 0.0, 0.0], "lt");
        f(n.gt(&one), [0.0, 0.0, 0.0], "gt");
        f(n.eq(&one), [0.0, 1.0, 0.0], "eq");
        f(n.ne(&one), [1.0, 0.0, 1.0], "ne");
        // Division by zero.
        let d = Nd::new(&[3], vec![1.0, -1.0, 0.0]).f32();
        check_f32(&d.div(0.0), &Nd::new(&[3], vec![inf, -inf, nan]), &format!("x / 0 on {dev}"));
    });
}
