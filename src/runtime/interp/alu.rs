//! The per-dtype functions instructions call: ALU ops, casts, canonical loads and constants,
//! each chosen once at decode time as a plain function pointer on slots.

use super::lane::{Arith, Float, Int, Lane, Wide};
use crate::uop::{ConstValue, Ops, Scalar};

pub(super) type UnFn = fn(u64) -> u64;
pub(super) type BinFn = fn(u64, u64) -> u64;
pub(super) type TerFn = fn(u64, u64, u64) -> u64;

/// Evaluates one of three expressions with the type alias `$T` bound to the Rust type of the
/// scalar dtype `$s`: the int, float or bool one by its kind. VOID gives `None`.
///
/// Shorthands: `any => e` uses one expression for every kind, `numeric => e, bool => b` one
/// for ints and floats.
macro_rules! by_scalar {
    ($s:expr, |$T:ident| any => $any:expr) => {
        by_scalar!($s, |$T| int => $any, float => $any, bool => $any)
    };
    ($s:expr, |$T:ident| numeric => $num:expr, bool => $boolean:expr) => {
        by_scalar!($s, |$T| int => $num, float => $num, bool => $boolean)
    };
    ($s:expr, |$T:ident| int => $int:expr, float => $float:expr, bool => $boolean:expr) => {
        match $s {
            Scalar::I8 => {
                type $T = i8;
                $int
            }
            Scalar::I16 => {
                type $T = i16;
                $int
            }
            Scalar::I32 => {
                type $T = i32;
                $int
            }
            Scalar::I64 => {
                type $T = i64;
                $int
            }
            Scalar::U8 => {
                type $T = u8;
                $int
            }
            Scalar::U16 => {
                type $T = u16;
                $int
            }
            Scalar::U32 => {
                type $T = u32;
                $int
            }
            Scalar::U64 => {
                type $T = u64;
                $int
            }
            Scalar::F16 => {
                type $T = half::f16;
                $float
            }
            Scalar::BF16 => {
                type $T = half::bf16;
                $float
            }
            Scalar::F32 => {
                type $T = f32;
                $float
            }
            Scalar::F64 => {
                type $T = f64;
                $float
            }
            Scalar::Bool => {
                #[allow(dead_code)]
                type $T = bool;
                $boolean
            }
            Scalar::Void => None,
        }
    };
}

/// The slot function of a unary method of lane type `$T`: `un!(T, neg)` decodes the operand,
/// applies `neg` and re-encodes the result.
macro_rules! un {
    ($T:ident, $m:ident) => {
        |a| $T::from_slot(a).$m().to_slot()
    };
}

/// The slot function of a binary method of lane type `$T`, like `un!`.
macro_rules! bin {
    ($T:ident, $m:ident) => {
        |a, b| $T::from_slot(a).$m($T::from_slot(b)).to_slot()
    };
}

/// Comparisons and MAX, defined for every lane type.
fn compare<T: Lane>(op: Ops) -> Option<BinFn> {
    let f: BinFn = match op {
        Ops::CMPLT => |a, b| (T::from_slot(a) < T::from_slot(b)) as u64,
        Ops::CMPNE => |a, b| (T::from_slot(a) != T::from_slot(b)) as u64,
        Ops::CMPEQ => |a, b| (T::from_slot(a) == T::from_slot(b)) as u64,
        // Exactly `a < b ? b : a` (the C renderers' definition): MAX(NaN, x) = NaN and
        // MAX(x, NaN) = x.
        Ops::MAX => |a, b| {
            if T::from_slot(a) < T::from_slot(b) {
                b
            } else {
                a
            }
        },
        _ => return None,
    };
    Some(f)
}

fn arith_binary<T: Arith>(op: Ops) -> Option<BinFn> {
    let f: BinFn = match op {
        Ops::ADD => bin!(T, add),
        Ops::SUB => bin!(T, sub),
        Ops::MUL => bin!(T, mul),
        _ => return compare::<T>(op),
    };
    Some(f)
}

fn int_binary<T: Int>(op: Ops) -> Option<BinFn> {
    let f: BinFn = match op {
        Ops::IDIV => bin!(T, idiv),
        Ops::MOD => bin!(T, rem),
        Ops::SHL => bin!(T, shl),
        Ops::SHR => bin!(T, shr),
        Ops::AND => bin!(T, and),
        Ops::OR => bin!(T, or),
        Ops::XOR => bin!(T, xor),
        _ => return arith_binary::<T>(op),
    };
    Some(f)
}

