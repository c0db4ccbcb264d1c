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
/// multiply-add (one vector FMA instruction: a lane list gcc turns into it, clang's x86 builtin for it).
pub(super) fn vector_typedef(dt: DType, type_name: fn(DType) -> &'static str) -> String {
    let (elem, name, n) = (type_name(dt.base()), vector_name(dt, type_name), dt.count as usize);
    if dt.scalar == Scalar::Bool {
        return mask_typedef(n);
    }
    if matches!(dt.scalar, Scalar::F16 | Scalar::BF16) {
        // Stored as 16-bit integers: the same vector type as u16's.
        return vector_typedef(DType::U16.vec(dt.count), type_name);
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
            "static inline __attribute__((always_inline)) {name} __fma_{name}({name} a, {name} b, {name} c) {{\n{}\
             \x20 return ({name}){{{}}};\n{}}}\n",
            clang_vector_fma(dt, &name),
            lanes(&|i| format!("{f}(a[{i}],b[{i}],c[{i}])")),
            if clang_x86_fma(dt).is_some() { "#endif\n" } else { "" }
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
        out.push_str(&format!(
            "typedef unsigned int __fg_vu{n} __attribute__((vector_size({}), aligned(4)));\n",
            4 * n
        ));
        out.push_str(&exp2_helper(&name, n));
        out.push_str(&vector_typedef(DType::U16.vec(dt.count), type_name));
        out.push_str(&half_conversions(&name, n));
    }
    out.push_str("#endif\n");
    out
}

/// clang's builtin for one x86 vector FMA instruction on `dt` (f32 or f64 lanes filling 16,
/// 32 or 64 bytes), with the macro that says the target has it.
fn clang_x86_fma(dt: DType) -> Option<(&'static str, &'static str)> {
    let f64 = dt.scalar == Scalar::F64;
    Some(match (dt.base().itemsize() * dt.count as usize, f64) {
        (16, false) => ("__builtin_ia32_vfmaddps(a, b, c)", "__FMA__"),
        (32, false) => ("__builtin_ia32_vfmaddps256(a, b, c)", "__FMA__"),
        (64, false) => ("__builtin_ia32_vfmaddps512_mask(a, b, c, (unsigned short)-1, 4)", "__AVX512F__"),
        (16, true) => ("__builtin_ia32_vfmaddpd(a, b, c)", "__FMA__"),
        (32, true) => ("__builtin_ia32_vfmaddpd256(a, b, c)", "__FMA__"),
        (64, true) => ("__builtin_ia32_vfmaddpd512_mask(a, b, c, (unsigned char)-1, 4)", "__AVX512F__"),
        _ => return None,
    })
}

/// The start of an FMA helper's body under clang on x86: one vector FMA instruction, with the
/// lane list (what gcc turns into that instruction) as the `#else`. clang scalarizes a lane list
/// of `__builtin_fmaf` and its straight-line vectorizer regroups the lanes: in a loop whose
/// vector accumulators are added up lane by lane afterwards it built them from shuffles, 13x
/// slower (the final Linear of the MNIST model with the K axis as lanes: 20.2 ms, and 1.6 ms
/// with gcc). `(unsigned short)-1, 4` is the 512-bit form's all-lanes mask and current rounding.
fn clang_vector_fma(dt: DType, name: &str) -> String {
    match clang_x86_fma(dt) {
        Some((call, feature)) => {
            format!("#if defined(__clang__) && defined({feature})\n\x20 return ({name}){call};\n#else\n")
        }
        None => String::new(),
    }
}

/// `exp2` of every lane at once: the prelude's `__fg_exp2f` written with vector operations
/// (the lanes' bits through an unsigned vector type of the same size; `vbool` lanes are ints).
/// Only where the dialect's prelude defines the polynomial (the C dialect's does).
fn exp2_helper(name: &str, n: usize) -> String {
    let (u, b) = (format!("__fg_vu{n}"), format!("vbool{n}"));
    format!(
        "#ifdef FG_EXP2_POLY\n\
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
         \x20 return __where_{name}(x != x, x, r);\n}}\n#endif\n"
    )
}

/// Conversions between `n` 16-bit floats (a `vunsigned_short{n}` of their bits) and an f32
/// vector `name`, lane for lane the prelude's `__bf2f`, `__f2bf`, `__h2f` and `__f2h` written
/// with vector operations (bit-exact with them, and with the `half` crate): a bf16 weight is
/// widened by one shift, with no per-lane calls. `__FG_SEL` selects bits by a lane mask.
fn half_conversions(name: &str, n: usize) -> String {
    let (h, u, b) = (format!("vunsigned_short{n}"), format!("__fg_vu{n}"), format!("vbool{n}"));
    let f = "static inline __attribute__((always_inline))";
    format!(
        "#ifndef __FG_SEL\n#define __FG_SEL(B, M, X, Y) (((M) & (B)(X)) | (~(M) & (B)(Y)))\n#endif\n\
         {f} {name} __bf2f_v{n}({h} x) {{ return ({name})(__builtin_convertvector(x, {u}) << 16); }}\n\
         {f} {h} __f2bf_v{n}({name} x) {{\n\
         \x20 {u} v = ({u})x;\n\
         \x20 {u} nan = (v >> 16) | 0x40u, rounded = (v + 0x7fffu + ((v >> 16) & 1u)) >> 16;\n\
         \x20 {b} m = ({b})((v & 0x7fffffffu) > 0x7f800000u);\n\
         \x20 return __builtin_convertvector(({u})__FG_SEL({b}, m, nan, rounded), {h});\n}}\n\
         {f} {name} __h2f_v{n}({h} x) {{\n\
         \x20 {u} w = __builtin_convertvector(x, {u});\n\
         \x20 {u} s = (w & 0x8000u) << 16, e = (w >> 10) & 0x1fu, m = w & 0x3ffu;\n\
         \x20 {u} sub = s | ({u})(__builtin_convertvector(m, {name}) * 5.9604644775390625e-8f);\n\
         \x20 {u} expo = ({u})__FG_SEL({b}, ({b})(e == 31u), 0x7f800000u + ({u}){{0}}, (e + 112u) << 23);\n\
         \x20 {u} nrm = s | expo | (m << 13);\n\
         \x20 return ({name})__FG_SEL({b}, ({b})(e == 0u), sub, nrm);\n}}\n\
         {f} {h} __f2h_v{n}({name} x) {{\n\
         \x20 {u} v = ({u})x;\n\
         \x20 {u} s = (v >> 16) & 0x8000u, a = v & 0x7fffffffu;\n\
         \x20 {b} small = ({b})(a < 0x38800000u);\n\
         \x20 /* the subnormal's bits: a * 2^24 (below 1024), rounded half to even by adding and\n\
         \x20    subtracting 1.5 * 2^23 */\n\
         \x20 {name} t = ({name})({u})__FG_SEL({b}, small, a, ({u}){{0}}) * 16777216.0f;\n\
         \x20 {u} sub = __builtin_convertvector((t + 12582912.0f) - 12582912.0f, {u});\n\
         \x20 {u} nrm = (a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13;\n\
         \x20 {u} r = ({u})__FG_SEL({b}, small, sub, nrm);\n\
         \x20 r = ({u})__FG_SEL({b}, ({b})(a >= 0x477ff000u), 0x7c00u + ({u}){{0}}, r);\n\
         \x20 r = ({u})__FG_SEL({b}, ({b})(a > 0x7f800000u), 0x7e00u + ({u}){{0}}, r);\n\
         \x20 return __builtin_convertvector(s | r, {h});\n}}\n"
    )
}
