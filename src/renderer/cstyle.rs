//! The C-style renderer. One walk over the linear program prints C; a `CDialect` supplies the
//! few things that differ between C, OpenCL C and CUDA C (kernel prefix, buffer qualifiers,
//! index builtins, barrier, type names, math function names, the argument-passing entry).
//!
//! Single-use ALU results are inlined into their user; everything else gets a named variable
//! (`alu3`, `val0`, `acc1`, `ridx2`), so the source stays readable at DEBUG=4.

use super::{Renderer, Target};
use crate::uop::{Arg, AxisType, ConstValue, DType, FxHashMap, Ops, Scalar, SpecialKind, UOp};
use std::fmt::Write;

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
}

/// The 16-bit float conversions every C-style dialect shares (f16 and bf16 are stored as
/// 16-bit integers and computed in float), written once over four per-dialect macros: `FG_FN`
/// (function qualifiers), `FG_F2U`/`FG_U2F` (float <-> bits) and `FG_RINT` (round to nearest
/// even). Bit-exact with the `half` crate.
macro_rules! half_prelude {
    () => {
        r#"/* f16 and bf16 are stored as 16-bit integers and computed in float. */
FG_FN float __h2f(unsigned short h) {
  unsigned int s = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  if (e == 0) { float f = (float)m * 5.9604644775390625e-8f; return s ? -f : f; }
  u = (e == 31) ? (s | 0x7f800000u | (m << 13)) : (s | ((e + 112u) << 23) | (m << 13));
  return FG_U2F(u);
}
FG_FN unsigned short __f2h(float f) {
  unsigned int u = FG_F2U(f);
  unsigned int s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (unsigned short)(s | 0x7e00u);
  if (a >= 0x477ff000u) return (unsigned short)(s | 0x7c00u);
  if (a < 0x38800000u) return (unsigned short)(s | (unsigned int)FG_RINT(FG_U2F(a) * 16777216.0f));
  return (unsigned short)(s | ((a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13));
}
FG_FN float __bf2f(unsigned short b) { return FG_U2F((unsigned int)b << 16); }
FG_FN unsigned short __f2bf(float f) {
  unsigned int u = FG_F2U(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
"#
    };
}

/// Float to integer conversions with one defined meaning on every device (the interpreter's,
/// Rust's `as`): truncate toward zero, saturate at the target's range, NaN is 0. A plain C cast
/// is undefined there (x86 gives INT_MIN). OpenCL C has these as `convert_T_sat_rtz`.
macro_rules! saturating_casts_prelude {
    () => {
        r#"#define FG_SAT(T, NAME, LO, HI) FG_FN T NAME(double x) { return x != x ? (T)0 : x <= (double)(LO) ? (T)(LO) : x >= (double)(HI) ? (T)(HI) : (T)x; }
FG_SAT(signed char, __sat_i8, -128, 127)
FG_SAT(unsigned char, __sat_u8, 0, 255)
FG_SAT(short, __sat_i16, -32768, 32767)
FG_SAT(unsigned short, __sat_u16, 0, 65535)
FG_SAT(int, __sat_i32, (-2147483647-1), 2147483647)
FG_SAT(unsigned int, __sat_u32, 0, 4294967295u)
FG_SAT(long long, __sat_i64, (-9223372036854775807ll-1), 9223372036854775807ll)
FG_SAT(unsigned long long, __sat_u64, 0, 18446744073709551615ull)
"#
    };
}

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
        math_fn: c_math_fn,
        float_to_int: sat_helper,
        wrap_signed: false,
    }
}

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

/// Doubles are an extension in OpenCL C 1.2: enabled where the device has it (a kernel using
/// them fails to build elsewhere, with a message naming `double`). Contraction into FMA is off
/// for the same results as the C device.
const OPENCL_PRELUDE: &str = concat!(
    r#"#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#pragma OPENCL FP_CONTRACT OFF
#define FG_FN static inline
#define FG_F2U as_uint
#define FG_U2F as_float
#define FG_RINT rint
"#,
    half_prelude!()
);

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
    saturating_casts_prelude!()
);

pub struct CStyleRenderer {
    pub dialect: CDialect,
    pub target: Target,
}

impl CStyleRenderer {
    pub fn new(dialect: CDialect, target: Target) -> Self {
        CStyleRenderer { dialect, target }
    }
}

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

/// A C literal for a constant of `dt`.
pub fn c_const(v: ConstValue, dt: DType) -> String {
    literal(v, dt, c_type, ("ll", "ull"))
}

