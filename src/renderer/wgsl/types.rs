//! WGSL types, literals, casts and the helper functions every shader starts with.
//!
//! WGSL has 32-bit scalars (`f32`, `i32`, `u32`, `bool`), and wgpu's native extensions add
//! `i64`/`u64` (`SHADER_INT64`) and `f64` (`SHADER_F64`). The other dtypes are emulated: in
//! registers 8/16-bit integers live in `i32`/`u32` (wrapped back to their width after each op),
//! f16/bf16 are their 16-bit patterns in a `u32` (computed in f32, as on the CPU), and bool is
//! `bool`; in memory every 8/16-bit dtype, bool included, is packed into `u32` words, as the host
//! stores them.

use crate::uop::{ConstValue, DType, Scalar};

/// The register type of a scalar dtype.
pub fn wgsl_type(dt: DType) -> &'static str {
    match dt.scalar {
        Scalar::Bool => "bool",
        Scalar::I8 | Scalar::I16 | Scalar::I32 => "i32",
        Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::F16 | Scalar::BF16 => "u32",
        Scalar::I64 => "i64",
        Scalar::U64 => "u64",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
        Scalar::Void => "void",
    }
}

/// Elements per `u32` word of a dtype stored packed (8/16-bit dtypes and bool), else `None`.
pub fn packed_per_word(dt: DType) -> Option<u32> {
    match dt.itemsize() {
        1 => Some(4),
        2 => Some(2),
        _ => None,
    }
}

/// `x` (an `i32`/`u32` expression) wrapped to the width of a small integer or 16-bit float
/// dtype's register form; other dtypes unchanged.
pub fn wrap_small(x: &str, dt: DType) -> String {
    match dt.scalar {
        Scalar::U8 => format!("({x}&0xffu)"),
        Scalar::U16 | Scalar::F16 | Scalar::BF16 => format!("({x}&0xffffu)"),
        Scalar::I8 => format!("(({x}<<24u)>>24u)"),
        Scalar::I16 => format!("(({x}<<16u)>>16u)"),
        _ => x.to_string(),
    }
}

/// A literal of `dt`. Values naga's constant evaluation would reject or round (infinities,
/// NaN, -0.0) are bit patterns reinterpreted at run time by `fg_f32`.
pub fn wgsl_literal(v: ConstValue, dt: DType) -> String {
    let text = match dt.scalar {
        Scalar::Bool => (if v.as_bool() { "true" } else { "false" }).to_string(),
        Scalar::F16 => format!("{}u", half::f16::from_f32(v.as_f64() as f32).to_bits()),
        Scalar::BF16 => format!("{}u", half::bf16::from_f32(v.as_f64() as f32).to_bits()),
        Scalar::F32 => {
            let f = v.as_f64() as f32;
            if f.is_finite() && (f != 0.0 || f.is_sign_positive()) {
                format!("{f:?}f")
            } else {
                format!("fg_f32({}u)", f.to_bits())
            }
        }
        Scalar::F64 => {
            let f = v.as_f64();
            if f.is_finite() && (f != 0.0 || f.is_sign_positive()) {
                format!("{f:?}lf")
            } else {
                format!("fg_f64({}lu)", f.to_bits())
            }
        }
        Scalar::I64 => match v.as_i64() {
            i64::MIN => "(-9223372036854775807li-1li)".to_string(),
            i => format!("{i}li"),
        },
        Scalar::U64 => format!("{}lu", v.as_i64() as u64),
        Scalar::U8 | Scalar::U16 | Scalar::U32 => format!("{}u", v.as_i64() as u32),
        Scalar::I32 if v.as_i64() == i32::MIN as i64 => "(-2147483647i-1i)".to_string(),
        Scalar::I8 | Scalar::I16 | Scalar::I32 => format!("{}i", v.as_i64() as i32),
        Scalar::Void => panic!("WGSL renderer: a constant of type void"),
    };
    if text.starts_with('-') {
        format!("({text})")
    } else {
        text
    }
}

