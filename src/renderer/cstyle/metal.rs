//! The Metal Shading Language dialect (Apple GPUs).

use super::dialect::CDialect;
use super::opencl::opencl_type;
use super::render::CStyleRenderer;
use crate::renderer::Target;
use crate::uop::{DType, Scalar, SpecialKind};

/// MSL: `kernel void` entry points whose buffers are `device` pointers bound by index
/// (`[[buffer(k)]]`), values passed by reference to `constant` memory (the device sets them with
/// `setBytes`), and the thread's position from three builtin parameters: the threadgroup's
/// position in the grid (`gid`), the thread's in its threadgroup (`lid`) and the threadgroup's
/// size (`lsz`). Type names are OpenCL C's (`uchar`, `long`; `long` is 64-bit); Metal has no
/// 64-bit floats (a kernel using them is an error naming the op, from the device). 16-bit floats
/// are stored as `ushort` with the shared conversions, bit casts are `as_type<T>`, and the math
/// functions are `metal::precise::` (correctly rounded where Metal has a choice, whatever the
/// compile options say about fast math).
pub fn metal_dialect() -> CDialect {
    CDialect {
        kernel_prefix: "kernel ",
        buffer_prefix: "device ",
        prelude: METAL_PRELUDE,
        barrier: "threadgroup_barrier(mem_flags::mem_threadgroup);",
        local_prefix: "threadgroup ",
        special: |kind, dim, wide| {
            let d = ["x", "y", "z"][dim as usize];
            let t = if wide { "long" } else { "int" };
            match kind {
                // The builtins are 32-bit unsigned: widen before multiplying past 2^31 items.
                SpecialKind::Global if wide => format!("((long)gid.{d}*lsz.{d}+lid.{d})"),
                SpecialKind::Global => format!("(int)(gid.{d}*lsz.{d}+lid.{d})"),
                SpecialKind::Group => format!("({t})gid.{d}"),
                SpecialKind::Local => format!("({t})lid.{d}"),
            }
        },
        cpu_entry: false,
        restrict: "",
        bitcast: |x, _, to| format!("as_type<{}>({x})", opencl_type(to)),
        type_name: opencl_type,
        int64_suffixes: ("l", "ul"),
        math_fn: |name, _| match name {
            "sqrt" | "exp2" | "log2" | "sin" => format!("precise::{name}"),
            _ => name.to_string(),
        },
        float_to_int: |x, to| format!("__sat_{}({x})", opencl_type(to)),
        // Metal's compiler is LLVM, which optimizes on signed overflow being undefined.
        wrap_signed: true,
        var_param: |ty, name| format!("constant {ty}& {name}"),
        param_attribute: |k| format!(" [[buffer({k})]]"),
        builtin_params: &[
            "uint3 gid [[threadgroup_position_in_grid]]",
            "uint3 lid [[thread_position_in_threadgroup]]",
            "uint3 lsz [[threads_per_threadgroup]]",
        ],
    }
}

/// The code generator's view of an Apple GPU: threadgroups of up to 1024 threads (every Apple
/// GPU's `maxThreadsPerThreadgroup`), no 64-bit floats, no explicit vectors.
pub fn metal_target(device: &str) -> Target {
    Target { supports_f64: false, local_max: [1024, 1024, 1024], ..Target::gpu(device) }
}

/// The MSL renderer for a device called `device` (it needs no Mac: `DEV=NULL`-style rendering
/// and the golden files of tests/metal_golden.rs use it anywhere).
pub fn metal_renderer(device: &str) -> CStyleRenderer {
    CStyleRenderer::new(metal_dialect(), metal_target(device))
}

/// Whether `dt` is a type Metal kernels cannot use (64-bit floats).
pub fn metal_lacks(dt: DType) -> bool {
    dt.scalar == Scalar::F64
}

/// Metal's standard library, the shared 16-bit float conversions, and saturating float → int
/// casts computed in float (Metal has no double; every float a kernel converts is f32 by then):
/// NaN is 0, and the bounds compare exactly since each rounds to a power of two or is exact.
const METAL_PRELUDE: &str = concat!(
    r#"#include <metal_stdlib>
using namespace metal;
#define FG_FN static inline
#define FG_F2U as_type<uint>
#define FG_U2F as_type<float>
#define FG_RINT rint
"#,
    half_prelude!(),
    r#"#define FG_SAT(T, LO, HI) FG_FN T __sat_##T(float x) { return isnan(x) ? (T)0 : x <= (float)(LO) ? (T)(LO) : x >= (float)(HI) ? (T)(HI) : (T)x; }
FG_SAT(char, -128, 127)
FG_SAT(uchar, 0, 255)
FG_SAT(short, -32768, 32767)
FG_SAT(ushort, 0, 65535)
FG_SAT(int, (-2147483647-1), 2147483647)
FG_SAT(uint, 0, 4294967295u)
FG_SAT(long, (-9223372036854775807l-1), 9223372036854775807l)
FG_SAT(ulong, 0, 18446744073709551615ul)
"#
);