/// A literal for a constant of `dt`, with the dialect's type names and 64-bit suffixes.
fn literal(v: ConstValue, dt: DType, type_name: fn(DType) -> &'static str, (ll, ull): (&str, &str)) -> String {
    let text = unparenthesized_literal(v, dt, type_name, (ll, ull));
    // `a - -1.0f` must not become the `--` operator.
    if text.starts_with('-') {
        format!("({text})")
    } else {
        text
    }
}

fn unparenthesized_literal(
    v: ConstValue,
    dt: DType,
    type_name: fn(DType) -> &'static str,
    (ll, ull): (&str, &str),
) -> String {
    match dt.scalar {
        Scalar::Bool => (if v.as_bool() { "1" } else { "0" }).to_string(),
        // 16-bit floats are stored as their bit patterns.
        Scalar::F16 => format!("(({})0x{:04x})", type_name(dt), half::f16::from_f64(v.as_f64()).to_bits()),
        Scalar::BF16 => format!("(({})0x{:04x})", type_name(dt), half::bf16::from_f64(v.as_f64()).to_bits()),
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
fn c_cast(x: &str, from: DType, to: DType, d: &CDialect) -> String {
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

/// The saturating float-to-integer helper of the C and CUDA preludes (`__sat_i32`).
fn sat_helper(x: &str, to: DType) -> String {
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

/// C's math functions: `sqrt` for double, `sqrtf` for float.
fn c_math_fn(name: &str, dt: DType) -> String {
    if dt.scalar == Scalar::F64 {
        name.to_string()
    } else {
        format!("{name}f")
    }
}

/// Name of the typedef for a vector dtype: `vfloat16`, `vunsigned_int8`.
fn vector_name(dt: DType, type_name: fn(DType) -> &'static str) -> String {
    format!("v{}{}", type_name(dt.base()).replace(' ', "_"), dt.count)
}

/// A GCC/Clang vector type (unaligned, may alias its elements) and, for floats, its fused
/// multiply-add (a lane loop the compiler turns into one vector FMA instruction).
fn vector_typedef(dt: DType, type_name: fn(DType) -> &'static str) -> String {
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

/// How many times the C text of `u` mentions its source `i` (`MAX` and a division that must
/// test its divisor name their operands more than once).
fn text_copies(u: &UOp, i: usize) -> usize {
    match u.op() {
        Ops::MAX => 2,
        Ops::IDIV | Ops::MOD if !u.src()[1].as_int().is_some_and(|c| c != 0 && c != -1) => {
            if i == 1 {
                3
            } else {
                2
            }
        }
        _ => 1,
    }
}

impl Renderer for CStyleRenderer {
    fn target(&self) -> &Target {
        &self.target
    }

    fn render(&self, name: &str, uops: &[UOp]) -> String {
        Render::new(&self.dialect, uops).run(name)
    }
}

struct Render<'a> {
    d: &'a CDialect,
    uops: &'a [UOp],
    names: FxHashMap<UOp, String>,
    uses: FxHashMap<UOp, usize>,
    body: String,
    depth: usize,
    counters: FxHashMap<&'static str, usize>,
    /// Vector types used (element dtype, lanes), for their typedefs.
    vectors: Vec<DType>,
    /// Per open block (loop or `if`): the names bound inside it and what they replaced. A
    /// value the linearizer emits a second time inside a block (an accumulator's initial
    /// vector) gets its own variable there; when the block closes, the outer name is back, so
    /// no later line names a variable declared in a closed block.
    scopes: Vec<Vec<(UOp, Option<String>)>>,
    /// Nesting depth of each inlined expression (named values are 0).
    inline_depth: FxHashMap<UOp, usize>,
}

/// Deepest nesting of inlined expressions before a value gets a variable of its own.
const MAX_INLINE_DEPTH: usize = 48;

impl<'a> Render<'a> {
    fn new(d: &'a CDialect, uops: &'a [UOp]) -> Self {
        // How often each value's text would appear: an expression is inlined only where it
        // appears once, so nested inlining never repeats work or grows the source faster than
        // the program.
        let mut uses: FxHashMap<UOp, usize> = FxHashMap::default();
        for u in uops {
            for (i, s) in u.src().iter().enumerate() {
                *uses.entry(s.clone()).or_default() += text_copies(u, i);
            }
        }
        Render {
            d,
            uops,
            names: FxHashMap::default(),
            uses,
            body: String::new(),
            depth: 1,
            counters: FxHashMap::default(),
            vectors: Vec::new(),
            scopes: vec![Vec::new()],
            inline_depth: FxHashMap::default(),
        }
    }

    /// Type name of a value dtype: the dialect's scalar name, or a vector typedef (`vfloat16`)
    /// that is declared before the kernel.
    fn ty(&mut self, dt: DType) -> String {
        if dt.count <= 1 || dt.ptr {
            return (self.d.type_name)(dt).to_string();
        }
        if !self.vectors.contains(&dt) {
            self.vectors.push(dt);
        }
        vector_name(dt, self.d.type_name)
    }

    /// A literal in this dialect.
    fn lit(&self, v: ConstValue, dt: DType) -> String {
        literal(v, dt, self.d.type_name, self.d.int64_suffixes)
    }

    /// Names the value `u` from here to the end of the current block.
    fn bind(&mut self, u: &UOp, name: String) {
        let old = self.names.insert(u.clone(), name);
        self.scopes.last_mut().expect("the kernel's own block").push((u.clone(), old));
    }

    fn open_block(&mut self) {
        self.depth += 1;
        self.scopes.push(Vec::new());
    }

    fn close_block(&mut self) {
        self.depth -= 1;
        for (u, old) in self.scopes.pop().expect("END without an open block").into_iter().rev() {
            match old {
                Some(name) => self.names.insert(u, name),
                None => self.names.remove(&u),
            };
        }
        self.line("}");
    }

    fn fresh(&mut self, prefix: &'static str) -> String {
        let c = self.counters.entry(prefix).or_default();
        *c += 1;
        format!("{prefix}{}", *c - 1)
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.body.push_str("  ");
        }
        self.body.push_str(s);
        self.body.push('\n');
    }

    fn n(&self, u: &UOp) -> &str {
        self.names
            .get(u)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("render: {:?} used before it is defined", u.op()))
    }

    /// The expression text of an ALU/cast node from its sources' names.
    fn alu_expr(&self, u: &UOp) -> String {
        let s: Vec<&str> = u.src().iter().map(|x| self.n(x)).collect();
        let dt = u.dtype();
        let sdt = u.src()[0].dtype();
        if self.d.wrap_signed {
            if let Some(e) = self.wrapping_expr(u, &s) {
                return e;
            }
        }
        let expr = match u.op() {
            Ops::NEG if dt.is_bool() => format!("(!{})", s[0]),
            Ops::NEG => format!("(-{})", s[0]),
            Ops::RECIP => format!("({}/{})", self.lit(ConstValue::Float(1.0), dt), s[0]),
            Ops::SQRT => format!("{}({})", (self.d.math_fn)("sqrt", dt), s[0]),
            Ops::EXP2 => format!("{}({})", (self.d.math_fn)("exp2", dt), s[0]),
            Ops::LOG2 => format!("{}({})", (self.d.math_fn)("log2", dt), s[0]),
            Ops::SIN => format!("{}({})", (self.d.math_fn)("sin", dt), s[0]),
            Ops::TRUNC => format!("{}({})", (self.d.math_fn)("trunc", dt), s[0]),
            Ops::ADD => format!("({}+{})", s[0], s[1]),
            Ops::SUB => format!("({}-{})", s[0], s[1]),
            Ops::MUL => format!("({}*{})", s[0], s[1]),
            Ops::FDIV => format!("({}/{})", s[0], s[1]),
            Ops::IDIV | Ops::MOD => {
                let sym = if u.op() == Ops::IDIV { "/" } else { "%" };
                match u.src()[1].as_int() {
                    // A constant divisor other than 0 and -1 cannot trap.
                    Some(c) if c != 0 && c != -1 => format!("({}{sym}{})", s[0], s[1]),
                    _ => {
                        let on_minus_one = if u.op() == Ops::IDIV { format!("(-{})", s[0]) } else { "0".into() };
                        format!("(({b})==0?0:({b})==-1?{on_minus_one}:({a}{sym}{b}))", a = s[0], b = s[1])
                    }
                }
            }
            Ops::MAX => format!("(({a}<{b})?{b}:{a})", a = s[0], b = s[1]),
            Ops::CMPLT => format!("({}<{})", s[0], s[1]),
            Ops::CMPNE => format!("({}!={})", s[0], s[1]),
            Ops::CMPEQ => format!("({}=={})", s[0], s[1]),
            Ops::AND => format!("({}&{})", s[0], s[1]),
            Ops::OR => format!("({}|{})", s[0], s[1]),
            Ops::XOR => format!("({}^{})", s[0], s[1]),
            Ops::SHL | Ops::SHR => {
                let sym = if u.op() == Ops::SHL { "<<" } else { ">>" };
                match u.src()[1].as_int() {
                    Some(c) if c >= 0 && (c as u32) < dt.bits() => format!("({}{sym}{})", s[0], s[1]),
                    _ => format!("({}{sym}({}&{}))", s[0], s[1], dt.bits() - 1),
                }
            }
            Ops::WHERE => format!("({}?{}:{})", s[0], s[1], s[2]),
            Ops::MULACC if dt.count > 1 => {
                format!("__fma_{}({},{},{})", vector_name(dt, self.d.type_name), s[0], s[1], s[2])
            }
            Ops::MULACC if dt.is_float() => format!("{}({},{},{})", (self.d.math_fn)("fma", dt), s[0], s[1], s[2]),
            Ops::MULACC => format!("(({}*{})+{})", s[0], s[1], s[2]),
            Ops::CAST => return c_cast(s[0], sdt, dt, self.d),
            Ops::BITCAST => return (self.d.bitcast)(s[0], sdt, dt),
            op => panic!("C renderer: no rendering for {op:?}"),
        };
        // C computes small integer types in int; wrap back to the dtype's width.
        if matches!(dt.scalar, Scalar::I8 | Scalar::I16 | Scalar::U8 | Scalar::U16) && !u.op().is_comparison() {
            format!("(({}){expr})", (self.d.type_name)(dt))
        } else {
            expr
        }
    }

    /// Signed 32/64-bit arithmetic that may overflow, computed in the unsigned type of the same
    /// width (which wraps); `None` where range analysis shows it cannot overflow, so index
    /// arithmetic keeps its plain (faster) form.
    fn wrapping_expr(&self, u: &UOp, s: &[&str]) -> Option<String> {
        let dt = u.dtype();
        let unsigned = match dt.scalar {
            Scalar::I32 if dt.is_scalar() => DType::U32,
            Scalar::I64 if dt.is_scalar() => DType::U64,
            _ => return None,
        };
        let (t, ut) = ((self.d.type_name)(dt), (self.d.type_name)(unsigned));
        let iv = |i: usize| {
            let (lo, hi) = u.src()[i].bounds();
            (lo as i128, hi as i128)
        };
        let (lo, hi) = dt.int_range();
        let fits = |(a, b): (i128, i128)| lo <= a && b <= hi;
        let (safe, expr) = match u.op() {
            Ops::ADD => (fits((iv(0).0 + iv(1).0, iv(0).1 + iv(1).1)), format!("({ut}){}+({ut}){}", s[0], s[1])),
            Ops::SUB => (fits((iv(0).0 - iv(1).1, iv(0).1 - iv(1).0)), format!("({ut}){}-({ut}){}", s[0], s[1])),
            Ops::MUL => {
                let (a, b) = (iv(0), iv(1));
                let p = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
                let range = (*p.iter().min().unwrap_or(&0), *p.iter().max().unwrap_or(&0));
                (fits(range), format!("({ut}){}*({ut}){}", s[0], s[1]))
            }
            Ops::NEG => (fits((-iv(0).1, -iv(0).0)), format!("-({ut}){}", s[0])),
            Ops::SHL => match u.src()[1].as_int() {
                Some(k) if k >= 0 && (k as u32) < dt.bits() => {
                    // Shifting a negative value is undefined too.
                    let a = iv(0);
                    (a.0 >= 0 && fits((a.0 << k, a.1 << k)), format!("({ut}){}<<{}", s[0], s[1]))
                }
                _ => (false, format!("({ut}){}<<({}&{})", s[0], s[1], dt.bits() - 1)),
            },
            _ => return None,
        };
        (!safe).then(|| format!("(({t})({expr}))"))
    }

    fn run(mut self, name: &str) -> String {
        let mut params: Vec<(usize, String)> = Vec::new();
        let mut written: Vec<UOp> = Vec::new();
        for u in self.uops {
            if u.op() == Ops::STORE && u.src()[0].op() == Ops::INDEX {
                written.push(u.src()[0].src()[0].clone());
            }
        }
        let uops = self.uops;
        for u in uops {
            match u.op() {
                Ops::DEFINE_GLOBAL => {
                    let i = u.arg_int() as usize;
                    let nm = format!("data{i}");
                    let konst = if written.contains(u) { "" } else { "const " };
                    params.push((
                        i,
                        format!(
                            "{}{konst}{}* {} {nm}",
                            self.d.buffer_prefix,
                            (self.d.type_name)(u.dtype()),
                            self.d.restrict
                        ),
                    ));
                    self.bind(u, nm);
                }
                Ops::DEFINE_VAR => {
                    let Arg::Var(vname, _, _) = u.arg() else { unreachable!() };
                    params.push((usize::MAX, format!("{} {vname}", (self.d.type_name)(u.dtype()))));
                    self.bind(u, vname.to_string());
                }
                Ops::CONST if u.dtype().count > 1 => {
                    let c = u.const_value().expect("CONST without value");
                    let one = self.lit(c, u.dtype().base());
                    let t = self.ty(u.dtype());
                    self.bind(u, format!("__bcast_{t}({one})"));
                }
                Ops::CONST => {
                    let c = u.const_value().expect("CONST without value");
                    self.bind(u, self.lit(c, u.dtype()));
                }
                Ops::VECTORIZE => {
                    let t = self.ty(u.dtype());
                    let expr = if u.src().iter().all(|x| x == &u.src()[0]) {
                        format!("__bcast_{t}({})", self.n(&u.src()[0]))
                    } else {
                        let lanes: Vec<&str> = u.src().iter().map(|x| self.n(x)).collect();
                        format!("(({t}){{{}}})", lanes.join(","))
                    };
                    let nm = self.fresh("vec");
                    self.line(&format!("{t} {nm} = {expr};"));
                    self.bind(u, nm);
                }
                Ops::GEP => {
                    let text = format!("{}[{}]", self.n(&u.src()[0]), u.arg_int());
                    self.bind(u, text);
                }
                Ops::SPECIAL => {
                    let Arg::Special(kind, dim) = u.arg() else { unreachable!() };
                    let nm = format!(
                        "{}idx{dim}",
                        match kind {
                            SpecialKind::Group => "g",
                            SpecialKind::Local => "l",
                            SpecialKind::Global => "i",
                        }
                    );
                    let wide = u.dtype().bits() > 32;
                    let text = (self.d.special)(*kind, *dim, wide);
                    let ty = (self.d.type_name)(u.dtype());
                    self.line(&format!("{ty} {nm} = {text}; /* {} */", self.n(&u.src()[0]).to_owned()));
                    self.bind(u, nm);
                }
                Ops::DEFINE_LOCAL => {
                    let nm = format!("temp{}", u.arg_int());
                    let size = self.n(&u.src()[0]).to_owned();
                    self.line(&format!("{}{} {nm}[{size}];", self.d.local_prefix, (self.d.type_name)(u.dtype())));
                    self.bind(u, nm);
                }
                Ops::DEFINE_REG => {
                    let nm = self.fresh("acc");
                    let t = self.ty(u.dtype());
                    self.line(&format!("{t} {nm};"));
                    self.bind(u, nm);
                }
                Ops::RANGE if u.range_arg().1 == AxisType::Thread => {
                    // One thread per index value: the launcher passes it as `core_id`.
                    let nm = format!("ridx{}", u.range_arg().0);
                    let end = self.n(&u.src()[0]).to_owned();
                    self.line(&format!("{{ int {nm} = core_id; /* THREAD axis of {end} */"));
                    self.open_block();
                    // The range lets the compiler prove index arithmetic does not wrap (it is
                    // compiled with -fwrapv), so it vectorizes with plain loads, not gathers.
                    self.line(&format!("if ({nm} < 0 || {nm} >= {end}) __builtin_unreachable();"));
                    self.bind(u, nm);
                }
                Ops::RANGE => {
                    let nm = format!("ridx{}", u.range_arg().0);
                    let end = self.n(&u.src()[0]).to_owned();
                    let ty = (self.d.type_name)(u.dtype());
                    self.line(&format!("for ({ty} {nm} = 0; {nm} < {end}; {nm}++) {{"));
                    self.open_block();
                    self.bind(u, nm);
                }
                Ops::END | Ops::ENDIF => self.close_block(),
                Ops::IF => {
                    let c = self.n(&u.src()[0]).to_owned();
                    self.line(&format!("if ({c}) {{"));
                    self.open_block();
                }
                Ops::BARRIER => {
                    let b = self.d.barrier;
                    self.line(b);
                }
                Ops::INDEX => {
                    let text = format!("{}[{}]", self.n(&u.src()[0]), self.n(&u.src()[1]));
                    self.bind(u, text);
                }
                Ops::LOAD => {
                    let src = &u.src()[0];
                    if src.op() == Ops::DEFINE_REG {
                        let nm = self.n(src).to_owned();
                        self.bind(u, nm);
                        continue;
                    }
                    let t = self.ty(u.dtype());
                    let mut addr = self.n(src).to_owned();
                    let mut zero = self.lit(ConstValue::Int(0), u.dtype().base());
                    if u.dtype().count > 1 {
                        // Consecutive elements from the scalar index, as one (unaligned) vector.
                        addr = format!("*({t}*)(&{addr})");
                        zero = format!("(({t}){{0}})");
                    }
                    let expr = match src.src().get(2) {
                        Some(gate) => format!("({}?{addr}:{zero})", self.n(gate)),
                        None => addr,
                    };
                    let nm = self.fresh("val");
                    self.line(&format!("{t} {nm} = {expr};"));
                    self.bind(u, nm);
                }
                Ops::STORE => {
                    let (dst, val) = (&u.src()[0], self.n(&u.src()[1]).to_owned());
                    let mut target = self.n(dst).to_owned();
                    let vdt = u.src()[1].dtype();
                    if dst.op() == Ops::INDEX && vdt.count > 1 {
                        target = format!("*({}*)(&{target})", self.ty(vdt));
                    }
                    match dst.src().get(2).filter(|_| dst.op() == Ops::INDEX) {
                        Some(gate) => {
                            let g = self.n(gate).to_owned();
                            self.line(&format!("if ({g}) {target} = {val};"))
                        }
                        None => self.line(&format!("{target} = {val};")),
                    }
                }
                Ops::SINK => {}
                op if op.is_alu() || op == Ops::CAST || op == Ops::BITCAST => {
                    let expr = self.alu_expr(u);
                    // How deeply this expression would nest inlined expressions: compilers
                    // limit bracket nesting (clang: 256), and a long unrolled sum is one chain.
                    let depth =
                        1 + u.src().iter().map(|x| self.inline_depth.get(x).copied().unwrap_or(0)).max().unwrap_or(0);
                    // Vectors always get a variable (a lane is read as `name[k]`).
                    let single_use = self.uses.get(u).copied().unwrap_or(0) <= 1;
                    if single_use && op != Ops::BITCAST && u.dtype().count <= 1 && depth <= MAX_INLINE_DEPTH {
                        self.inline_depth.insert(u.clone(), depth);
                        self.bind(u, expr);
                    } else {
                        let nm = self.fresh("alu");
                        let t = self.ty(u.dtype());
                        self.line(&format!("{t} {nm} = {expr};"));
                        self.bind(u, nm);
                    }
                }
                op => panic!("C renderer: unsupported op {op:?}"),
            }
        }
        params.sort_by_key(|(i, _)| *i);
        let mut out = String::new();
        out.push_str(self.d.prelude);
        for dt in &self.vectors {
            out.push_str(&vector_typedef(*dt, self.d.type_name));
        }
        let sig: Vec<&str> = params.iter().map(|(_, p)| p.as_str()).collect();
        let inner = if self.d.cpu_entry { format!("{name}_body") } else { name.to_string() };
        let mut sig: Vec<String> = sig.into_iter().map(String::from).collect();
        if self.d.cpu_entry {
            sig.push("int core_id".into());
        }
        let _ = writeln!(out, "{}void {inner}({}) {{", self.d.kernel_prefix, sig.join(", "));
        out.push_str(&self.body);
        out.push_str("}\n");
        if self.d.cpu_entry {
            // Same order as the parameters: buffers by index, then variables in order.
            let mut args: Vec<(usize, String)> = Vec::new();
            for u in uops {
                match u.op() {
                    Ops::DEFINE_GLOBAL => {
                        let i = u.arg_int() as usize;
                        args.push((i, format!("({}*)bufs[{i}]", c_type(u.dtype().base()))));
                    }
                    Ops::DEFINE_VAR => {
                        let k = args.iter().filter(|(i, _)| *i == usize::MAX).count();
                        args.push((usize::MAX, format!("({})vals[{k}]", c_type(u.dtype()))));
                    }
                    _ => {}
                }
            }
            args.sort_by_key(|(i, _)| *i);
            let mut args: Vec<String> = args.into_iter().map(|(_, a)| a).collect();
            args.push("core_id".into());
            let _ = writeln!(
                out,
                "void {name}(void** bufs, const long long* vals, int core_id) {{ (void)bufs; (void)vals; {inner}({}); }}",
                args.join(", ")
            );
        }
        out
    }
}
