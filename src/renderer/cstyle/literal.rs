//! Constants and casts as C-style text.

use super::c::c_type;
use super::dialect::CDialect;
use crate::uop::{ConstValue, DType, Scalar};

/// A C literal for a constant of `dt`.
pub fn c_const(v: ConstValue, dt: DType) -> String {
    literal(v, dt, c_type, ("ll", "ull"))
}

/// A literal for a constant of `dt`, with the dialect's type names and 64-bit suffixes.
pub(super) fn literal(
    v: ConstValue,
    dt: DType,
    type_name: fn(DType) -> &'static str,
    (ll, ull): (&str, &str),
) -> String {
    let text = unparenthesized_literal(v, dt, type_name, (ll, ull));
    // `a - -1.0f` must not become the `--` operator.
    if text.starts_with('-') {
        format!("({text})")
    } else {
        text
    }
}

pub(super) fn unparenthesized_literal(
    v: ConstValue,
    dt: DType,
    type_name: fn(DType) -> &'static str,
    (ll, ull): (&str, &str),
) -> String {
    match dt.scalar {
        Scalar::Bool => (if v.as_bool() { "1" } else { "0" }).to_string(),
        // 16-bit floats are stored as their bit patterns.
        Scalar::F16 => format!("(({})0x{:04x})", type_name(dt), half::f16::from_f32(v.as_f64() as f32).to_bits()),
        Scalar::BF16 => format!("(({})0x{:04x})", type_name(dt), half::bf16::from_f32(v.as_f64() as f32).to_bits()),
        Scalar::F32 | Scalar::F64 => {
            let f = v.as_f64();
            let suffix = if dt.scalar == Scalar::F64 { "" } else { "f" };
            let cast = if dt.scalar == Scalar::F64 { "(double)" } else { "(float)" };
            if f.is_nan() {
                format!("{cast}NAN")
            } else if f.is_infinite() {
                format!("{}{cast}INFINITY", if f < 0.0 { "-" } else { "" })
            } else if dt.scalar == Scalar::F64 {
                format!("{f:.17e}")
            } else {
                format!("{:.9e}{suffix}", f as f32)
            }
        }
        Scalar::I64 => match v.as_i64() {
            i64::MIN => format!("(-9223372036854775807{ll}-1)"),
            i => format!("{i}{ll}"),
        },
        Scalar::U64 => format!("{}{ull}", v.as_i64() as u64),
        Scalar::U32 => format!("{}u", v.as_i64() as u32),
        Scalar::I32 => match v.as_i64() {
            i if i == i32::MIN as i64 => "(-2147483647-1)".to_string(),
            i => i.to_string(),
        },
        _ => format!("(({}){})", type_name(dt), v.as_i64()),
    }
}

/// Converts expression `x` of dtype `from` to `to` with C semantics, going through float for
/// the 16-bit float types.
pub(super) fn c_cast(x: &str, from: DType, to: DType, d: &CDialect) -> String {
    if to.count > 1 {
        // Vectors cast between 16-bit floats and f32 (`vector.rs` defines the helpers) and from
        // small integers to f32 (exact, lane by lane).
        if from.is_int() && to.scalar == Scalar::F32 {
            return format!("__builtin_convertvector({x}, {})", super::vector::vector_name(to, d.type_name));
        }
        let name = match (from.scalar, to.scalar) {
            (Scalar::BF16, Scalar::F32) => "bf2f",
            (Scalar::F16, Scalar::F32) => "h2f",
            (Scalar::F32, Scalar::BF16) => "f2bf",
            (Scalar::F32, Scalar::F16) => "f2h",
            _ => panic!("C renderer: no vector cast from {from:?} to {to:?}"),
        };
        return format!("__{name}_v{}({x})", to.count);
    }
    let as_float = match from.scalar {
        Scalar::F16 => format!("__h2f({x})"),
        Scalar::BF16 => format!("__bf2f({x})"),
        _ => x.to_string(),
    };
    match to.scalar {
        Scalar::F16 => format!("__f2h((float)({as_float}))"),
        Scalar::BF16 => format!("__f2bf((float)({as_float}))"),
        Scalar::Bool => format!("({as_float}!=0)"),
        // Float to integer: truncate, saturate, NaN to 0 (a plain C cast is undefined there).
        _ if from.is_float() && to.is_int() => (d.float_to_int)(&as_float, to),
        _ => format!("(({})({as_float}))", (d.type_name)(to)),
    }
}