fn float_binary<T: Float>(op: Ops) -> Option<BinFn> {
    let f: BinFn = match op {
        Ops::FDIV => bin!(T, fdiv),
        _ => return arith_binary::<T>(op),
    };
    Some(f)
}

/// Bools are 0/1 in their slots, so the logical ops are the bitwise ones. ADD and MUL follow
/// C (`(bool)(a + b)`, `(bool)(a * b)`).
fn bool_binary(op: Ops) -> Option<BinFn> {
    let f: BinFn = match op {
        Ops::AND | Ops::MUL => |a, b| a & b,
        Ops::OR | Ops::ADD => |a, b| a | b,
        Ops::XOR => |a, b| a ^ b,
        _ => return compare::<bool>(op),
    };
    Some(f)
}

/// The function of a binary op on operands of dtype `s`.
pub(super) fn binary_fn(op: Ops, s: Scalar) -> Option<BinFn> {
    by_scalar!(s, |T| int => int_binary::<T>(op), float => float_binary::<T>(op), bool => bool_binary(op))
}

fn int_unary<T: Int>(op: Ops) -> Option<UnFn> {
    let f: UnFn = match op {
        Ops::NEG => un!(T, neg),
        Ops::TRUNC => |a| a,
        _ => return None,
    };
    Some(f)
}

fn float_unary<T: Float>(op: Ops) -> Option<UnFn> {
    let f: UnFn = match op {
        Ops::NEG => un!(T, neg),
        Ops::RECIP => un!(T, recip),
        Ops::SQRT => un!(T, sqrt),
        Ops::EXP2 => un!(T, exp2),
        Ops::LOG2 => un!(T, log2),
        Ops::SIN => un!(T, sin),
        Ops::TRUNC => un!(T, trunc),
        _ => return None,
    };
    Some(f)
}

pub(super) fn unary_fn(op: Ops, s: Scalar) -> Option<UnFn> {
    by_scalar!(s, |T| int => int_unary::<T>(op), float => float_unary::<T>(op), bool => None)
}

/// `a * b + c` as two separately rounded operations (C without contraction).
fn mulacc<T: Arith>(a: u64, b: u64, c: u64) -> u64 {
    T::from_slot(a).mul_add(T::from_slot(b), T::from_slot(c)).to_slot()
}

pub(super) fn mulacc_fn(s: Scalar) -> Option<TerFn> {
    by_scalar!(s, |T| numeric => Some(mulacc::<T> as TerFn), bool => None)
}

fn cast<F: Lane, T: Lane>(a: u64) -> u64 {
    T::narrow(F::from_slot(a).widen()).to_slot()
}

fn cast_into<T: Lane>(from: Scalar) -> Option<UnFn> {
    by_scalar!(from, |F| any => Some(cast::<F, T> as UnFn))
}

/// The C conversion from dtype `from` to dtype `to`.
pub(super) fn cast_fn(from: Scalar, to: Scalar) -> Option<UnFn> {
    by_scalar!(to, |T| any => cast_into::<T>(from))
}

/// Canonical slot form of raw bits (zero-extended bytes from memory, or another type's slot of
/// the same item size for BITCAST).
fn canon<T: Lane>(a: u64) -> u64 {
    T::from_slot(a).to_slot()
}

pub(super) fn canon_fn(s: Scalar) -> Option<UnFn> {
    by_scalar!(s, |T| any => Some(canon::<T> as UnFn))
}

/// The slot form of a constant of dtype `s`.
pub(super) fn const_slot(c: ConstValue, s: Scalar) -> Option<u64> {
    let w = match c {
        ConstValue::Bool(b) => Wide::Int(b as i128),
        // u64 constants are held as their bit pattern.
        ConstValue::Int(i) if s == Scalar::U64 => Wide::Int(i as u64 as i128),
        ConstValue::Int(i) => Wide::Int(i as i128),
        ConstValue::Float(f) => Wide::Float(f),
    };
    by_scalar!(s, |T| any => Some(T::narrow(w).to_slot()))
}
