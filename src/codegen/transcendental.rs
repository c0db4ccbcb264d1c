//! f64 `EXP2`, `LOG2` and `SIN` from f64 arithmetic and i64 bit operations, for targets whose
//! transcendentals are 32-bit only (SPIR-V's GLSL.std.450 set under WebGPU, PTX's
//! approximations). Each is a range reduction and a polynomial, accurate to a few ulp:
//!
//! - `exp2(x) = e^(f·ln 2) · 2^n`, `n = round(x)`, `|f| ≤ 1/2`: a Taylor polynomial of degree 13
//!   (its truncation below 1e-17), the power of two built from exponent bits in two halves so
//!   results that are subnormal or overflow come out right.
//! - `log2(x) = e + log(m)/ln 2` with `x = m·2^e`, `m ∈ [√½, √2)` from the bits (subnormals
//!   scaled by 2^54 first): `log(m) = 2·atanh(s)`, `s = (m-1)/(m+1)`, `|s| ≤ 0.172`, its odd
//!   series to `s^21`.
//! - `sin(x)`: `x = k·π/2 + r` with π/2 in three parts (Cody and Waite; `k·part1` is exact for
//!   `|k| < 2^20`), then the sine or cosine Taylor polynomial of `r`, `|r| ≤ π/4`, by quadrant.
//!   Within a few ulp while `|k| < 2^20` (`|x| < 1.6e6`); beyond, `k·part1` rounds and the
//!   absolute error grows as `|x|·1e-16` (no Payne–Hanek reduction); from `|x| ≥ 2^62`, where
//!   the quadrant no longer fits an i64, the result is NaN.
//!
//! Specials as IEEE: NaN gives NaN; `exp2(±inf)` is inf/0; `log2` of a negative is NaN, of 0
//! `-inf`, of inf inf; `sin(±inf)` is NaN.

use crate::uop::{DType, Ops, UOp};

fn f(v: f64) -> UOp {
    UOp::float(DType::F64, v)
}
fn i(v: i64) -> UOp {
    UOp::int(DType::I64, v)
}
fn is_nan(x: &UOp) -> UOp {
    x.ne(x)
}
/// Horner's rule: `c[0] + x·(c[1] + x·(c[2] + …))`.
fn poly(x: &UOp, c: &[f64]) -> UOp {
    c.iter().rev().skip(1).fold(f(*c.last().expect("coefficients")), |acc, &k| &(&acc * x) + &f(k))
}
/// `round(x)` half away from zero, as an f64 (exact for `|x| < 2^52`).
fn round(x: &UOp) -> UOp {
    let half = x.lt(&f(0.0)).where_(&f(-0.5), &f(0.5));
    UOp::alu(Ops::TRUNC, vec![x + &half])
}
fn bitcast(x: UOp, to: DType) -> UOp {
    UOp::new(Ops::BITCAST, to, vec![x], crate::uop::Arg::None)
}
/// `2^k` for an i64 `k` in [-1022, 1023], from its exponent bits.
fn pow2(k: &UOp) -> UOp {
    bitcast(&(k + &i(1023)) * &i(1 << 52), DType::F64)
}

/// `1/k!` for k = 0..=n.
fn inverse_factorials(n: usize) -> Vec<f64> {
    let mut out = vec![1.0];
    for k in 1..=n {
        out.push(out[k - 1] / k as f64);
    }
    out
}

pub(super) fn exp2(x: &UOp) -> UOp {
    // Clamped (and NaN replaced) so that `n` is a small integer; ±1100 is past overflow and
    // underflow, so the clamped value's result is the same.
    let lo = x.lt(&f(-1100.0));
    let xc = lo.where_(&f(-1100.0), &f(1100.0).lt(x).where_(&f(1100.0), x));
    let xc = is_nan(x).where_(&f(0.0), &xc);
    let nf = round(&xc);
    let y = &(&xc - &nf) * &f(std::f64::consts::LN_2);
    let p = poly(&y, &inverse_factorials(13));
    let n = nf.cast(DType::I64);
    let n1 = n.idiv(&i(2));
    let n2 = &n - &n1;
    let r = &(&p * &pow2(&n1)) * &pow2(&n2);
    is_nan(x).where_(x, &r)
}

