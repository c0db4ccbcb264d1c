//! Inverse trigonometric and hyperbolic functions, `log10`, `copysign`, `logaddexp`, `isclose`,
//! as compositions of the primitive ops (range reductions and series where PyTorch's libm would
//! call a dedicated routine), each differentiated by its known derivative (`with_derivatives`)
//! rather than through its formula's branches and guards.
//!
//! Special values follow PyTorch (IEEE): `atan(±inf) = ±pi/2`, `atan2(±0, -0) = ±pi`,
//! `asin(x) = NaN` for `|x| > 1`, `acosh(1) = 0`, `atanh(±1) = ±inf`, signed zeros kept.

use super::elementwise::Operand;
use super::grad::with_derivatives;
use super::Tensor;
use crate::uop::DType;
use std::f64::consts::{FRAC_PI_2, LN_2, PI};

impl Tensor {
    /// Whether the sign bit is set (true for -0.0 and for negative NaNs): read from the bits.
    pub fn signbit(&self) -> Tensor {
        let x = self.float();
        let int = match x.dtype().itemsize() {
            2 => DType::I16,
            4 => DType::I32,
            _ => DType::I64,
        };
        x.bitcast(int).lt(0)
    }

    /// Both operands as floats of one dtype, broadcast, and in f32 where that dtype is 16-bit
    /// (the two-operand `via_f32`); with the dtype to cast the result back to.
    fn float_pair(&self, other: impl Operand, op: &str) -> (Tensor, Tensor, DType) {
        let (a, b) = self.float().broadcast_pair(other, op);
        let dt = a.dtype();
        if dt == DType::F16 || dt == DType::BF16 {
            (a.cast(DType::F32), b.cast(DType::F32), dt)
        } else {
            (a, b, dt)
        }
    }
    /// `atan(x)`.
    pub fn atan(&self) -> Tensor {
        self.float().via_f32(|x| {
            let a = x.abs_kink_up();
            let big = a.gt(1.0);
            let r = atan_unit(&big.where_(a.reciprocal(), &a));
            let r = big.where_(r.neg().add(FRAC_PI_2), r);
            let value = x.lt(0.0).where_(r.neg(), r);
            with_derivatives(value, &[x], |x| vec![x[0].square().add(1.0).reciprocal()])
        })
    }
    /// `atan(y / x)` in the quadrant of `(x, y)` (`self` is `y`), broadcast.
    pub fn atan2(&self, x: impl Operand) -> Tensor {
        let (y32, x32, dt) = self.float_pair(x, "atan2");
        let (ax, ay) = (x32.abs(), y32.abs());
        let swap = ay.gt(&ax);
        let (num, den) = (swap.where_(&ax, &ay), swap.where_(&ay, &ax));
        // 0/0 (both zero) is 0, inf/inf (both infinite) is 1.
        let t = den.eq(0.0).where_(0.0, num.eq(f64::INFINITY).where_(1.0, num.div(&den)));
        let r = atan_unit(&t);
        let r = swap.where_(r.neg().add(FRAC_PI_2), r);
        let r = x32.signbit().where_(r.neg().add(PI), r);
        let r = y32.signbit().where_(r.neg(), r);
        let value = x32.ne(&x32).bitor(y32.ne(&y32)).where_(x32.add(&y32), r);
        let value = with_derivatives(value, &[&y32, &x32], |v| {
            let r2 = v[0].square().add(v[1].square());
            // 0 at the origin, as PyTorch's (where 0 / 0 would be NaN).
            let r2 = r2.eq(0.0).where_(f64::INFINITY, &r2);
            vec![v[1].div(&r2), v[0].neg().div(&r2)]
        });
        value.cast(dt)
    }
    /// `asin(x)`; NaN outside [-1, 1].
    pub fn asin(&self) -> Tensor {
        self.float().via_f32(|x| {
            let value = x.atan2(one_minus_square_sqrt(x));
            with_derivatives(value, &[x], |x| vec![one_minus_square_sqrt(&x[0]).reciprocal()])
        })
    }
    /// `acos(x)`; NaN outside [-1, 1].
    pub fn acos(&self) -> Tensor {
        self.float().via_f32(|x| {
            let value = one_minus_square_sqrt(x).atan2(x);
            with_derivatives(value, &[x], |x| vec![one_minus_square_sqrt(&x[0]).reciprocal().neg()])
        })
    }
    /// `sinh(x)`, accurate near 0 (through `expm1`) and finite up to `|x|` of about 89 in f32.
    pub fn sinh(&self) -> Tensor {
        self.float().via_f32(|x| {
            let a = x.abs();
            let small = a.lt(1.0);
            let xs = small.where_(x, 0.0);
            let near0 = xs.expm1().sub(xs.neg().expm1()).mul(0.5);
            let far = a.sub(LN_2).exp().sub(a.neg().exp().mul(0.5));
            let far = x.lt(0.0).where_(far.neg(), far);
            let value = small.where_(near0, far);
            with_derivatives(value, &[x], |x| vec![x[0].cosh()])
        })
    }
    /// `cosh(x)`, finite up to `|x|` of about 89 in f32.
    pub fn cosh(&self) -> Tensor {
        self.float().via_f32(|x| {
            let a = x.abs();
            let value = a.sub(LN_2).exp().add(a.neg().exp().mul(0.5));
            with_derivatives(value, &[x], |x| vec![x[0].sinh()])
        })
    }
    /// `asinh(x)`.
    pub fn asinh(&self) -> Tensor {
        self.float().via_f32(|x| {
            let a = x.abs();
            let big = a.gt(1e9);
            let am = big.where_(0.0, &a);
            let near = am.add(am.square().div(am.square().add(1.0).sqrt().add(1.0))).log1p();
            let r = big.where_(a.log().add(LN_2), near);
            let value = x.signbit().where_(r.neg(), r);
            with_derivatives(value, &[x], |x| vec![x[0].square().add(1.0).rsqrt()])
        })
    }
    /// `acosh(x)`; NaN below 1.
    pub fn acosh(&self) -> Tensor {
        self.float().via_f32(|x| {
            let x0 = x;
            let big = x0.gt(1e9);
            let xm = big.where_(1.0, x0);
            let near = xm.sub(1.0).add(xm.sub(1.0).mul(xm.add(1.0)).sqrt()).log1p();
            // Below 1 the formula is not reliably NaN: `(x - 1)(x + 1)` overflows for large
            // negative x and the sum gives inf or -inf (found by the fuzzer).
            let value = x0.lt(1.0).where_(f64::NAN, big.where_(x0.log().add(LN_2), near));
            with_derivatives(value, &[x], |x| vec![x[0].sub(1.0).mul(x[0].add(1.0)).rsqrt()])
        })
    }
    /// `atanh(x)`; ±inf at ±1, NaN outside [-1, 1].
    pub fn atanh(&self) -> Tensor {
        self.float().via_f32(|x| {
            let x0 = x;
            let value = x0.mul(2.0).div(x0.neg().add(1.0)).log1p().mul(0.5);
            with_derivatives(value, &[x], |x| vec![x[0].neg().add(1.0).mul(x[0].add(1.0)).reciprocal()])
        })
    }
    /// `log10(x)`.
    pub fn log10(&self) -> Tensor {
        self.float().via_f32(|x| x.log2().mul(std::f64::consts::LOG10_2))
    }
    /// `|x|` with the sign of `other` (its sign bit: -0.0 counts as negative), broadcast; the
    /// gradient reaches `x` only.
    pub fn copysign(&self, other: impl Operand) -> Tensor {
        let (x, other) = self.float().broadcast_pair(other, "copysign");
        let value = copysign_value(&x, &other);
        // PyTorch's gradient, `result / x` (0 where x = 0): NaN at infinite and NaN x.
        with_derivatives(value, &[&x], move |v| {
            let ratio = copysign_value(&v[0], &other).div(&v[0]);
            vec![v[0].eq(0.0).where_(0.0, ratio)]
        })
    }
    /// `log(exp(a) + exp(b))` without overflow, broadcast.
    pub fn logaddexp(&self, other: impl Operand) -> Tensor {
        let (a, b, dt) = self.float_pair(other, "logaddexp");
        let (a0, b0) = (&a, &b);
        let m = a0.maximum(b0);
        let spread = a0.sub(b0).abs().neg().exp().log1p();
        // Equal inputs (infinities included, where the spread would be NaN) add log 2.
        let value = a0.eq(b0).where_(a0.add(LN_2), m.add(spread));
        let out = with_derivatives(value, &[&a, &b], |v| vec![v[0].sub(&v[1]).sigmoid(), v[1].sub(&v[0]).sigmoid()]);
        out.cast(dt)
    }
    /// `log2(2^a + 2^b)`, broadcast.
    pub fn logaddexp2(&self, other: impl Operand) -> Tensor {
        let other = other.into_tensor(self);
        self.float().mul(LN_2).logaddexp(other.float().mul(LN_2)).div(LN_2)
    }
    /// `|a - b| <= atol + rtol * |b|` elementwise (as `torch.isclose`; equal infinities are
    /// close, NaN is close to NaN only with `equal_nan`), broadcast; a bool tensor.
    pub fn isclose(&self, other: impl Operand, rtol: f64, atol: f64, equal_nan: bool) -> Tensor {
        let (a, b) = self.float().broadcast_pair(other, "isclose");
        let within = a.sub(&b).abs().le(b.abs().mul(rtol).add(atol));
        let close = a.eq(&b).bitor(within.bitand(a.isfinite()).bitand(b.isfinite()));
        if equal_nan {
            close.bitor(a.isnan().bitand(b.isnan()))
        } else {
            close
        }
    }
    /// Whether every element is `isclose` to `other` (realizes both).
    pub fn allclose(&self, other: impl Operand, rtol: f64, atol: f64, equal_nan: bool) -> crate::Result<bool> {
        let close = self.isclose(other, rtol, atol, equal_nan);
        Ok(close.logical_not().cast(DType::I32).sum().to_vec::<i32>()?.first().copied().unwrap_or(0) == 0)
    }
}

