//! The C dialect (the CPU device): plain C11 with GNU statement expressions and vector types.

use super::dialect::{no_param_attribute, plain_var_param, CDialect};
use crate::uop::{DType, Scalar};

/// The plain C dialect for the CPU device.
pub fn c_dialect() -> CDialect {
    CDialect {
        kernel_prefix: "static inline ",
        buffer_prefix: "",
        prelude: C_PRELUDE,
        barrier: "",
        local_prefix: "",
        special: |_, _, _| panic!("C has no GPU index builtins"),
        cpu_entry: true,
        restrict: "restrict",
        bitcast: |x, from, to| {
            format!("({{{} __x = {x}; {} __y; memcpy(&__y, &__x, sizeof(__y)); __y;}})", c_type(from), c_type(to))
        },
        type_name: c_type,
        int64_suffixes: ("ll", "ull"),
        math_fn: cpu_math_fn,
        float_to_int: sat_helper,
        wrap_signed: false,
        var_param: plain_var_param,
        param_attribute: no_param_attribute,
        builtin_params: &[],
    }
}

const C_PRELUDE: &str = concat!(
    r#"#include <math.h>
#include <stdbool.h>
#include <string.h>
#define FG_FN static inline
static inline unsigned int FG_F2U(float f) { unsigned int u; memcpy(&u, &f, 4); return u; }
static inline float FG_U2F(unsigned int u) { float f; memcpy(&f, &u, 4); return f; }
#define FG_RINT rintf
"#,
    half_prelude!(),
    saturating_casts_prelude!(),
    exp2_prelude!()
);

/// C type name of a scalar dtype (f16/bf16 are stored as `unsigned short`).
pub fn c_type(dt: DType) -> &'static str {
    match dt.scalar {
        Scalar::Void => "void",
        Scalar::Bool => "bool",
        Scalar::I8 => "signed char",
        Scalar::I16 => "short",
        Scalar::I32 => "int",
        Scalar::I64 => "long long",
        Scalar::U8 => "unsigned char",
        Scalar::U16 | Scalar::F16 | Scalar::BF16 => "unsigned short",
        Scalar::U32 => "unsigned int",
        Scalar::U64 => "unsigned long long",
        Scalar::F32 => "float",
        Scalar::F64 => "double",
    }
}

/// The saturating float-to-integer helper of the C and CUDA preludes (`__sat_i32`).
pub(super) fn sat_helper(x: &str, to: DType) -> String {
    let short = match to.scalar {
        Scalar::I8 => "i8",
        Scalar::U8 => "u8",
        Scalar::I16 => "i16",
        Scalar::U16 => "u16",
        Scalar::I32 => "i32",
        Scalar::U32 => "u32",
        Scalar::I64 => "i64",
        Scalar::U64 => "u64",
        s => panic!("float to int cast: {s:?} is not an integer type"),
    };
    format!("__sat_{short}({x})")
}

/// The CPU's math functions: C's, except f32 `exp2`, which is the prelude's inline
/// `__fg_exp2f` (a polynomial the compiler can vectorize, where libm's `exp2f` is a call per
/// element; within 1.2 ulp of the exact value).
fn cpu_math_fn(name: &str, dt: DType) -> String {
    if name == "exp2" && dt.scalar == Scalar::F32 {
        "__fg_exp2f".to_string()
    } else {
        c_math_fn(name, dt)
    }
}

/// C's math functions: `sqrt` for double, `sqrtf` for float.
pub(super) fn c_math_fn(name: &str, dt: DType) -> String {
    if dt.scalar == Scalar::F64 {
        name.to_string()
    } else {
        format!("{name}f")
    }
}