pub(super) fn log2(x: &UOp) -> UOp {
    let valid = f(0.0).lt(x).and(&x.lt(&f(f64::INFINITY)));
    let xs = valid.where_(x, &f(1.0));
    let sub = xs.lt(&f(f64::MIN_POSITIVE));
    let xs = sub.where_(&(&xs * &f(2f64.powi(54))), &xs);
    let bits = bitcast(xs, DType::I64);
    let mant = i(1 << 52);
    let e = &(&bits.idiv(&mant) - &i(1023)) - &sub.where_(&i(54), &i(0));
    let m = bitcast(&bits.modulo(&mant) + &i(1023 << 52), DType::F64);
    let big = f(std::f64::consts::SQRT_2).lt(&m);
    let m = big.where_(&(&m * &f(0.5)), &m);
    let e = (&e + &big.where_(&i(1), &i(0))).cast(DType::F64);
    let s = UOp::alu(Ops::FDIV, vec![&m - &f(1.0), &m + &f(1.0)]);
    let odd: Vec<f64> = (0..=10).map(|k| 1.0 / (2 * k + 1) as f64).collect();
    let ln_m = &(&s * &f(2.0)) * &poly(&(&s * &s), &odd);
    let r = &e + &(&ln_m * &f(std::f64::consts::LOG2_E));
    let nan = UOp::alu(Ops::OR, vec![is_nan(x), x.lt(&f(0.0))]);
    let special = x.eq_(&f(0.0)).where_(&f(f64::NEG_INFINITY), &x.eq_(&f(f64::INFINITY)).where_(x, &r));
    nan.where_(&f(f64::NAN), &special)
}

pub(super) fn sin(x: &UOp) -> UOp {
    let finite = f(f64::NEG_INFINITY).lt(x).and(&x.lt(&f(f64::INFINITY)));
    // Past 2^62 the quadrant does not fit an i64: such inputs give NaN.
    let reducible = f(-(2f64.powi(62))).lt(x).and(&x.lt(&f(2f64.powi(62))));
    let xr = reducible.where_(x, &f(0.0));
    let kf = round(&(&xr * &f(std::f64::consts::FRAC_2_PI)));
    // π/2 = p1 + p2 + p3: p1 and p2 have 33 significant bits (their low bits are zero).
    let (p1, p2, p3) = (f64::from_bits(0x3ff921fb54400000), f64::from_bits(0x3dd0b4611a600000), 2.0222662487111665e-21);
    let r = &(&(&xr - &(&kf * &f(p1))) - &(&kf * &f(p2))) - &(&kf * &f(p3));
    let r2 = &r * &r;
    let fact = inverse_factorials(17);
    let sin_c: Vec<f64> = (0..=8).map(|k| if k % 2 == 0 { fact[2 * k + 1] } else { -fact[2 * k + 1] }).collect();
    let cos_c: Vec<f64> = (0..=8).map(|k| if k % 2 == 0 { fact[2 * k] } else { -fact[2 * k] }).collect();
    let s = &r * &poly(&r2, &sin_c);
    let c = poly(&r2, &cos_c);
    let q = kf.cast(DType::I64).and(&i(3));
    let neg = |v: &UOp| UOp::alu(Ops::NEG, vec![v.clone()]);
    let by_quadrant = q.eq_(&i(0)).where_(&s, &q.eq_(&i(1)).where_(&c, &q.eq_(&i(2)).where_(&neg(&s), &neg(&c))));
    finite.and(&reducible).where_(&by_quadrant, &f(f64::NAN))
}