/// Converts `x` (register form of `from`) to the register form of `to`, with the interpreter's
/// semantics: integers wrap, floats to integers truncate and saturate (NaN is 0), 16-bit floats
/// round to nearest even.
pub fn wgsl_cast(x: &str, from: DType, to: DType) -> String {
    let x = match from.scalar {
        Scalar::F16 => format!("fg_h2f({x})"),
        Scalar::BF16 => format!("fg_bf2f({x})"),
        _ => x.to_string(),
    };
    let from_float = from.is_float();
    match to.scalar {
        Scalar::Bool if from.is_bool() => x,
        Scalar::Bool => format!("({x}!={})", wgsl_literal(ConstValue::Int(0), compute_dtype(from))),
        Scalar::F16 => format!("fg_f2h(f32({x}))"),
        Scalar::BF16 => format!("fg_f2bf(f32({x}))"),
        Scalar::F32 | Scalar::F64 => format!("{}({x})", wgsl_type(to)),
        _ if from_float => float_to_int(&x, compute_dtype(from), to),
        // Widening keeps the source's signedness (zero- or sign-extends), then reinterprets.
        _ if to.itemsize() == 8 && from.itemsize() < 8 && from.is_unsigned() => {
            if to.is_unsigned() {
                format!("u64({x})")
            } else {
                format!("i64(u64({x}))")
            }
        }
        _ if to.itemsize() == 8 && from.itemsize() < 8 => {
            // Sign-extended by hand: lavapipe compares `i64(x)` of an i32 `x` wrongly.
            let bits = format!("(u64(bitcast<u32>(i32({x}))) | select(0lu, 0xffffffff00000000lu, i32({x}) < 0i))");
            if to.is_unsigned() {
                bits
            } else {
                format!("bitcast<i64>({bits})")
            }
        }
        _ => wrap_small(&format!("{}({x})", wgsl_type(to)), to),
    }
}

/// A float `x` (f32 or f64) to integer dtype `to`: truncated, saturated, NaN to 0. The
/// conversion itself only sees values in range (out of range it is undefined in SPIR-V).
fn float_to_int(x: &str, from: DType, to: DType) -> String {
    let (lo, hi) = to.int_range();
    let f = |v: f64| wgsl_literal(ConstValue::Float(v), from);
    // The largest float of `from` below 2^bits (for the clamp) and the bound at which the
    // result saturates to the maximum.
    let top = if from.scalar == Scalar::F32 { (hi as f32) as f64 } else { hi as f64 };
    let below_top = if top > hi as f64 { next_down(top, from) } else { top };
    let t = wgsl_type(to);
    let converted = format!("{t}(clamp({x},{},{}))", f(lo as f64), f(below_top));
    let hi_lit = wgsl_literal(ConstValue::Int(hi as i64), to);
    let saturated = format!("select({converted},{hi_lit},{x}>={})", f(top));
    let nan = if from.scalar == Scalar::F64 { "fg_nan64" } else { "fg_nan" };
    format!("select({saturated},{},{nan}({x}))", wgsl_literal(ConstValue::Int(0), to))
}

/// The dtype a value of `dt` is computed in (16-bit floats in f32).
fn compute_dtype(dt: DType) -> DType {
    if matches!(dt.scalar, Scalar::F16 | Scalar::BF16) {
        DType::F32
    } else {
        dt
    }
}

/// The largest value of `from`'s float type below `v` (v positive and finite).
fn next_down(v: f64, from: DType) -> f64 {
    if from.scalar == Scalar::F32 {
        f32::from_bits((v as f32).to_bits() - 1) as f64
    } else {
        f64::from_bits(v.to_bits() - 1)
    }
}

