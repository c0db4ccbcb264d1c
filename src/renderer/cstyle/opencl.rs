//! The OpenCL C 1.2 dialect.

use super::c::c_type;
use super::dialect::{no_param_attribute, plain_var_param, CDialect};
use crate::uop::{DType, Scalar, SpecialKind};

/// OpenCL C 1.2: `__kernel` entry points with `__global` buffers, one work item per global
/// index. The math builtins are overloaded (`sqrt`, not `sqrtf`), 64-bit integers are
/// `long`/`ulong`, bool buffers hold `uchar` (no `bool` kernel arguments), and 16-bit floats
/// are stored as `ushort` with the same conversions as C, written with `as_uint`/`as_float`.
pub fn opencl_dialect() -> CDialect {
    CDialect {
        kernel_prefix: "__kernel ",
        buffer_prefix: "__global ",
        prelude: OPENCL_PRELUDE,
        barrier: "barrier(CLK_LOCAL_MEM_FENCE);",
        local_prefix: "__local ",
        special: |kind, dim, wide| {
            let t = if wide { "long" } else { "int" };
            match kind {
                SpecialKind::Global => format!("({t})get_global_id({dim})"),
                SpecialKind::Group => format!("({t})get_group_id({dim})"),
                SpecialKind::Local => format!("({t})get_local_id({dim})"),
            }
        },
        cpu_entry: false,
        restrict: "restrict",
        bitcast: |x, _, to| format!("as_{}({x})", opencl_type(to)),
        type_name: opencl_type,
        int64_suffixes: ("l", "ul"),
        math_fn: |name, _| name.to_string(),
        float_to_int: |x, to| format!("convert_{}_sat_rtz({x})", opencl_type(to)),
        wrap_signed: true,
        var_param: plain_var_param,
        param_attribute: no_param_attribute,
        builtin_params: &[],
    }
}

/// OpenCL C type name of a dtype; a pointer to bool is a `uchar` buffer (OpenCL C does not
/// allow `bool` in kernel arguments), while bool values in registers stay `bool`.
pub fn opencl_type(dt: DType) -> &'static str {
    match dt.scalar {
        Scalar::Bool if dt.ptr => "uchar",
        Scalar::Bool => "bool",
        Scalar::I8 => "char",
        Scalar::I64 => "long",
        Scalar::U8 => "uchar",
        Scalar::U16 | Scalar::F16 | Scalar::BF16 => "ushort",
        Scalar::U32 => "uint",
        Scalar::U64 => "ulong",
        _ => c_type(dt),
    }
}

/// The OpenCL header (doubles where the device has them, no FMA contraction) and the shared
/// 16-bit float conversions.
const OPENCL_PRELUDE: &str = concat!(opencl_header!(), half_prelude!());