/// `atan(t)` for `t` in [0, 1]: two half-angle steps (`tan(θ/2) = t / (1 + sqrt(1 + t²))`)
/// bring `t` below tan(π/16) ≈ 0.199, where ten terms of the series are exact to 2e-16.
fn atan_unit(t: &Tensor) -> Tensor {
    let half = |t: &Tensor| t.div(t.square().add(1.0).sqrt().add(1.0));
    let h = half(&half(t));
    let h2 = h.square();
    let mut s = h2.konst(0.0);
    for n in (0..10).rev() {
        let c = if n % 2 == 0 { 1.0 } else { -1.0 } / (2 * n + 1) as f64;
        s = s.mul(&h2).add(c);
    }
    h.mul(s).mul(4.0)
}

/// `sqrt(1 - x²)`, as `sqrt((1 - x)(1 + x))` (no cancellation near ±1).
fn one_minus_square_sqrt(x: &Tensor) -> Tensor {
    x.neg().add(1.0).mul(x.add(1.0)).sqrt()
}

/// `|x|` with the sign bit of `sign` (no gradient of its own).
fn copysign_value(x: &Tensor, sign: &Tensor) -> Tensor {
    let magnitude = x.abs();
    sign.signbit().where_(magnitude.neg(), magnitude)
}