/// Helpers every shader starts with: bit-pattern floats, the 16-bit float conversions
/// (bit-exact with the `half` crate, as the C prelude's), f32 `exp2` by the C device's polynomial (within 1.2 ulp; the nearest integer by `round`,
/// since Vulkan compilers may reassociate the C version's `(x + 1.5·2^23) - 1.5·2^23`) and f32 `log2` as `e + 2·atanh(s)/ln 2` from the
/// exponent and mantissa bits (lavapipe's is off by ~1e-8 absolute near 1, where `log1p` needs it exact), so WEBGPU's results do not depend
/// on the driver's approximations.
pub const WGSL_PRELUDE: &str = r#"fn fg_f32(b: u32) -> f32 { return bitcast<f32>(b); }
fn fg_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn fg_h2f(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u; let e = (h >> 10u) & 0x1fu; let m = h & 0x3ffu;
  let sub = s | bitcast<u32>(f32(m) * 5.9604644775390625e-8f);
  let expo = select((e + 112u) << 23u, 0x7f800000u, e == 31u);
  return bitcast<f32>(select(s | expo | (m << 13u), sub, e == 0u));
}
fn fg_f2h(f: f32) -> u32 {
  let u = bitcast<u32>(f);
  let s = (u >> 16u) & 0x8000u; let a = u & 0x7fffffffu;
  let tiny = select(0u, a, a < 0x38800000u);
  let sub = u32(round(bitcast<f32>(tiny) * 16777216.0f));
  let nrm = (a - 0x38000000u + 0x0fffu + ((a >> 13u) & 1u)) >> 13u;
  var r = select(nrm, sub, a < 0x38800000u);
  r = select(r, 0x7c00u, a >= 0x477ff000u);
  r = select(r, 0x7e00u, a > 0x7f800000u);
  return s | r;
}
fn fg_bf2f(b: u32) -> f32 { return bitcast<f32>(b << 16u); }
fn fg_f2bf(f: f32) -> u32 {
  let u = bitcast<u32>(f);
  let nan = (u >> 16u) | 0x40u; let rounded = (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u;
  return select(rounded, nan, (u & 0x7fffffffu) > 0x7f800000u) & 0xffffu;
}
fn fg_exp2(x: f32) -> f32 {
  let c = clamp(x, -160.0f, 130.0f);
  let nf = round(c);
  let f = c - nf;
  let p = ((((((0.00015353361959569156f * f + 0.0013398875016719103f) * f + 0.00961843691766262f) * f
    + 0.055503323674201965f) * f + 0.24022647738456726f) * f + 0.6931471824645996f) * f + 1.0f);
  let n = i32(nf);
  let n1 = n >> 1u; let n2 = n - n1;
  let r = p * bitcast<f32>(u32(n1 + 127) << 23u) * bitcast<f32>(u32(n2 + 127) << 23u);
  return select(r, x, fg_nan(x));
}
fn fg_log2(x: f32) -> f32 {
  let sub = x < 1.17549435e-38f;
  let u = bitcast<u32>(select(x, x * 16777216.0f, sub));
  var e = i32((u >> 23u) & 0xffu) - select(127i, 151i, sub);
  var m = bitcast<f32>((u & 0x7fffffu) | 0x3f800000u);
  let big = m > 1.41421356f;
  m = select(m, m * 0.5f, big);
  e = e + select(0i, 1i, big);
  let s = (m - 1.0f) / (m + 1.0f);
  let s2 = s * s;
  let p = ((((s2 * 0.09090909f + 0.11111111f) * s2 + 0.14285715f) * s2 + 0.2f) * s2 + 0.33333334f) * s2 + 1.0f;
  let r = f32(e) + 2.0f * s * p * 1.44269504f;
  let special = select(select(r, bitcast<f32>(0xff800000u), x == 0.0f), x, x == bitcast<f32>(0x7f800000u));
  return select(special, bitcast<f32>(0x7fc00000u), x < 0.0f || fg_nan(x));
}
"#;

/// The prelude's f64 helper, only where the device has f64 (`SHADER_F64`).
pub const WGSL_F64_PRELUDE: &str = "fn fg_f64(b: u64) -> f64 { return bitcast<f64>(b); }
fn fg_nan64(x: f64) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu; }
";
