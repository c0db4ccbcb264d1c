//! Elementwise ops: broadcasting, dtype promotion, unary/binary/ternary math built from the
//! primitive ALU ops (`exp = exp2(x * log2 e)`, `relu = max(x, 0)`, ...).

use super::Tensor;
use crate::uop::{Arg, ConstValue, DType, Dim, Ops, UOp};

/// Something that can be the other side of a binary op: a tensor or a Rust scalar. Scalars
/// are "weak": they take the tensor's dtype, except that a float scalar makes an integer
/// tensor float32 (as in tinygrad and PyTorch).
pub trait Operand {
    fn into_tensor(self, like: &Tensor) -> Tensor;
    /// Whether this is a Rust scalar (weakly typed: it takes the other operand's dtype).
    fn is_weak(&self) -> bool {
        false
    }
}
impl Operand for &Tensor {
    fn into_tensor(self, _: &Tensor) -> Tensor {
        self.clone()
    }
}
impl Operand for Tensor {
    fn into_tensor(self, _: &Tensor) -> Tensor {
        self
    }
}
fn scalar_like(v: ConstValue, like: &Tensor) -> Tensor {
    let dt = like.dtype();
    let dtype = match v {
        ConstValue::Float(_) if !dt.is_float() => DType::F32,
        ConstValue::Int(_) if dt.is_bool() => DType::I32,
        _ => dt,
    };
    Tensor::full_on([0usize; 0], v, dtype, &like.device())
}
macro_rules! scalar_operand {
    ($($t:ty => $variant:ident as $conv:ty),*) => {$(
        impl Operand for $t {
            fn into_tensor(self, like: &Tensor) -> Tensor {
                scalar_like(ConstValue::$variant(self as $conv), like)
            }
            fn is_weak(&self) -> bool {
                true
            }
        }
    )*};
}
scalar_operand!(f32 => Float as f64, f64 => Float as f64, i32 => Int as i64, i64 => Int as i64, u8 => Int as i64, u32 => Int as i64);
impl Operand for bool {
    fn into_tensor(self, like: &Tensor) -> Tensor {
        scalar_like(ConstValue::Bool(self), like)
    }
    fn is_weak(&self) -> bool {
        true
    }
}

/// NumPy broadcasting of two shapes; panics naming the op.
pub(crate) fn broadcast_shape(op: &str, a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    let pad = |s: &[usize]| -> Vec<usize> { std::iter::repeat_n(1, n - s.len()).chain(s.iter().copied()).collect() };
    let (pa, pb) = (pad(a), pad(b));
    pa.iter()
        .zip(&pb)
        .map(|(&x, &y)| match (x, y) {
            _ if x == y => x,
            (1, _) => y,
            (_, 1) => x,
            _ => panic!("{op}: cannot broadcast shapes {a:?} and {b:?}"),
        })
        .collect()
}

/// NumPy broadcasting of shapes with symbolic lengths (equal expressions, or 1 against any).
pub(crate) fn broadcast_dims(op: &str, a: &[Dim], b: &[Dim]) -> Vec<Dim> {
    let n = a.len().max(b.len());
    let one = Dim::Const(1);
    let pad =
        |s: &[Dim]| -> Vec<Dim> { std::iter::repeat_n(one.clone(), n - s.len()).chain(s.iter().cloned()).collect() };
    let (pa, pb) = (pad(a), pad(b));
    pa.into_iter()
        .zip(pb)
        .map(|(x, y)| match (x, y) {
            (x, y) if x == y => x,
            (x, y) if x == one => y,
            (x, y) if y == one => x,
            _ => panic!("{op}: cannot broadcast shapes {a:?} and {b:?}"),
        })
        .collect()
}

impl Tensor {
    pub(crate) fn alu_node(op: Ops, dtype: DType, srcs: &[&Tensor]) -> Tensor {
        let src: Vec<UOp> = srcs.iter().map(|t| t.uop()).collect();
        Tensor::from_uop(UOp::new(op, dtype, src, Arg::None))
    }

