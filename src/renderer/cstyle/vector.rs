//! GCC/Clang vector types for vectorized kernels.

use crate::uop::{DType, Scalar};

/// Name of the typedef for a vector dtype: `vfloat16`, `vunsigned_int8`; `vbool16` for lane
/// masks.
pub(super) fn vector_name(dt: DType, type_name: fn(DType) -> &'static str) -> String {
    format!("v{}{}", type_name(dt.base()).replace(' ', "_"), dt.count)
}

/// A vector of `n` lane masks: what a comparison of two f32 vectors gives in GCC/Clang C, an
/// `int` per lane that is -1 (true) or 0 (false).
fn mask_typedef(n: usize) -> String {
    let lanes = (0..n).map(|_| "x").collect::<Vec<_>>().join(",");
    format!(
        "#ifndef FG_vbool{n}\n#define FG_vbool{n}\n\
         typedef int vbool{n} __attribute__((vector_size({size}), aligned(4)));\n\
         static inline __attribute__((always_inline)) vbool{n} __bcast_vbool{n}(int x) {{ return (vbool{n}){{{lanes}}}; }}\n\
         #endif\n",
        size = 4 * n
    )
}

/// A GCC/Clang vector type (unaligned, may alias its elements) and, for floats, its fused
/// multiply-add (a lane loop the compiler turns into one vector FMA instruction).
pub(super) fn vector_typedef(dt: DType, type_name: fn(DType) -> &'static str) -> String {
    let (elem, name, n) = (type_name(dt.base()), vector_name(dt, type_name), dt.count as usize);
    if dt.scalar == Scalar::Bool {
        return mask_typedef(n);
    }
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
    if dt.scalar == Scalar::F32 {
        // Selects by lane masks: the bits of `a` where the mask is set, else those of `b` (a
        // cast between vectors of one size keeps the bits); MAX as the scalar `(a<b)?b:a`.
        out.push_str(&mask_typedef(n));
        out.push_str(&format!(
            "static inline __attribute__((always_inline)) {name} __where_{name}(vbool{n} m, {name} a, {name} b) \
             {{ return ({name})((m & (vbool{n})a) | (~m & (vbool{n})b)); }}\n\
             static inline __attribute__((always_inline)) {name} __max_{name}({name} a, {name} b) \
             {{ return __where_{name}(a < b, b, a); }}\n"
        ));
        out.push_str(&exp2_helper(&name, n));
    }
    out.push_str("#endif\n");
    out
}

/// `exp2` of every lane at once: the prelude's `__fg_exp2f` written with vector operations
/// (the lanes' bits through an unsigned vector type of the same size; `vbool` lanes are ints).
/// Only where the dialect's prelude defines the polynomial (the C dialect's does).
fn exp2_helper(name: &str, n: usize) -> String {
    let (u, b) = (format!("__fg_vu{n}"), format!("vbool{n}"));
    format!(
        "#ifdef FG_EXP2_POLY\n\
         typedef unsigned int {u} __attribute__((vector_size({size}), aligned(4)));\n\
         static inline __attribute__((always_inline)) {name} __exp2_{name}({name} x) {{\n\
         \x20 {name} lo = __bcast_{name}(-160.0f), hi = __bcast_{name}(130.0f), m = __bcast_{name}(12582912.0f);\n\
         \x20 {name} c = __where_{name}(x < lo, lo, x);\n\
         \x20 c = __where_{name}(hi < c, hi, c);\n\
         \x20 {name} big = c + m;\n\
         \x20 {name} f = c - (big - m);\n\
         \x20 {name} p = FG_EXP2_POLY(f);\n\
         \x20 {b} k = ({b})(({u})big - ({u})m);\n\
         \x20 {b} k1 = k >> 1, k2 = k - k1;\n\
         \x20 {name} r = p * ({name})((({u})(k1 + 127)) << 23) * ({name})((({u})(k2 + 127)) << 23);\n\
         \x20 return __where_{name}(x != x, x, r);\n}}\n#endif\n",
        size = 4 * n
    )
}
