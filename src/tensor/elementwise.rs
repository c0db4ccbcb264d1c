//! Elementwise ops: broadcasting, dtype promotion, unary/binary/ternary math built from the
//! primitive ALU ops (`exp = exp2(x * log2 e)`, `relu = max(x, 0)`, ...).

use super::Tensor;
use crate::uop::{Arg, ConstValue, DType, Ops, UOp};

/// Something that can be the other side of a binary op: a tensor or a Rust scalar. Scalars
/// are "weak": they take the tensor's dtype, except that a float scalar makes an integer
/// tensor float32 (as in tinygrad and PyTorch).
pub trait Operand {
    fn into_tensor(self, like: &Tensor) -> Tensor;
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
        }
    )*};
}
scalar_operand!(f32 => Float as f64, f64 => Float as f64, i32 => Int as i64, i64 => Int as i64, u8 => Int as i64, u32 => Int as i64);
impl Operand for bool {
    fn into_tensor(self, like: &Tensor) -> Tensor {
        scalar_like(ConstValue::Bool(self), like)
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

impl Tensor {
    pub(crate) fn alu_node(op: Ops, dtype: DType, srcs: &[&Tensor]) -> Tensor {
        let src: Vec<UOp> = srcs.iter().map(|t| t.uop()).collect();
        Tensor::from_uop(UOp::new(op, dtype, src, Arg::None))
    }

    /// Broadcasts `self` to `shape` (numpy rules: leading axes added, size-1 axes expanded).
    pub fn broadcast_to(&self, shape: &[usize]) -> Tensor {
        let s = self.shape();
        if s == shape {
            return self.clone();
        }
        let target = broadcast_shape("broadcast_to", &s, shape);
        assert_eq!(target, shape, "broadcast_to: cannot broadcast {s:?} to {shape:?}");
        let padded: Vec<usize> = std::iter::repeat_n(1, shape.len() - s.len()).chain(s).collect();
        self.reshape(padded).expand(shape.to_vec())
    }

    /// Both operands broadcast to one shape and promoted to one dtype.
    fn broadcast_pair(&self, other: impl Operand, op: &str) -> (Tensor, Tensor) {
        let o = other.into_tensor(self);
        let shape = broadcast_shape(op, &self.shape(), &o.shape());
        let dt = DType::promote(self.dtype(), o.dtype());
        (self.cast(dt).broadcast_to(&shape), o.cast(dt).broadcast_to(&shape))
    }

    fn binary(&self, op: Ops, other: impl Operand, name: &str) -> Tensor {
        let (a, b) = self.broadcast_pair(other, name);
        let dt = if op.is_comparison() { DType::BOOL } else { a.dtype() };
        Tensor::alu_node(op, dt, &[&a, &b])
    }

    fn unary(&self, op: Ops) -> Tensor {
        Tensor::alu_node(op, self.dtype(), &[self])
    }

    /// This tensor as a float type (ints and bools become float32).
    fn float(&self) -> Tensor {
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
    pub fn maximum(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::MAX, o, "maximum")
    }
    pub fn minimum(&self, o: impl Operand) -> Tensor {
        let (a, b) = self.broadcast_pair(o, "minimum");
        b.lt(&a).where_(&b, &a)
    }
    /// `self ** exponent`; negative bases with integer exponents keep their sign.
    pub fn pow(&self, o: impl Operand) -> Tensor {
        let (a, b) = self.broadcast_pair(o, "pow");
        let (a, b) = (a.float(), b.float());
        let mag = (b.mul(&a.abs().log2())).exp2();
        // Sign for negative bases: (-1)^b when b is an integer, NaN otherwise.
        let b_int = b.trunc().eq(&b);
        let b_odd = b_int.bitand(&b.abs().sub(b.abs().div(2.0).trunc().mul(2.0)).eq(1.0));
        let neg = a.lt(0.0);
        let nan = mag.full_like(f64::NAN);
        let signed = b_odd.where_(&mag.neg(), &mag);
        let r = neg.where_(&b_int.where_(&signed, &nan), &mag);
        // 0 ** 0 = 1 (exp2(0 * -inf) would be NaN).
        b.eq(0.0).where_(&r.full_like(1.0), &r)
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
        a.lt(&b).bitor(&a.eq(&b))
    }
    pub fn ge(&self, o: impl Operand) -> Tensor {
        let (a, b) = self.broadcast_pair(o, "ge");
        b.le(&a)
    }

    // ---------------------------------------------------------------- bitwise

    pub fn bitand(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::AND, o, "bitwise_and")
    }
    pub fn bitor(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::OR, o, "bitwise_or")
    }
    pub fn bitxor(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::XOR, o, "bitwise_xor")
    }
    pub fn shl(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::SHL, o, "lshift")
    }
    pub fn shr(&self, o: impl Operand) -> Tensor {
        self.binary(Ops::SHR, o, "rshift")
    }
    /// Logical not of a bool tensor (`x != true`).
    pub fn logical_not(&self) -> Tensor {
        self.cast(DType::BOOL).ne(true)
    }

    // ---------------------------------------------------------------- ternary

    /// `self ? a : b`, elementwise, with broadcasting.
    pub fn where_(&self, a: impl Operand, b: impl Operand) -> Tensor {
        let a = a.into_tensor(self);
        let b = b.into_tensor(&a);
        let shape = broadcast_shape("where", &broadcast_shape("where", &self.shape(), &a.shape()), &b.shape());
        let dt = DType::promote(a.dtype(), b.dtype());
        let c = self.cast(DType::BOOL).broadcast_to(&shape);
        let (a, b) = (a.cast(dt).broadcast_to(&shape), b.cast(dt).broadcast_to(&shape));
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
        self.float().mul(std::f64::consts::LOG2_E).exp2()
    }
    pub fn log(&self) -> Tensor {
        self.log2().mul(std::f64::consts::LN_2)
    }
    pub fn sin(&self) -> Tensor {
        self.float().unary(Ops::SIN)
    }
    pub fn cos(&self) -> Tensor {
        self.float().neg().add(std::f64::consts::FRAC_PI_2).sin()
    }
    pub fn trunc(&self) -> Tensor {
        if !self.dtype().is_float() {
            return self.clone();
        }
        self.unary(Ops::TRUNC)
    }
    /// `max(x, 0)`, written as a `where` so the gradient at 0 is 0 (as in PyTorch).
    pub fn relu(&self) -> Tensor {
        self.gt(0).where_(self, 0)
    }
    pub fn sigmoid(&self) -> Tensor {
        self.neg().exp().add(1.0).reciprocal()
    }
    pub fn tanh(&self) -> Tensor {
        self.mul(2.0).sigmoid().mul(2.0).sub(1.0)
    }
    pub fn abs(&self) -> Tensor {
        if self.dtype().is_unsigned() || self.dtype().is_bool() {
            return self.clone();
        }
        self.lt(0).where_(&self.neg(), self)
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
    )*};
}
scalar_lhs!(f32, f64, i32, i64);