    /// Broadcasts `self` to `shape` (numpy rules: leading axes added, size-1 axes expanded);
    /// lengths may be symbolic.
    pub fn broadcast_to_dims(&self, shape: &[Dim]) -> Tensor {
        let s = self.sym_shape();
        if s == shape {
            return self.clone();
        }
        let target = broadcast_dims("broadcast_to", &s, shape);
        assert_eq!(target, shape, "broadcast_to: cannot broadcast {s:?} to {shape:?}");
        let padded: Vec<Dim> = std::iter::repeat_n(Dim::Const(1), shape.len() - s.len()).chain(s).collect();
        self.reshape_dims(&padded).expand_to_dims(shape)
    }

    /// Broadcasts `self` to `shape` (numpy rules: leading axes added, size-1 axes expanded).
    pub fn broadcast_to(&self, shape: &[usize]) -> Tensor {
        self.broadcast_to_dims(&shape.iter().map(|&d| Dim::Const(d)).collect::<Vec<_>>())
    }

    /// Both operands broadcast to one shape and promoted to one dtype.
    pub(crate) fn broadcast_pair(&self, other: impl Operand, op: &str) -> (Tensor, Tensor) {
        let o = other.into_tensor(self);
        let dt = DType::promote(self.dtype(), o.dtype());
        let shape = broadcast_dims(op, &self.sym_shape(), &o.sym_shape());
        (self.cast(dt).broadcast_to_dims(&shape), o.cast(dt).broadcast_to_dims(&shape))
    }

    pub(crate) fn binary(&self, op: Ops, other: impl Operand, name: &str) -> Tensor {
        let (a, b) = self.broadcast_pair(other, name);
        let dt = if op.is_comparison() { DType::BOOL } else { a.dtype() };
        Tensor::alu_node(op, dt, &[&a, &b])
    }

    pub(crate) fn unary(&self, op: Ops) -> Tensor {
        Tensor::alu_node(op, self.dtype(), &[self])
    }

    /// This tensor as a float type (ints and bools become float32).
    pub(crate) fn float(&self) -> Tensor {
        self.cast(self.dtype().to_float())
    }

    pub fn cast(&self, dtype: DType) -> Tensor {
        if self.dtype() == dtype {
            return self.clone();
        }
        Tensor::from_uop(UOp::new(Ops::CAST, dtype, vec![self.uop()], Arg::None))
    }
    /// Reinterprets the bits as another dtype of the same size.
    pub fn bitcast(&self, dtype: DType) -> Tensor {
        assert_eq!(
            self.dtype().itemsize(),
            dtype.itemsize(),
            "bitcast: {:?} and {:?} have different sizes (shape {:?})",
            self.dtype(),
            dtype,
            self.shape()
        );
        Tensor::from_uop(UOp::new(Ops::BITCAST, dtype, vec![self.uop()], Arg::None))
    }

    // ---------------------------------------------------------------- binary

