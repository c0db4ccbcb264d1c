//! GCC/Clang vector types for vectorized kernels.

use crate::uop::{DType, Scalar};

/// Name of the typedef for a vector dtype: `vfloat16`, `vunsigned_int8`.
pub(super) fn vector_name(dt: DType, type_name: fn(DType) -> &'static str) -> String {
    format!("v{}{}", type_name(dt.base()).replace(' ', "_"), dt.count)
}

/// A GCC/Clang vector type (unaligned, may alias its elements) and, for floats, its fused
/// multiply-add (a lane loop the compiler turns into one vector FMA instruction).
pub(super) fn vector_typedef(dt: DType, type_name: fn(DType) -> &'static str) -> String {
    let (elem, name, n) = (type_name(dt.base()), vector_name(dt, type_name), dt.count as usize);
    let size = dt.base().itemsize() * n;
    let align = dt.base().itemsize();
    // The helpers list every lane (no loops): the compilers' loop vectorizers are off (see
    // `runtime::cc`), and their straight-line vectorizers turn a lane list into one instruction
    // once it is inlined (gcc at -O2 would not inline a 16-call helper at 64 call sites).
    let lanes = |f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(",");
    // Guarded: the CPU device compiles several kernels as one C file.
    let mut out = format!(
        "#ifndef FG_{name}\n#define FG_{name}\n\
         typedef {elem} {name} __attribute__((vector_size({size}), aligned({align}), may_alias));\n\
         static inline __attribute__((always_inline)) {name} __bcast_{name}({elem} x) {{ return ({name}){{{}}}; }}\n",
        lanes(&|_| "x".to_string())
    );
    if dt.is_float() {
        let f = if dt.scalar == Scalar::F64 { "__builtin_fma" } else { "__builtin_fmaf" };
        out.push_str(&format!(
            "static inline __attribute__((always_inline)) {name} __fma_{name}({name} a, {name} b, {name} c) {{ return ({name}){{{}}}; }}\n",
            lanes(&|i| format!("{f}(a[{i}],b[{i}],c[{i}])"))
        ));
    }
    out.push_str("#endif\n");
    out
}
