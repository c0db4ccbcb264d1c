//! What a C-style dialect supplies to the renderer.

use crate::uop::{DType, SpecialKind};

/// The parts of C-style source that differ between dialects.
pub struct CDialect {
    /// Text before the kernel's return type (`__kernel `, `extern "C" __global__ `).
    pub kernel_prefix: &'static str,
    /// Qualifier before a buffer parameter's type (`__global `).
    pub buffer_prefix: &'static str,
    /// Definitions printed before the kernel (includes, half conversions).
    pub prelude: &'static str,
    /// Barrier statement.
    pub barrier: &'static str,
    /// Qualifier of a work-group local array (`__local `, `__shared__ `).
    pub local_prefix: &'static str,
    /// Text for a GPU index builtin; `wide` asks for a 64-bit value (more than 2^31 items).
    pub special: fn(kind: SpecialKind, dim: u8, wide: bool) -> String,
    /// Whether the kernel is wrapped in a `void name(void** bufs, const long long* vals)` entry
    /// (the CPU's calling convention); otherwise the kernel itself is the entry point.
    pub cpu_entry: bool,
    /// The no-alias qualifier of buffer parameters (`restrict` in C, `__restrict__` in CUDA C++).
    pub restrict: &'static str,
    /// Expression reinterpreting the bits of `x` (of dtype `from`) as dtype `to`.
    pub bitcast: fn(x: &str, from: DType, to: DType) -> String,
    /// Type name of a scalar dtype; for a pointer dtype, the element type its buffer stores.
    pub type_name: fn(DType) -> &'static str,
    /// Suffixes of 64-bit signed and unsigned integer literals (`ll`/`ull` in C, `l`/`ul` in
    /// OpenCL C).
    pub int64_suffixes: (&'static str, &'static str),
    /// Name of the math function `name` (`sqrt`, `exp2`, `log2`, `sin`, `trunc`) for `dt`.
    pub math_fn: fn(name: &str, dt: DType) -> String,
    /// Float expression `x` converted to integer dtype `to`: truncated, saturated at the
    /// type's range, NaN to 0 (the interpreter's semantics).
    pub float_to_int: fn(x: &str, to: DType) -> String,
    /// Whether 32/64-bit signed `+ - * neg <<` that may overflow (by range analysis) is computed
    /// in the unsigned type, so it wraps. C gets wrapping from `-fwrapv`; OpenCL C has no such
    /// option, and its compilers exploit signed overflow being undefined.
    pub wrap_signed: bool,
    /// A value parameter's declaration from its type and name (`int n`; Metal passes values by
    /// reference to constant memory: `constant int& n`).
    pub var_param: fn(ty: &str, name: &str) -> String,
    /// Text after the parameter at `position` of the signature (Metal's ` [[buffer(k)]]`).
    pub param_attribute: fn(position: usize) -> String,
    /// Parameters after the buffers and values (Metal's thread-position builtins).
    pub builtin_params: &'static [&'static str],
}

/// `ty name`: a value parameter as C, OpenCL C and CUDA C take it.
pub fn plain_var_param(ty: &str, name: &str) -> String {
    format!("{ty} {name}")
}

/// No attribute after a parameter.
pub fn no_param_attribute(_: usize) -> String {
    String::new()
}