    pub fn add(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::ADD, o, "add")
    }
    pub fn sub(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::SUB, o, "sub")
    }
    pub fn mul(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::MUL, o, "mul")
    }
    /// True division (integers divide as float32).
    pub fn div(&self, o: impl Operand) -> Tensor {
        let (a, b) = self.broadcast_pair(o, "div");
        let (a, b) = (a.float(), b.float());
        Tensor::alu_node(Ops::FDIV, a.dtype(), &[&a, &b])
    }
    /// Elementwise maximum; NaN in either operand gives NaN, and ties share the gradient (as
    /// PyTorch's `maximum`).
    pub fn maximum(&self, o: impl Operand) -> Tensor {
        let (a, b) = self.broadcast_pair(o, "maximum");
        let m = Tensor::alu_node(Ops::MAX, a.dtype(), &[&a, &b]);
        // MAX is `a < b ? b : a`, which already propagates a NaN in `a`; a NaN in `b` is
        // `a + b`, which gives both sides the gradient, as PyTorch does at a NaN.
        if a.dtype().is_float() {
            return b.ne(&b).where_(a.add(&b), &m);
        }
        m
    }
    /// Elementwise minimum, `-max(-a, -b)` (bitwise NOT instead of negation for ints, which
    /// cannot overflow), so NaN and ties behave as in `maximum`.
    pub fn minimum(&self, o: impl Operand) -> Tensor {
        let (a, b) = self.broadcast_pair(o, "minimum");
        if a.dtype().is_float() {
            return a.neg().maximum(b.neg()).neg();
        }
        a.flip_order().maximum(b.flip_order()).flip_order()
    }
    /// An order-reversing bijection of an int or bool dtype (`!x`), used for min via max.
    pub(crate) fn flip_order(&self) -> Tensor {
        if self.dtype().is_bool() {
            return self.logical_not();
        }
        self.bitxor(Tensor::full_on([0usize; 0], ConstValue::Int(-1), self.dtype(), &self.device()))
    }
    // ---------------------------------------------------------------- comparisons

    pub fn lt(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::CMPLT, o, "lt")
    }
    pub fn gt(&self, o: impl Operand) -> Tensor {
        let (a, b) = self.broadcast_pair(o, "gt");
        b.lt(&a)
    }
    pub fn eq(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::CMPEQ, o, "eq")
    }
    pub fn ne(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::CMPNE, o, "ne")
    }
    pub fn le(&self, o: impl Operand) -> Tensor {
        let (a, b) = self.broadcast_pair(o, "le");
        a.lt(&b).bitor(a.eq(&b))
    }
    pub fn ge(&self, o: impl Operand) -> Tensor {
        let (a, b) = self.broadcast_pair(o, "ge");
        b.le(&a)
    }

    // ---------------------------------------------------------------- bitwise

    pub fn bitand(&self, o: impl Operand) -> Tensor {
        self.bitwise(Ops::AND, o, "bitwise_and")
    }
    pub fn bitor(&self, o: impl Operand) -> Tensor {
        self.bitwise(Ops::OR, o, "bitwise_or")
    }
    pub fn bitxor(&self, o: impl Operand) -> Tensor {
        self.bitwise(Ops::XOR, o, "bitwise_xor")
    }
    /// AND/OR/XOR of ints or bools; floats have no bitwise ops (as in PyTorch).
    fn bitwise(&self, op: Ops, o: impl Operand, name: &str) -> Tensor {
        let (a, b) = self.broadcast_pair(o, name);
        let dt = a.dtype();
        assert!(!dt.is_float(), "{name}: needs integer or bool tensors, got {dt:?} (shape {:?})", a.shape());
        Tensor::alu_node(op, dt, &[&a, &b])
    }
    /// `self << o` on ints; shifting by the bit width or more (or by a negative amount) gives
    /// 0, as in PyTorch.
    pub fn shl(&self, o: impl Operand) -> Tensor {
        self.shift(Ops::SHL, o, "lshift")
    }
    /// `self >> o` on ints (arithmetic for signed types); out-of-range amounts fill with the
    /// sign, as in PyTorch.
    pub fn shr(&self, o: impl Operand) -> Tensor {
        self.shift(Ops::SHR, o, "rshift")
    }
    fn shift(&self, op: Ops, o: impl Operand, name: &str) -> Tensor {
        let o = o.into_tensor(self);
        let konst = o.uop().as_int();
        let (a, b) = self.broadcast_pair(&o, name);
        let dt = a.dtype();
        assert!(dt.is_int(), "{name}: needs integer operands, got {dt:?} (shape {:?})", a.shape());
        let bits = dt.bits() as i64;
        let shifted = Tensor::alu_node(op, dt, &[&a, &b]);
        // A constant amount inside the width needs no guard (the common case: bit tricks).
        if konst.is_some_and(|c| (0..bits).contains(&c)) {
            return shifted;
        }
        let bad = b.lt(0).bitor(b.ge(bits));
        let fill = if op == Ops::SHL || dt.is_unsigned() {
            a.zeros_like()
        } else {
            Tensor::alu_node(Ops::SHR, dt, &[&a, &a.full_like((bits - 1) as f64)])
        };
        bad.where_(&fill, &shifted)
    }
    /// Bitwise NOT of an int tensor (logical NOT of a bool one).
    pub fn bitwise_not(&self) -> Tensor {
        assert!(
            self.dtype().is_int() || self.dtype().is_bool(),
            "bitwise_not: needs an int or bool tensor, got {:?}",
            self.dtype()
        );
        self.flip_order()
    }
    /// Logical not of a bool tensor (`x != true`).
    pub fn logical_not(&self) -> Tensor {
        self.cast(DType::BOOL).ne(true)
    }

    // ---------------------------------------------------------------- ternary

    /// `self ? a : b`, elementwise, with broadcasting.
    /// A Rust scalar branch takes the dtype of the other branch when that one is a tensor.
    pub fn where_(&self, a: impl Operand, b: impl Operand) -> Tensor {
        let (a, b) = if a.is_weak() && !b.is_weak() {
            let b = b.into_tensor(self);
            (a.into_tensor(&b), b)
        } else {
            let a = a.into_tensor(self);
            let b = b.into_tensor(&a);
            (a, b)
        };
        let dt = DType::promote(a.dtype(), b.dtype());
        let shape =
            broadcast_dims("where", &broadcast_dims("where", &self.sym_shape(), &a.sym_shape()), &b.sym_shape());
        let c = self.cast(DType::BOOL).broadcast_to_dims(&shape);
        let (a, b) = (a.cast(dt).broadcast_to_dims(&shape), b.cast(dt).broadcast_to_dims(&shape));
        Tensor::alu_node(Ops::WHERE, dt, &[&c, &a, &b])
    }

    // ---------------------------------------------------------------- unary

    pub fn neg(&self) -> Tensor {
        if self.dtype().is_bool() {
            return self.logical_not();
        }
        self.unary(Ops::NEG)
    }
    pub fn reciprocal(&self) -> Tensor {
        self.float().unary(Ops::RECIP)
    }
    pub fn sqrt(&self) -> Tensor {
        self.float().unary(Ops::SQRT)
    }
    pub fn exp2(&self) -> Tensor {
        self.float().unary(Ops::EXP2)
    }
    pub fn log2(&self) -> Tensor {
        self.float().unary(Ops::LOG2)
    }
    pub fn exp(&self) -> Tensor {
        self.float().via_f32(|x| x.mul(std::f64::consts::LOG2_E).exp2())
    }
    pub fn log(&self) -> Tensor {
        self.float().via_f32(|x| x.log2().mul(std::f64::consts::LN_2))
    }
    pub fn sin(&self) -> Tensor {
        self.float().unary(Ops::SIN)
    }
    pub fn cos(&self) -> Tensor {
        self.float().via_f32(|x| x.neg().add(std::f64::consts::FRAC_PI_2).sin())
    }
    pub fn trunc(&self) -> Tensor {
        if !self.dtype().is_float() {
            return self.clone();
        }
        self.unary(Ops::TRUNC)
    }
    /// `max(x, 0)`, written as a `where` so the gradient at 0 is 0 and NaN stays NaN (as in
    /// PyTorch).
    pub fn relu(&self) -> Tensor {
        self.le(0).where_(0, self)
    }
    /// `1 / (1 + e^-x)` from `e = exp(-|x|)`, which never overflows: no infinities, so no NaN
    /// gradients, at large `|x|`.
    pub fn sigmoid(&self) -> Tensor {
        self.float().via_f32(|x| {
            let e = x.abs_kink_up().neg().exp();
            let pos = e.add(1.0).reciprocal();
            x.ge(0.0).where_(&pos, e.mul(&pos))
        })
    }
    /// `sign(x) (1 - e) / (1 + e)` with `e = exp(-2|x|)` (no overflow), and the Taylor series
    /// near 0 where `1 - e` would cancel.
    pub fn tanh(&self) -> Tensor {
        self.float().via_f32(|x| {
            let e = x.abs_kink_up().mul(-2.0).exp();
            let t = e.neg().add(1.0).div(e.add(1.0));
            let big = x.lt(0.0).where_(t.neg(), &t);
            // x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835: error below 1e-12 for |x| < 1/8.
            // Evaluated on 0 elsewhere, so that large inputs make no infinities (NaN gradients).
            let near0 = x.abs_kink_up().lt(0.125);
            let xs = near0.where_(x, 0.0);
            let x2 = xs.square();
            let poly = x2.mul(62.0 / 2835.0).sub(17.0 / 315.0).mul(&x2).add(2.0 / 15.0).mul(&x2).sub(1.0 / 3.0);
            let small = xs.add(xs.mul(&x2).mul(poly));
            near0.where_(small, big)
        })
    }
    /// `|x|`; the gradient at 0 is 0, as PyTorch's (`sign(x)`).
    pub fn abs(&self) -> Tensor {
        if self.dtype().is_unsigned() || self.dtype().is_bool() {
            return self.clone();
        }
        if !self.dtype().is_float() {
            return self.lt(0).where_(self.neg(), self);
        }
        // Zeros and NaN take the last branch: `x * x` is +0 for both zeros (IEEE fabs) and NaN for
        // NaN. (`x * 0` kept the sign of -0, so `1 / abs(-0)` was -inf; found by the fuzzer.)
        let value = self.lt(0.0).where_(self.neg(), self.gt(0.0).where_(self, self.mul(self)));
        // Its derivative is PyTorch's `sgn(x)`: 0 at ±0 and NaN, ±1 at ±inf.
        super::grad::with_derivatives(value, &[self], |x| {
            vec![x[0].gt(0.0).where_(1.0, x[0].lt(0.0).where_(-1.0, 0.0))]
        })
    }
    /// `|x|` whose gradient at 0 is +1 (the right-hand slope): for formulas such as
    /// `exp(-|x|)` whose kink at 0 is cancelled by another term.
    pub(crate) fn abs_kink_up(&self) -> Tensor {
        self.lt(0.0).where_(self.neg(), self)
    }
    /// Computes `f` in float32 for 16-bit float inputs and rounds the result once, as PyTorch
    /// does for its composite ops; other dtypes go through `f` unchanged.
    pub(crate) fn via_f32(&self, f: impl FnOnce(&Tensor) -> Tensor) -> Tensor {
        let dt = self.dtype();
        if dt == DType::F16 || dt == DType::BF16 {
            return f(&self.cast(DType::F32)).cast(dt);
        }
        f(self)
    }
    pub fn square(&self) -> Tensor {
        self.mul(self)
    }
}

