//! The CUDA C++ dialect (NVRTC).

use super::c::{c_math_fn, c_type, sat_helper};
use super::dialect::{no_param_attribute, plain_var_param, CDialect};
use crate::uop::SpecialKind;

/// CUDA C++ for NVRTC: `extern "C" __global__` kernels, one thread per global index
/// (`blockIdx*blockDim+threadIdx`), the same 16-bit float storage and conversions as C (as
/// `__device__` functions). NVRTC has no standard headers: math functions and `memcpy` are
/// built in, and the prelude defines `INFINITY`/`NAN`.
pub fn cuda_dialect() -> CDialect {
    CDialect {
        kernel_prefix: "extern \"C\" __global__ ",
        buffer_prefix: "",
        prelude: CUDA_PRELUDE,
        barrier: "__syncthreads();",
        local_prefix: "__shared__ ",
        special: |kind, dim, wide| {
            let d = ["x", "y", "z"][dim as usize];
            // The builtins are unsigned 32-bit: widen before multiplying when the index can
            // pass 2^31.
            let w = if wide { "(long long)" } else { "" };
            match kind {
                SpecialKind::Global => format!("({w}blockIdx.{d}*blockDim.{d}+threadIdx.{d})"),
                SpecialKind::Group => format!("{w}blockIdx.{d}"),
                SpecialKind::Local => format!("{w}threadIdx.{d}"),
            }
        },
        cpu_entry: false,
        restrict: "__restrict__",
        // NVRTC has no GNU statement expressions; a template helper from the prelude instead.
        bitcast: |x, _, to| format!("__bitcast<{}>({x})", c_type(to)),
        type_name: c_type,
        int64_suffixes: ("ll", "ull"),
        math_fn: c_math_fn,
        float_to_int: sat_helper,
        // NVRTC has no -fwrapv, and NVVM optimizes on signed overflow being undefined.
        wrap_signed: true,
        var_param: plain_var_param,
        param_attribute: no_param_attribute,
        builtin_params: &[],
    }
}

/// CUDA's prelude: NVRTC has no standard headers, so `INFINITY`/`NAN` and a bit-cast helper.
const CUDA_PRELUDE: &str = concat!(
    r#"#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
template <class T, class F> __device__ __forceinline__ T __bitcast(F x) { T y; memcpy(&y, &x, sizeof(y)); return y; }
#define FG_FN __device__ __forceinline__
#define FG_F2U __float_as_uint
#define FG_U2F __uint_as_float
#define FG_RINT rintf
"#,
    half_prelude!(),
    saturating_casts_prelude!()
);
