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
    /// Whether 32/64-bit signed `+ - * neg <<` that may overflow (by range analysis) is computed
    /// in the unsigned type, so it wraps. C gets wrapping from `-fwrapv`; OpenCL C has no such
    /// option, and its compilers exploit signed overflow being undefined.
    pub wrap_signed: bool,
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
        // NVRTC has no -fwrapv, and NVVM optimizes on signed overflow being undefined.
        wrap_signed: true,
    }
}

const CUDA_PRELUDE: &str = r#"#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
template <class T, class F> __device__ __forceinline__ T __bitcast(F x) { T y; memcpy(&y, &x, sizeof(y)); return y; }
/* f16 and bf16 are stored as 16-bit integers and computed in float (bit-exact with the C device). */
__device__ __forceinline__ float __h2f(unsigned short h) {
  unsigned int s = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  if (e == 0) { float f = (float)m * 5.9604644775390625e-8f; return s ? -f : f; }
  u = (e == 31) ? (s | 0x7f800000u | (m << 13)) : (s | ((e + 112u) << 23) | (m << 13));
  return __uint_as_float(u);
}
__device__ __forceinline__ unsigned short __f2h(float f) {
  unsigned int u = __float_as_uint(f);
  unsigned int s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (unsigned short)(s | 0x7e00u);
  if (a >= 0x477ff000u) return (unsigned short)(s | 0x7c00u);
  if (a < 0x38800000u) return (unsigned short)(s | (unsigned int)rintf(__uint_as_float(a) * 16777216.0f));
  return (unsigned short)(s | ((a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13));
}
__device__ __forceinline__ float __bf2f(unsigned short b) { return __uint_as_float((unsigned int)b << 16); }
__device__ __forceinline__ unsigned short __f2bf(float f) {
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
"#;

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
const OPENCL_PRELUDE: &str = r#"#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#pragma OPENCL FP_CONTRACT OFF
/* f16 and bf16 are stored as 16-bit integers and computed in float (bit-exact with the C device). */
static inline float __h2f(ushort h) {
  uint s = (uint)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  if (e == 0) { float f = (float)m * 5.9604644775390625e-8f; return s ? -f : f; }
  u = (e == 31) ? (s | 0x7f800000u | (m << 13)) : (s | ((e + 112u) << 23) | (m << 13));
  return as_float(u);
}
static inline ushort __f2h(float f) {
  uint u = as_uint(f);
  uint s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (ushort)(s | 0x7e00u);
  if (a >= 0x477ff000u) return (ushort)(s | 0x7c00u);
  if (a < 0x38800000u) return (ushort)(s | (uint)rint(as_float(a) * 16777216.0f));
  return (ushort)(s | ((a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13));
}
static inline float __bf2f(ushort b) { return as_float((uint)b << 16); }
static inline ushort __f2bf(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
"#;

const C_PRELUDE: &str = r#"#include <math.h>
#include <stdbool.h>
#include <string.h>
/* f16 and bf16 are stored as 16-bit integers and computed in float. */
static inline float __h2f(unsigned short h) {
  unsigned int s = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  if (e == 0) { float f = (float)m * 5.9604644775390625e-8f; return s ? -f : f; }
  u = (e == 31) ? (s | 0x7f800000u | (m << 13)) : (s | ((e + 112u) << 23) | (m << 13));
  float f; memcpy(&f, &u, 4); return f;
}
static inline unsigned short __f2h(float f) {
  unsigned int u; memcpy(&u, &f, 4);
  unsigned int s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (unsigned short)(s | 0x7e00u);
  if (a >= 0x477ff000u) return (unsigned short)(s | 0x7c00u);
  if (a < 0x38800000u) { float af; memcpy(&af, &a, 4); return (unsigned short)(s | (unsigned int)rintf(af * 16777216.0f)); }
  return (unsigned short)(s | ((a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13));
}
static inline float __bf2f(unsigned short b) { unsigned int u = (unsigned int)b << 16; float f; memcpy(&f, &u, 4); return f; }
static inline unsigned short __f2bf(float f) {
  unsigned int u; memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
"#;

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
fn c_cast(x: &str, from: DType, to: DType, type_name: fn(DType) -> &'static str) -> String {
    let as_float = match from.scalar {
        Scalar::F16 => format!("__h2f({x})"),
        Scalar::BF16 => format!("__bf2f({x})"),
        _ => x.to_string(),
    };
    match to.scalar {
        Scalar::F16 => format!("__f2h((float)({as_float}))"),
        Scalar::BF16 => format!("__f2bf((float)({as_float}))"),
        Scalar::Bool => format!("({as_float}!=0)"),
        _ => format!("(({})({as_float}))", type_name(to)),
    }
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
    // Guarded: the CPU device compiles several kernels as one C file.
    let mut out = format!(
        "#ifndef FG_{name}\n#define FG_{name}\n\
         typedef {elem} {name} __attribute__((vector_size({size}), aligned({align}), may_alias));\n\
         static inline {name} __bcast_{name}({elem} x) {{ {name} r; for (int i = 0; i < {n}; i++) r[i] = x; return r; }}\n"
    );
    if dt.is_float() {
        let f = if dt.scalar == Scalar::F64 { "__builtin_fma" } else { "__builtin_fmaf" };
        out.push_str(&format!(
            "static inline {name} __fma_{name}({name} a, {name} b, {name} c) {{ {name} r; for (int i = 0; i < {n}; i++) r[i] = {f}(a[i], b[i], c[i]); return r; }}\n"
        ));
    }
    out.push_str("#endif\n");
    out
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
}

impl<'a> Render<'a> {
    fn new(d: &'a CDialect, uops: &'a [UOp]) -> Self {
        let mut uses: FxHashMap<UOp, usize> = FxHashMap::default();
        for u in uops {
            for s in u.src() {
                *uses.entry(s.clone()).or_default() += 1;
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
            Ops::CAST => return c_cast(s[0], sdt, dt, self.d.type_name),
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
                    self.names.insert(u.clone(), nm);
                }
                Ops::DEFINE_VAR => {
                    let Arg::Var(vname, _, _) = u.arg() else { unreachable!() };
                    params.push((usize::MAX, format!("{} {vname}", (self.d.type_name)(u.dtype()))));
                    self.names.insert(u.clone(), vname.to_string());
                }
                Ops::CONST if u.dtype().count > 1 => {
                    let c = u.const_value().expect("CONST without value");
                    let one = self.lit(c, u.dtype().base());
                    let t = self.ty(u.dtype());
                    self.names.insert(u.clone(), format!("__bcast_{t}({one})"));
                }
                Ops::CONST => {
                    let c = u.const_value().expect("CONST without value");
                    self.names.insert(u.clone(), self.lit(c, u.dtype()));
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
                    self.names.insert(u.clone(), nm);
                }
                Ops::GEP => {
                    let text = format!("{}[{}]", self.n(&u.src()[0]), u.arg_int());
                    self.names.insert(u.clone(), text);
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
                    self.names.insert(u.clone(), nm);
                }
                Ops::DEFINE_LOCAL => {
                    let nm = format!("temp{}", u.arg_int());
                    let size = self.n(&u.src()[0]).to_owned();
                    self.line(&format!("{}{} {nm}[{size}];", self.d.local_prefix, (self.d.type_name)(u.dtype())));
                    self.names.insert(u.clone(), nm);
                }
                Ops::DEFINE_REG => {
                    let nm = self.fresh("acc");
                    let t = self.ty(u.dtype());
                    self.line(&format!("{t} {nm};"));
                    self.names.insert(u.clone(), nm);
                }
                Ops::RANGE if u.range_arg().1 == AxisType::Thread => {
                    // One thread per index value: the launcher passes it as `core_id`.
                    let nm = format!("ridx{}", u.range_arg().0);
                    let end = self.n(&u.src()[0]).to_owned();
                    self.line(&format!("{{ int {nm} = core_id; /* THREAD axis of {end} */"));
                    self.depth += 1;
                    // The range lets the compiler prove index arithmetic does not wrap (it is
                    // compiled with -fwrapv), so it vectorizes with plain loads, not gathers.
                    self.line(&format!("if ({nm} < 0 || {nm} >= {end}) __builtin_unreachable();"));
                    self.names.insert(u.clone(), nm);
                }
                Ops::RANGE => {
                    let nm = format!("ridx{}", u.range_arg().0);
                    let end = self.n(&u.src()[0]).to_owned();
                    let ty = (self.d.type_name)(u.dtype());
                    self.line(&format!("for ({ty} {nm} = 0; {nm} < {end}; {nm}++) {{"));
                    self.depth += 1;
                    self.names.insert(u.clone(), nm);
                }
                Ops::END | Ops::ENDIF => {
                    self.depth -= 1;
                    self.line("}");
                }
                Ops::IF => {
                    let c = self.n(&u.src()[0]).to_owned();
                    self.line(&format!("if ({c}) {{"));
                    self.depth += 1;
                }
                Ops::BARRIER => {
                    let b = self.d.barrier;
                    self.line(b);
                }
                Ops::INDEX => {
                    let text = format!("{}[{}]", self.n(&u.src()[0]), self.n(&u.src()[1]));
                    self.names.insert(u.clone(), text);
                }
                Ops::LOAD => {
                    let src = &u.src()[0];
                    if src.op() == Ops::DEFINE_REG {
                        let nm = self.n(src).to_owned();
                        self.names.insert(u.clone(), nm);
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
                    self.names.insert(u.clone(), nm);
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
                    // Vectors always get a variable (a lane is read as `name[k]`).
                    if self.uses.get(u).copied().unwrap_or(0) <= 1 && op != Ops::BITCAST && u.dtype().count <= 1 {
                        self.names.insert(u.clone(), expr);
                    } else {
                        let nm = self.fresh("alu");
                        let t = self.ty(u.dtype());
                        self.line(&format!("{t} {nm} = {expr};"));
                        self.names.insert(u.clone(), nm);
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