// ---------------------------------------------------------------- operators

macro_rules! tensor_binop {
    ($trait:ident, $method:ident, $fn:ident) => {
        impl<O: Operand> std::ops::$trait<O> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: O) -> Tensor {
                Tensor::$fn(self, rhs)
            }
        }
        impl<O: Operand> std::ops::$trait<O> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: O) -> Tensor {
                Tensor::$fn(&self, rhs)
            }
        }
    };
}
tensor_binop!(Add, add, add);
tensor_binop!(Sub, sub, sub);
tensor_binop!(Mul, mul, mul);
tensor_binop!(Div, div, div);
tensor_binop!(BitAnd, bitand, bitand);
tensor_binop!(BitOr, bitor, bitor);
tensor_binop!(BitXor, bitxor, bitxor);
tensor_binop!(Rem, rem, remainder);
tensor_binop!(Shl, shl, shl);
tensor_binop!(Shr, shr, shr);

impl std::ops::Neg for &Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        Tensor::neg(self)
    }
}
impl std::ops::Neg for Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        Tensor::neg(&self)
    }
}

macro_rules! scalar_lhs {
    ($($t:ty),*) => {$(
        impl std::ops::Add<&Tensor> for $t { type Output = Tensor; fn add(self, rhs: &Tensor) -> Tensor { rhs.add(self) } }
        impl std::ops::Mul<&Tensor> for $t { type Output = Tensor; fn mul(self, rhs: &Tensor) -> Tensor { rhs.mul(self) } }
        impl std::ops::Sub<&Tensor> for $t { type Output = Tensor; fn sub(self, rhs: &Tensor) -> Tensor { self.into_tensor(rhs).sub(rhs) } }
        impl std::ops::Div<&Tensor> for $t { type Output = Tensor; fn div(self, rhs: &Tensor) -> Tensor { self.into_tensor(rhs).div(rhs) } }
        impl std::ops::Add<Tensor> for $t { type Output = Tensor; fn add(self, rhs: Tensor) -> Tensor { rhs.add(self) } }
        impl std::ops::Mul<Tensor> for $t { type Output = Tensor; fn mul(self, rhs: Tensor) -> Tensor { rhs.mul(self) } }
        impl std::ops::Sub<Tensor> for $t { type Output = Tensor; fn sub(self, rhs: Tensor) -> Tensor { self.into_tensor(&rhs).sub(&rhs) } }
        impl std::ops::Div<Tensor> for $t { type Output = Tensor; fn div(self, rhs: Tensor) -> Tensor { self.into_tensor(&rhs).div(&rhs) } }
        impl std::ops::Rem<&Tensor> for $t { type Output = Tensor; fn rem(self, rhs: &Tensor) -> Tensor { self.into_tensor(rhs).remainder(rhs) } }
        impl std::ops::Rem<Tensor> for $t { type Output = Tensor; fn rem(self, rhs: Tensor) -> Tensor { self.into_tensor(&rhs).remainder(&rhs) } }
    )*};
}
scalar_lhs!(f32, f64, i32, i64);
