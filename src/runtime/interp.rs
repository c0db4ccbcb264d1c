//! INTERP: runs linear programs directly in Rust (the executable specification).
//!
//! `compile` decodes a linear program once: every value-producing UOp gets a slot (one `u64`
//! per vector lane) in a flat register file, every op becomes an `Inst` holding slot numbers
//! and a function pointer already specialized for its dtype, and loops and IF blocks become
//! jumps to instruction numbers. `launch` then runs the instructions with no hashing and no
//! dtype dispatch beyond one indirect call per lane.
//!
//! A slot holds a value in its canonical form (see `Lane`): integers sign- or zero-extended
//! to 64 bits, bools as 0/1, floats as their IEEE bits. Every load and store is bounds-checked.

use super::device::{Device, DeviceMemory, Program};
use super::memory::HostMemory;
use crate::codegen::ProgramSpec;
use crate::error::{Error, Result};
use crate::renderer::{Renderer, Target};
use crate::uop::{Arg, ConstValue, DType, FxHashMap, Ops, Scalar, UOp};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

const DEVICE: &str = "INTERP";

// ================================================================ the device

/// The interpreter device: host memory, programs that run the linear UOps directly.
pub struct InterpDevice {
    renderer: InterpRenderer,
}

impl InterpDevice {
    pub fn new() -> InterpDevice {
        InterpDevice {
            renderer: InterpRenderer::new(),
        }
    }
}

impl Default for InterpDevice {
    fn default() -> Self {
        InterpDevice::new()
    }
}

/// The host allocation behind a `DeviceMemory` of this device.
fn host(mem: &DeviceMemory) -> Result<&HostMemory> {
    mem.inner.downcast_ref::<HostMemory>().ok_or_else(|| {
        Error::Other(format!(
            "{DEVICE}: memory of another device passed to {DEVICE}"
        ))
    })
}

impl Device for InterpDevice {
    fn name(&self) -> &str {
        DEVICE
    }
    fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        let mem = HostMemory::new(bytes).ok_or(Error::OutOfMemory {
            device: DEVICE.to_string(),
            bytes,
        })?;
        Ok(DeviceMemory {
            bytes,
            inner: Box::new(mem),
        })
    }
    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()> {
        let mem = host(dst)?;
        if src.len() != mem.len() {
            return Err(Error::Other(format!(
                "{DEVICE}: copy_in of {} bytes into a buffer of {} bytes",
                src.len(),
                mem.len()
            )));
        }
        mem.as_mut_slice().copy_from_slice(src);
        Ok(())
    }
    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()> {
        let mem = host(src)?;
        if dst.len() != mem.len() {
            return Err(Error::Other(format!(
                "{DEVICE}: copy_out of a buffer of {} bytes into {} bytes",
                mem.len(),
                dst.len()
            )));
        }
        dst.copy_from_slice(mem.as_slice());
        Ok(())
    }
    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }
    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        specs
            .iter()
            .map(|s| InterpProgram::new(&s.name, &s.uops).map(|p| Arc::new(p) as Arc<dyn Program>))
            .collect()
    }
}

// ================================================================ the renderer

/// The code generator's view of INTERP: a CPU without threads. Its "source" is a readable
/// listing of the linear program (what DEBUG=4 shows).
pub struct InterpRenderer {
    target: Target,
}

impl InterpRenderer {
    pub fn new() -> InterpRenderer {
        // The interpreter runs one loop nest on one thread: THREAD axes would only add loops.
        InterpRenderer {
            target: Target {
                has_threads: false,
                ..Target::cpu(DEVICE)
            },
        }
    }
}

impl Default for InterpRenderer {
    fn default() -> Self {
        InterpRenderer::new()
    }
}

impl Renderer for InterpRenderer {
    fn target(&self) -> &Target {
        &self.target
    }
    fn render(&self, name: &str, uops: &[UOp]) -> String {
        render_listing(name, uops)
    }
}

/// One numbered line per UOp, indented by loop/IF depth, sources by line number.
pub fn render_listing(name: &str, uops: &[UOp]) -> String {
    let mut line_of: FxHashMap<usize, usize> = FxHashMap::default();
    let mut out = format!("// {DEVICE} program {name}\n");
    let mut depth = 0usize;
    for (i, u) in uops.iter().enumerate() {
        line_of.insert(u.id(), i);
        if matches!(u.op(), Ops::END | Ops::ENDIF) {
            depth = depth.saturating_sub(1);
        }
        let srcs: Vec<String> = u
            .src()
            .iter()
            .map(|s| {
                line_of
                    .get(&s.id())
                    .map_or_else(|| "%?".to_string(), |l| format!("%{l}"))
            })
            .collect();
        let op = format!("{:?}", u.op());
        let dtype = format!("{:?}", u.dtype());
        // The op is indented by depth; the columns after it stay aligned up to depth 5.
        let op = format!("{:indent$}{op}", "", indent = 2 * depth);
        let _ = write!(out, "%{i:<4} {op:<24} {dtype:<10}");
        if !srcs.is_empty() {
            let _ = write!(out, " ({})", srcs.join(", "));
        }
        if let Some(a) = listing_arg(u.arg()) {
            let _ = write!(out, " {a}");
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        if matches!(u.op(), Ops::RANGE | Ops::IF) {
            depth += 1;
        }
    }
    out
}

fn listing_arg(a: &Arg) -> Option<String> {
    Some(match a {
        Arg::None => return None,
        Arg::Const(ConstValue::Bool(b)) => b.to_string(),
        Arg::Const(ConstValue::Int(i)) => i.to_string(),
        Arg::Const(ConstValue::Float(f)) => format!("{f:?}"),
        Arg::Int(i) => i.to_string(),
        Arg::Range(id, t) => format!("r{id} {t:?}"),
        Arg::Var(name, lo, hi) => format!("{name} [{lo}, {hi}]"),
        Arg::Special(kind, dim) => format!("{kind:?} {dim}"),
        other => format!("{other:?}"),
    })
}

// ================================================================ lane types

/// A scalar widened without loss, the midpoint of every conversion (CAST, constants, vars).
#[derive(Clone, Copy)]
enum Wide {
    Int(i128),
    Float(f64),
}

/// A Rust type standing for one scalar dtype, and how its values sit in a `u64` slot.
///
/// `from_slot` reads only the low bits that belong to the type, so any slot (or raw bytes read
/// from memory, zero-extended) decodes; `to_slot` writes the canonical form, which is what lets
/// loop bounds and indices of any integer dtype be read as `slot as i64`.
trait Lane: Copy + PartialOrd + 'static {
    fn from_slot(b: u64) -> Self;
    fn to_slot(self) -> u64;
    fn widen(self) -> Wide;
    /// C conversion: floats to ints truncate (NaN → 0, out of range saturates like `as`),
    /// ints wrap, anything to bool is `!= 0`, floats round to this precision.
    fn narrow(w: Wide) -> Self;
}

/// Arithmetic of both ints (wrapping) and floats (rounded to the dtype).
trait Arith: Lane {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn neg(self) -> Self;
}

/// Integer-only ops, total (division by zero gives 0, shift amounts are masked).
trait Int: Arith {
    fn idiv(self, o: Self) -> Self;
    fn rem(self, o: Self) -> Self;
    fn shl(self, o: Self) -> Self;
    fn shr(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
}

/// Float-only ops.
trait Float: Arith {
    fn fdiv(self, o: Self) -> Self;
    fn recip(self) -> Self;
    fn sqrt(self) -> Self;
    fn exp2(self) -> Self;
    fn log2(self) -> Self;
    fn sin(self) -> Self;
    fn trunc(self) -> Self;
}

macro_rules! int_lanes {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            fn from_slot(b: u64) -> Self {
                b as $t
            }
            fn to_slot(self) -> u64 {
                // Sign-extends signed types, zero-extends unsigned ones.
                self as i64 as u64
            }
            fn widen(self) -> Wide {
                Wide::Int(self as i128)
            }
            fn narrow(w: Wide) -> Self {
                match w {
                    Wide::Int(i) => i as $t,
                    Wide::Float(f) => f as $t,
                }
            }
        }
        impl Arith for $t {
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
        }
        impl Int for $t {
            fn idiv(self, o: Self) -> Self {
                if o == 0 { 0 } else { self.wrapping_div(o) }
            }
            fn rem(self, o: Self) -> Self {
                if o == 0 { 0 } else { self.wrapping_rem(o) }
            }
            fn shl(self, o: Self) -> Self {
                self.wrapping_shl(o as u32)
            }
            fn shr(self, o: Self) -> Self {
                // `>>` is arithmetic on signed Rust types and logical on unsigned ones.
                self.wrapping_shr(o as u32)
            }
            fn and(self, o: Self) -> Self {
                self & o
            }
            fn or(self, o: Self) -> Self {
                self | o
            }
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
        }
    )*};
}
int_lanes!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Lane for bool {
    fn from_slot(b: u64) -> Self {
        b as u8 != 0
    }
    fn to_slot(self) -> u64 {
        self as u64
    }
    fn widen(self) -> Wide {
        Wide::Int(self as i128)
    }
    fn narrow(w: Wide) -> Self {
        match w {
            Wide::Int(i) => i != 0,
            Wide::Float(f) => f != 0.0,
        }
    }
}

/// f32 and f64 compute natively, exactly like C `float` / `double` (no fused operations).
macro_rules! native_float_lanes {
    ($($t:ident : $bits:ty),*) => {$(
        impl Lane for $t {
            fn from_slot(b: u64) -> Self {
                $t::from_bits(b as $bits)
            }
            fn to_slot(self) -> u64 {
                $t::to_bits(self) as u64
            }
            fn widen(self) -> Wide {
                Wide::Float(self as f64)
            }
            fn narrow(w: Wide) -> Self {
                match w {
                    Wide::Int(i) => i as $t,
                    Wide::Float(f) => f as $t,
                }
            }
        }
        impl Arith for $t {
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn neg(self) -> Self {
                -self
            }
        }
        impl Float for $t {
            fn fdiv(self, o: Self) -> Self {
                self / o
            }
            fn recip(self) -> Self {
                1.0 / self
            }
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            fn exp2(self) -> Self {
                $t::exp2(self)
            }
            fn log2(self) -> Self {
                $t::log2(self)
            }
            fn sin(self) -> Self {
                $t::sin(self)
            }
            fn trunc(self) -> Self {
                $t::trunc(self)
            }
        }
    )*};
}
native_float_lanes!(f32: u32, f64: u64);

/// f16 and bf16 compute in f32 and round the result, as the C renderers do without native
/// half arithmetic.
macro_rules! half_lanes {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            fn from_slot(b: u64) -> Self {
                <$t>::from_bits(b as u16)
            }
            fn to_slot(self) -> u64 {
                <$t>::to_bits(self) as u64
            }
            fn widen(self) -> Wide {
                Wide::Float(self.to_f64())
            }
            fn narrow(w: Wide) -> Self {
                match w {
                    Wide::Int(i) => <$t>::from_f64(i as f64),
                    Wide::Float(f) => <$t>::from_f64(f),
                }
            }
        }
        impl Arith for $t {
            fn add(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() + o.to_f32())
            }
            fn sub(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() - o.to_f32())
            }
            fn mul(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() * o.to_f32())
            }
            fn neg(self) -> Self {
                -self
            }
        }
        impl Float for $t {
            fn fdiv(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() / o.to_f32())
            }
            fn recip(self) -> Self {
                <$t>::from_f32(1.0 / self.to_f32())
            }
            fn sqrt(self) -> Self {
                <$t>::from_f32(self.to_f32().sqrt())
            }
            fn exp2(self) -> Self {
                <$t>::from_f32(self.to_f32().exp2())
            }
            fn log2(self) -> Self {
                <$t>::from_f32(self.to_f32().log2())
            }
            fn sin(self) -> Self {
                <$t>::from_f32(self.to_f32().sin())
            }
            fn trunc(self) -> Self {
                <$t>::from_f32(self.to_f32().trunc())
            }
        }
    )*};
}
half_lanes!(half::f16, half::bf16);

// ================================================================ op tables

type UnFn = fn(u64) -> u64;
type BinFn = fn(u64, u64) -> u64;
type TerFn = fn(u64, u64, u64) -> u64;

/// Evaluates one of three expressions with the type alias `$T` bound to the Rust type of the
/// scalar dtype `$s`: the int, float or bool one by its kind. VOID gives `None`.
macro_rules! by_scalar {
    ($s:expr, |$T:ident| int => $int:expr, float => $float:expr, bool => $boolean:expr) => {
        match $s {
            Scalar::I8 => {
                type $T = i8;
                $int
            }
            Scalar::I16 => {
                type $T = i16;
                $int
            }
            Scalar::I32 => {
                type $T = i32;
                $int
            }
            Scalar::I64 => {
                type $T = i64;
                $int
            }
            Scalar::U8 => {
                type $T = u8;
                $int
            }
            Scalar::U16 => {
                type $T = u16;
                $int
            }
            Scalar::U32 => {
                type $T = u32;
                $int
            }
            Scalar::U64 => {
                type $T = u64;
                $int
            }
            Scalar::F16 => {
                type $T = half::f16;
                $float
            }
            Scalar::BF16 => {
                type $T = half::bf16;
                $float
            }
            Scalar::F32 => {
                type $T = f32;
                $float
            }
            Scalar::F64 => {
                type $T = f64;
                $float
            }
            Scalar::Bool => {
                #[allow(dead_code)]
                type $T = bool;
                $boolean
            }
            Scalar::Void => None,
        }
    };
}

/// Comparisons and MAX, defined for every lane type.
fn compare<T: Lane>(op: Ops) -> Option<BinFn> {
    let f: BinFn = match op {
        Ops::CMPLT => |a, b| (T::from_slot(a) < T::from_slot(b)) as u64,
        Ops::CMPNE => |a, b| (T::from_slot(a) != T::from_slot(b)) as u64,
        Ops::CMPEQ => |a, b| (T::from_slot(a) == T::from_slot(b)) as u64,
        // Exactly `a < b ? b : a` (the C renderers' definition): MAX(NaN, x) = NaN and
        // MAX(x, NaN) = x.
        Ops::MAX => |a, b| {
            if T::from_slot(a) < T::from_slot(b) {
                b
            } else {
                a
            }
        },
        _ => return None,
    };
    Some(f)
}

fn arith_binary<T: Arith>(op: Ops) -> Option<BinFn> {
    let f: BinFn = match op {
        Ops::ADD => |a, b| T::from_slot(a).add(T::from_slot(b)).to_slot(),
        Ops::SUB => |a, b| T::from_slot(a).sub(T::from_slot(b)).to_slot(),
        Ops::MUL => |a, b| T::from_slot(a).mul(T::from_slot(b)).to_slot(),
        _ => return compare::<T>(op),
    };
    Some(f)
}

fn int_binary<T: Int>(op: Ops) -> Option<BinFn> {
    let f: BinFn = match op {
        Ops::IDIV => |a, b| T::from_slot(a).idiv(T::from_slot(b)).to_slot(),
        Ops::MOD => |a, b| T::from_slot(a).rem(T::from_slot(b)).to_slot(),
        Ops::SHL => |a, b| T::from_slot(a).shl(T::from_slot(b)).to_slot(),
        Ops::SHR => |a, b| T::from_slot(a).shr(T::from_slot(b)).to_slot(),
        Ops::AND => |a, b| T::from_slot(a).and(T::from_slot(b)).to_slot(),
        Ops::OR => |a, b| T::from_slot(a).or(T::from_slot(b)).to_slot(),
        Ops::XOR => |a, b| T::from_slot(a).xor(T::from_slot(b)).to_slot(),
        _ => return arith_binary::<T>(op),
    };
    Some(f)
}

fn float_binary<T: Float>(op: Ops) -> Option<BinFn> {
    let f: BinFn = match op {
        Ops::FDIV => |a, b| T::from_slot(a).fdiv(T::from_slot(b)).to_slot(),
        _ => return arith_binary::<T>(op),
    };
    Some(f)
}

/// Bools are 0/1 in their slots, so the logical ops are the bitwise ones. ADD and MUL follow
/// C (`(bool)(a + b)`, `(bool)(a * b)`).
fn bool_binary(op: Ops) -> Option<BinFn> {
    let f: BinFn = match op {
        Ops::AND | Ops::MUL => |a, b| a & b,
        Ops::OR | Ops::ADD => |a, b| a | b,
        Ops::XOR => |a, b| a ^ b,
        _ => return compare::<bool>(op),
    };
    Some(f)
}

/// The function of a binary op on operands of dtype `s`.
fn binary_fn(op: Ops, s: Scalar) -> Option<BinFn> {
    by_scalar!(s, |T| int => int_binary::<T>(op), float => float_binary::<T>(op), bool => bool_binary(op))
}

fn int_unary<T: Int>(op: Ops) -> Option<UnFn> {
    let f: UnFn = match op {
        Ops::NEG => |a| T::from_slot(a).neg().to_slot(),
        Ops::TRUNC => |a| a,
        _ => return None,
    };
    Some(f)
}

fn float_unary<T: Float>(op: Ops) -> Option<UnFn> {
    let f: UnFn = match op {
        Ops::NEG => |a| T::from_slot(a).neg().to_slot(),
        Ops::RECIP => |a| T::from_slot(a).recip().to_slot(),
        Ops::SQRT => |a| T::from_slot(a).sqrt().to_slot(),
        Ops::EXP2 => |a| T::from_slot(a).exp2().to_slot(),
        Ops::LOG2 => |a| T::from_slot(a).log2().to_slot(),
        Ops::SIN => |a| T::from_slot(a).sin().to_slot(),
        Ops::TRUNC => |a| T::from_slot(a).trunc().to_slot(),
        _ => return None,
    };
    Some(f)
}

fn unary_fn(op: Ops, s: Scalar) -> Option<UnFn> {
    by_scalar!(s, |T| int => int_unary::<T>(op), float => float_unary::<T>(op), bool => None)
}

/// `a * b + c` as two separately rounded operations (C without contraction).
fn mulacc<T: Arith>(a: u64, b: u64, c: u64) -> u64 {
    T::from_slot(a)
        .mul(T::from_slot(b))
        .add(T::from_slot(c))
        .to_slot()
}

fn mulacc_fn(s: Scalar) -> Option<TerFn> {
    by_scalar!(s, |T| int => Some(mulacc::<T> as TerFn), float => Some(mulacc::<T> as TerFn), bool => None)
}

fn cast<F: Lane, T: Lane>(a: u64) -> u64 {
    T::narrow(F::from_slot(a).widen()).to_slot()
}

fn cast_into<T: Lane>(from: Scalar) -> Option<UnFn> {
    by_scalar!(from, |F| int => Some(cast::<F, T> as UnFn), float => Some(cast::<F, T> as UnFn),
        bool => Some(cast::<F, T> as UnFn))
}

/// The C conversion from dtype `from` to dtype `to`.
fn cast_fn(from: Scalar, to: Scalar) -> Option<UnFn> {
    by_scalar!(to, |T| int => cast_into::<T>(from), float => cast_into::<T>(from), bool => cast_into::<T>(from))
}

/// Canonical slot form of raw bits (zero-extended bytes from memory, or another type's slot of
/// the same item size for BITCAST).
fn canon<T: Lane>(a: u64) -> u64 {
    T::from_slot(a).to_slot()
}

fn canon_fn(s: Scalar) -> Option<UnFn> {
    by_scalar!(s, |T| int => Some(canon::<T> as UnFn), float => Some(canon::<T> as UnFn),
        bool => Some(canon::<T> as UnFn))
}

/// The slot form of a constant of dtype `s`.
fn const_slot(c: ConstValue, s: Scalar) -> Option<u64> {
    let w = match c {
        ConstValue::Bool(b) => Wide::Int(b as i128),
        // u64 constants are held as their bit pattern.
        ConstValue::Int(i) if s == Scalar::U64 => Wide::Int(i as u64 as i128),
        ConstValue::Int(i) => Wide::Int(i as i128),
        ConstValue::Float(f) => Wide::Float(f),
    };
    by_scalar!(s, |T| int => Some(T::narrow(w).to_slot()), float => Some(T::narrow(w).to_slot()),
        bool => Some(T::narrow(w).to_slot()))
}

// ================================================================ instructions

/// One scalar memory access: element `v[idx] + add` of buffer argument `buf`, skipped when
/// the gate slot holds 0. Vector accesses are decoded into one of these per lane.
#[derive(Clone, Copy, Debug)]
struct Access {
    /// Index into the program's `globals`.
    buf: u32,
    idx: u32,
    add: u32,
    gate: Option<u32>,
}

/// A decoded instruction; operands are slot numbers, jump targets instruction numbers.
#[derive(Clone, Copy, Debug)]
enum Inst {
    /// `v[dst] = f(v[a])`: unary ALU ops, CAST, BITCAST.
    Unary {
        f: UnFn,
        dst: u32,
        a: u32,
    },
    Binary {
        f: BinFn,
        dst: u32,
        a: u32,
        b: u32,
    },
    Ternary {
        f: TerFn,
        dst: u32,
        a: u32,
        b: u32,
        c: u32,
    },
    Where {
        dst: u32,
        cond: u32,
        a: u32,
        b: u32,
    },
    /// VECTORIZE, GEP and register loads/stores.
    Copy {
        dst: u32,
        src: u32,
    },
    /// A register declaration: its value starts at 0.
    Zero {
        dst: u32,
    },
    /// `v[dst] = canon(memory)`, 0 when gated off.
    Load {
        dst: u32,
        at: Access,
        canon: UnFn,
    },
    Store {
        val: u32,
        at: Access,
    },
    /// Starts a loop: index 0, or jump to `exit` (past the END) when `v[end] <= 0`.
    Range {
        idx: u32,
        end: u32,
        exit: u32,
    },
    /// Closes a loop: next index, back to `body` while it is below `v[end]`.
    End {
        idx: u32,
        end: u32,
        body: u32,
    },
    /// Jumps past the ENDIF when `v[cond]` is 0.
    If {
        cond: u32,
        exit: u32,
    },
}

/// A buffer argument as the program sees it: which launch buffer and its element size.
#[derive(Clone, Copy, Debug)]
struct Global {
    arg: usize,
    itemsize: usize,
}

/// A compiled INTERP kernel.
#[derive(Debug)]
pub struct InterpProgram {
    name: String,
    code: Vec<Inst>,
    /// The register file at launch: constants filled in, everything else 0.
    init: Vec<u64>,
    globals: Vec<Global>,
    /// DEFINE_VAR slots in argument order, with the conversion of an i64 to their dtype.
    vars: Vec<(u32, UnFn)>,
    /// Set when the program uses something INTERP cannot run yet; launching reports it.
    unsupported: Option<String>,
}

impl InterpProgram {
    /// Decodes a linear program (see the module docs).
    pub fn new(name: &str, uops: &[UOp]) -> Result<InterpProgram> {
        let mut d = Decoder::new(name);
        for (pos, u) in uops.iter().enumerate() {
            d.step(pos, u)?;
            d.line_of.insert(u.id(), pos);
        }
        d.finish()
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn launch_error(&self, message: String) -> Error {
        Error::Launch {
            device: DEVICE.to_string(),
            kernel: self.name.clone(),
            message,
        }
    }

    /// The buffer views for one launch, in `globals` order.
    fn views<'a>(&self, bufs: &[&'a DeviceMemory]) -> Result<Vec<View<'a>>> {
        self.globals
            .iter()
            .map(|g| {
                let mem = bufs.get(g.arg).ok_or_else(|| {
                    self.launch_error(format!(
                        "buffer {} missing: launched with {} buffers",
                        g.arg,
                        bufs.len()
                    ))
                })?;
                let host = mem.inner.downcast_ref::<HostMemory>().ok_or_else(|| {
                    self.launch_error(format!("buffer {} is memory of another device", g.arg))
                })?;
                Ok(View {
                    mem: host,
                    arg: g.arg,
                    elems: host.len() / g.itemsize,
                    itemsize: g.itemsize,
                })
            })
            .collect()
    }

    /// Runs the instructions on the register file `v`.
    fn run(&self, v: &mut [u64], views: &[View]) -> Result<()> {
        let code = &self.code[..];
        let mut pc = 0usize;
        while let Some(inst) = code.get(pc) {
            pc += 1;
            match *inst {
                Inst::Unary { f, dst, a } => v[dst as usize] = f(v[a as usize]),
                Inst::Binary { f, dst, a, b } => v[dst as usize] = f(v[a as usize], v[b as usize]),
                Inst::Ternary { f, dst, a, b, c } => {
                    v[dst as usize] = f(v[a as usize], v[b as usize], v[c as usize])
                }
                Inst::Where { dst, cond, a, b } => {
                    v[dst as usize] = if v[cond as usize] != 0 {
                        v[a as usize]
                    } else {
                        v[b as usize]
                    }
                }
                Inst::Copy { dst, src } => v[dst as usize] = v[src as usize],
                Inst::Zero { dst } => v[dst as usize] = 0,
                Inst::Load { dst, at, canon } => {
                    v[dst as usize] = self.load(at, canon, v, views)?
                }
                Inst::Store { val, at } => self.store(at, v[val as usize], v, views)?,
                Inst::Range { idx, end, exit } => {
                    v[idx as usize] = 0;
                    if v[end as usize] as i64 <= 0 {
                        pc = exit as usize;
                    }
                }
                Inst::End { idx, end, body } => {
                    // The index stays below `end`, an i64, so adding 1 cannot overflow.
                    let next = v[idx as usize] as i64 + 1;
                    v[idx as usize] = next as u64;
                    if next < v[end as usize] as i64 {
                        pc = body as usize;
                    }
                }
                Inst::If { cond, exit } => {
                    if v[cond as usize] == 0 {
                        pc = exit as usize;
                    }
                }
            }
        }
        Ok(())
    }

    /// The element an access touches, or `None` when its gate is off.
    #[inline]
    fn element(at: Access, v: &[u64]) -> Option<i64> {
        match at.gate {
            Some(g) if v[g as usize] == 0 => None,
            _ => Some((v[at.idx as usize] as i64).wrapping_add(at.add as i64)),
        }
    }

    /// A gated-off load yields 0 of any dtype without touching memory.
    #[inline]
    fn load(&self, at: Access, canon: UnFn, v: &[u64], views: &[View]) -> Result<u64> {
        let Some(i) = Self::element(at, v) else {
            return Ok(0);
        };
        let view = &views[at.buf as usize];
        view.read(i).map(canon).ok_or_else(|| self.oob(view, i))
    }

    #[inline]
    fn store(&self, at: Access, bits: u64, v: &[u64], views: &[View]) -> Result<()> {
        let Some(i) = Self::element(at, v) else {
            return Ok(());
        };
        let view = &views[at.buf as usize];
        if view.write(i, bits) {
            Ok(())
        } else {
            Err(self.oob(view, i))
        }
    }

    #[cold]
    fn oob(&self, view: &View, i: i64) -> Error {
        self.launch_error(format!(
            "index {i} out of bounds for buffer {} of {} elements",
            view.arg, view.elems
        ))
    }
}

impl Program for InterpProgram {
    fn launch(&self, bufs: &[&DeviceMemory], vals: &[i64], wait: bool) -> Result<f64> {
        let start = Instant::now();
        if let Some(msg) = &self.unsupported {
            return Err(self.launch_error(msg.clone()));
        }
        let views = self.views(bufs)?;
        if vals.len() < self.vars.len() {
            return Err(self.launch_error(format!(
                "{} variable values given, the kernel has {} variables",
                vals.len(),
                self.vars.len()
            )));
        }
        let mut v = self.init.clone();
        for (&(slot, conv), &x) in self.vars.iter().zip(vals) {
            v[slot as usize] = conv(x as u64);
        }
        self.run(&mut v, &views)?;
        Ok(if wait {
            start.elapsed().as_secs_f64()
        } else {
            0.0
        })
    }
}

// ================================================================ memory access

/// One buffer during a launch. Accesses go through the raw pointer so that two arguments
/// naming the same memory (an input that is also the output) never create overlapping Rust
/// references.
struct View<'a> {
    mem: &'a HostMemory,
    arg: usize,
    elems: usize,
    itemsize: usize,
}

impl View<'_> {
    /// Byte offset of element `i`, or `None` when it is out of bounds.
    #[inline]
    fn offset(&self, i: i64) -> Option<usize> {
        let i = usize::try_from(i).ok()?;
        (i < self.elems).then_some(i * self.itemsize)
    }

    /// Raw little-endian bits of element `i`, zero-extended.
    #[inline]
    fn read(&self, i: i64) -> Option<u64> {
        let off = self.offset(i)?;
        // SAFETY: `itemsize` is 1, 2, 4 or 8 (checked when decoding DEFINE_GLOBAL) and the
        // match reads exactly that many bytes; `off + itemsize <= elems * itemsize <=
        // mem.len()`, so they lie in the live allocation, which `self.mem` borrows for the whole
        // launch (a non-empty one, since `elems > 0`). `read_unaligned` needs no alignment. The engine runs
        // one kernel at a time on this memory and the interpreter creates no references to
        // it, so nothing else accesses these bytes meanwhile.
        unsafe {
            let p = self.mem.as_ptr().add(off);
            Some(match self.itemsize {
                1 => p.read() as u64,
                2 => u16::from_le(p.cast::<u16>().read_unaligned()) as u64,
                4 => u32::from_le(p.cast::<u32>().read_unaligned()) as u64,
                _ => u64::from_le(p.cast::<u64>().read_unaligned()),
            })
        }
    }

    /// Writes the low `itemsize` bytes of `bits` to element `i`; false when out of bounds.
    #[inline]
    fn write(&self, i: i64, bits: u64) -> bool {
        let Some(off) = self.offset(i) else {
            return false;
        };
        // SAFETY: as in `read`: the bytes lie in the live allocation, no alignment is needed,
        // and no Rust reference to this memory exists during the launch.
        unsafe {
            let p = self.mem.as_ptr().add(off);
            match self.itemsize {
                1 => p.write(bits as u8),
                2 => p.cast::<u16>().write_unaligned((bits as u16).to_le()),
                4 => p.cast::<u32>().write_unaligned((bits as u32).to_le()),
                _ => p.cast::<u64>().write_unaligned(bits.to_le()),
            }
        }
        true
    }
}

// ================================================================ decoding

/// Where a UOp's value lives: `lanes` consecutive slots from `at`.
#[derive(Clone, Copy, Debug)]
struct Val {
    at: u32,
    lanes: u32,
    dtype: DType,
}

impl Val {
    /// Slot of lane `j`; a scalar broadcasts to every lane.
    fn lane(self, j: u32) -> u32 {
        if self.lanes == 1 {
            self.at
        } else {
            self.at + j
        }
    }
}

/// The function of an ALU op, resolved for its dtype.
#[derive(Clone, Copy)]
enum AluFn {
    Where,
    Unary(UnFn),
    Binary(BinFn),
    Ternary(TerFn),
}

/// An INDEX decoded for a LOAD or STORE.
struct Addr {
    buf: u32,
    idx: Val,
    gate: Option<Val>,
}

impl Addr {
    /// The access of lane `j`: consecutive elements for a scalar index, a gather otherwise.
    fn lane(&self, j: u32) -> Access {
        let (idx, add) = if self.idx.lanes == 1 {
            (self.idx.at, j)
        } else {
            (self.idx.at + j, 0)
        };
        Access {
            buf: self.buf,
            idx,
            add,
            gate: self.gate.map(|g| g.lane(j)),
        }
    }
}

struct Decoder<'a> {
    name: &'a str,
    /// Values by UOp id.
    vals: FxHashMap<usize, Val>,
    /// List position by UOp id, for error messages.
    line_of: FxHashMap<usize, usize>,
    /// `globals` entry of each DEFINE_GLOBAL, by UOp id.
    global_of: FxHashMap<usize, u32>,
    /// Instruction number of each RANGE / IF not yet closed, by UOp id.
    open: FxHashMap<usize, usize>,
    code: Vec<Inst>,
    init: Vec<u64>,
    globals: Vec<Global>,
    vars: Vec<(u32, UnFn)>,
    unsupported: Option<String>,
}

impl<'a> Decoder<'a> {
    fn new(name: &'a str) -> Decoder<'a> {
        Decoder {
            name,
            vals: FxHashMap::default(),
            line_of: FxHashMap::default(),
            global_of: FxHashMap::default(),
            open: FxHashMap::default(),
            code: Vec::new(),
            init: Vec::new(),
            globals: Vec::new(),
            vars: Vec::new(),
            unsupported: None,
        }
    }

    fn err(&self, pos: usize, u: &UOp, message: impl std::fmt::Display) -> Error {
        Error::Compile {
            device: DEVICE.to_string(),
            kernel: self.name.to_string(),
            message: format!("%{pos} {:?} {:?}: {message}", u.op(), u.dtype()),
        }
    }

    /// The value of source `s` of the UOp at `pos`; it must have been computed earlier.
    fn val(&self, pos: usize, u: &UOp, s: &UOp) -> Result<Val> {
        self.vals
            .get(&s.id())
            .copied()
            .ok_or_else(|| match self.line_of.get(&s.id()) {
                Some(l) => self.err(
                    pos,
                    u,
                    format_args!("source %{l} {:?} has no value", s.op()),
                ),
                None => self.err(
                    pos,
                    u,
                    format_args!("source {:?} is not earlier in the program", s.op()),
                ),
            })
    }

    fn src(&self, pos: usize, u: &UOp, i: usize) -> Result<Val> {
        let s = u
            .src()
            .get(i)
            .ok_or_else(|| self.err(pos, u, format_args!("missing source {i}")))?;
        self.val(pos, u, s)
    }

    /// Gives `u` a value of `u.dtype().count` zeroed slots.
    fn alloc(&mut self, u: &UOp) -> Val {
        let lanes = u.dtype().count.max(1) as u32;
        let at = self.init.len() as u32;
        self.init.resize(self.init.len() + lanes as usize, 0);
        let v = Val {
            at,
            lanes,
            dtype: u.dtype(),
        };
        self.vals.insert(u.id(), v);
        v
    }

    /// Checks that a source can feed an op of `lanes` lanes (same width, or a scalar).
    fn check_lanes(&self, pos: usize, u: &UOp, s: Val, lanes: u32) -> Result<()> {
        if s.lanes == 1 || s.lanes == lanes {
            Ok(())
        } else {
            Err(self.err(
                pos,
                u,
                format_args!("a source has {} lanes, the op {lanes}", s.lanes),
            ))
        }
    }

    fn step(&mut self, pos: usize, u: &UOp) -> Result<()> {
        match u.op() {
            Ops::SINK | Ops::INDEX => Ok(()),
            Ops::BARRIER => Ok(()), // no work groups: every "thread" is this one
            Ops::DEFINE_GLOBAL => self.define_global(pos, u),
            Ops::DEFINE_VAR => {
                let v = self.alloc(u);
                let conv = cast_fn(Scalar::I64, u.dtype().scalar)
                    .filter(|_| u.dtype().is_int())
                    .ok_or_else(|| self.err(pos, u, "a variable must have an integer dtype"))?;
                self.vars.push((v.at, conv));
                Ok(())
            }
            Ops::CONST => self.constant(pos, u),
            Ops::DEFINE_REG => {
                let v = self.alloc(u);
                for j in 0..v.lanes {
                    self.code.push(Inst::Zero { dst: v.at + j });
                }
                Ok(())
            }
            Ops::SPECIAL => {
                self.alloc(u);
                self.unsupported.get_or_insert_with(|| {
                    format!("SPECIAL (%{pos}) is unsupported: {DEVICE} has no GPU indices")
                });
                Ok(())
            }
            Ops::RANGE => {
                let end = self.src(pos, u, 0)?;
                let idx = self.alloc(u);
                if end.lanes != 1 || idx.lanes != 1 {
                    return Err(self.err(pos, u, "a loop bound must be a scalar"));
                }
                self.open.insert(u.id(), self.code.len());
                self.code.push(Inst::Range {
                    idx: idx.at,
                    end: end.at,
                    exit: 0,
                });
                Ok(())
            }
            Ops::END => self.end(pos, u),
            Ops::IF => {
                let cond = self.src(pos, u, 0)?;
                self.open.insert(u.id(), self.code.len());
                self.code.push(Inst::If {
                    cond: cond.at,
                    exit: 0,
                });
                Ok(())
            }
            Ops::ENDIF => self.endif(pos, u),
            Ops::LOAD => self.load(pos, u),
            Ops::STORE => self.store(pos, u),
            Ops::VECTORIZE => self.vectorize(pos, u),
            Ops::GEP => self.gep(pos, u),
            Ops::CAST | Ops::BITCAST => self.cast(pos, u),
            op if op.is_alu() => self.alu(pos, u),
            op => Err(self.err(
                pos,
                u,
                format_args!("{op:?} cannot appear in a linear program for {DEVICE}"),
            )),
        }
    }

    fn define_global(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let arg = match u.arg() {
            Arg::Int(i) => {
                usize::try_from(*i).map_err(|_| self.err(pos, u, "negative buffer number"))?
            }
            a => return Err(self.err(pos, u, format_args!("expected a buffer number, got {a:?}"))),
        };
        let itemsize = u.dtype().base().itemsize();
        if ![1, 2, 4, 8].contains(&itemsize) {
            return Err(self.err(pos, u, "a buffer needs elements of 1, 2, 4 or 8 bytes"));
        }
        self.global_of.insert(u.id(), self.globals.len() as u32);
        self.globals.push(Global { arg, itemsize });
        Ok(())
    }

    fn constant(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let c = match u.arg() {
            Arg::Const(c) => *c,
            a => return Err(self.err(pos, u, format_args!("expected a constant, got {a:?}"))),
        };
        let bits = const_slot(c, u.dtype().scalar)
            .ok_or_else(|| self.err(pos, u, "constant of no value type"))?;
        let v = self.alloc(u);
        for j in 0..v.lanes {
            self.init[(v.at + j) as usize] = bits;
        }
        Ok(())
    }

    /// The instruction number of the RANGE or IF (`want`) that the closing op `u` closes.
    fn opener(&mut self, pos: usize, u: &UOp, want: Ops) -> Result<usize> {
        let s = u.src().first().filter(|s| s.op() == want);
        let s = s.ok_or_else(|| {
            self.err(
                pos,
                u,
                format_args!("source 0 must be the {want:?} it closes"),
            )
        })?;
        let inst = self.open.remove(&s.id());
        inst.ok_or_else(|| self.err(pos, u, format_args!("its {want:?} is not open here")))
    }

    fn end(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let start = self.opener(pos, u, Ops::RANGE)?;
        let after = self.code.len() as u32 + 1;
        let Inst::Range { idx, end, exit } = &mut self.code[start] else {
            return Err(self.err(pos, u, "its RANGE decoded to something else"));
        };
        *exit = after;
        let inst = Inst::End {
            idx: *idx,
            end: *end,
            body: start as u32 + 1,
        };
        self.code.push(inst);
        Ok(())
    }

    fn endif(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let start = self.opener(pos, u, Ops::IF)?;
        let after = self.code.len() as u32;
        if let Inst::If { exit, .. } = &mut self.code[start] {
            *exit = after;
        }
        Ok(())
    }

    /// Decodes the INDEX `index` used by the LOAD or STORE `u` of element type `elem`.
    fn address(&self, pos: usize, u: &UOp, index: &UOp, elem: DType) -> Result<Addr> {
        if !(2..=3).contains(&index.src().len()) {
            return Err(self.err(
                pos,
                u,
                "INDEX needs [buffer, index] or [buffer, index, gate]",
            ));
        }
        // A pointer cast (to a vector pointer) changes nothing about the addressing: elements
        // stay in units of the buffer's dtype.
        let mut buf = &index.src()[0];
        while matches!(buf.op(), Ops::CAST | Ops::BITCAST)
            && buf.dtype().ptr
            && !buf.src().is_empty()
        {
            buf = &buf.src()[0];
        }
        let Some(&g) = self.global_of.get(&buf.id()) else {
            return Err(self.err(
                pos,
                u,
                format_args!("INDEX into {:?} is not supported by {DEVICE}", buf.op()),
            ));
        };
        let itemsize = self.globals[g as usize].itemsize;
        if elem.base().itemsize() != itemsize {
            return Err(self.err(
                pos,
                u,
                format_args!("{elem:?} access to a buffer of {itemsize}-byte elements"),
            ));
        }
        let idx = self.val(pos, u, &index.src()[1])?;
        if !idx.dtype.is_int() {
            return Err(self.err(pos, u, "the index must be an integer"));
        }
        let gate = index
            .src()
            .get(2)
            .map(|s| self.val(pos, u, s))
            .transpose()?;
        Ok(Addr { buf: g, idx, gate })
    }

    fn load(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let Some(from) = u.src().first() else {
            return Err(self.err(pos, u, "LOAD needs a source"));
        };
        match from.op() {
            Ops::DEFINE_REG => {
                let reg = self.val(pos, u, from)?;
                let v = self.alloc(u);
                self.check_lanes(pos, u, reg, v.lanes)?;
                for j in 0..v.lanes {
                    self.code.push(Inst::Copy {
                        dst: v.at + j,
                        src: reg.lane(j),
                    });
                }
                Ok(())
            }
            Ops::INDEX => {
                let addr = self.address(pos, u, from, u.dtype())?;
                let canon = canon_fn(u.dtype().scalar)
                    .ok_or_else(|| self.err(pos, u, "load of no value type"))?;
                let v = self.alloc(u);
                for s in [Some(addr.idx), addr.gate].into_iter().flatten() {
                    self.check_lanes(pos, u, s, v.lanes)?;
                }
                for j in 0..v.lanes {
                    self.code.push(Inst::Load {
                        dst: v.at + j,
                        at: addr.lane(j),
                        canon,
                    });
                }
                Ok(())
            }
            op => Err(self.err(pos, u, format_args!("LOAD from {op:?} is not supported"))),
        }
    }

    fn store(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let (Some(to), Some(value)) = (u.src().first(), u.src().get(1)) else {
            return Err(self.err(pos, u, "STORE needs [target, value]"));
        };
        let val = self.val(pos, u, value)?;
        match to.op() {
            Ops::DEFINE_REG => {
                let reg = self.val(pos, u, to)?;
                self.check_lanes(pos, u, val, reg.lanes)?;
                for j in 0..reg.lanes {
                    self.code.push(Inst::Copy {
                        dst: reg.at + j,
                        src: val.lane(j),
                    });
                }
                Ok(())
            }
            Ops::INDEX => {
                let addr = self.address(pos, u, to, val.dtype)?;
                let lanes = [val, addr.idx]
                    .iter()
                    .chain(addr.gate.iter())
                    .map(|s| s.lanes)
                    .max()
                    .unwrap_or(1);
                for s in [Some(val), Some(addr.idx), addr.gate].into_iter().flatten() {
                    self.check_lanes(pos, u, s, lanes)?;
                }
                for j in 0..lanes {
                    self.code.push(Inst::Store {
                        val: val.lane(j),
                        at: addr.lane(j),
                    });
                }
                Ok(())
            }
            op => Err(self.err(pos, u, format_args!("STORE to {op:?} is not supported"))),
        }
    }

    /// Concatenates the lanes of the sources.
    fn vectorize(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let srcs: Vec<Val> = u
            .src()
            .iter()
            .map(|s| self.val(pos, u, s))
            .collect::<Result<_>>()?;
        let v = self.alloc(u);
        let total: u32 = srcs.iter().map(|s| s.lanes).sum();
        if total != v.lanes {
            return Err(self.err(
                pos,
                u,
                format_args!("{total} source lanes for {} lanes", v.lanes),
            ));
        }
        let lanes = srcs
            .iter()
            .flat_map(|s| (0..s.lanes).map(move |j| s.at + j));
        for (dst, src) in (v.at..).zip(lanes) {
            self.code.push(Inst::Copy { dst, src });
        }
        Ok(())
    }

    /// Picks lanes of a vector: `arg = Int(i)`, or a list of lanes for a vector result.
    fn gep(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let src = self.src(pos, u, 0)?;
        let picks: Vec<u32> = match u.arg() {
            Arg::Int(i) => vec![u32::try_from(*i).unwrap_or(u32::MAX)],
            Arg::Axes(ax) => ax
                .iter()
                .map(|&i| u32::try_from(i).unwrap_or(u32::MAX))
                .collect(),
            a => return Err(self.err(pos, u, format_args!("expected lane numbers, got {a:?}"))),
        };
        if let Some(bad) = picks.iter().find(|&&i| i >= src.lanes) {
            return Err(self.err(
                pos,
                u,
                format_args!("lane {bad} of a {}-lane value", src.lanes),
            ));
        }
        let v = self.alloc(u);
        if picks.len() != v.lanes as usize {
            return Err(self.err(
                pos,
                u,
                format_args!("{} lanes picked for {} lanes", picks.len(), v.lanes),
            ));
        }
        for (dst, i) in (v.at..).zip(picks) {
            self.code.push(Inst::Copy {
                dst,
                src: src.at + i,
            });
        }
        Ok(())
    }

    fn cast(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let a = self.src(pos, u, 0)?;
        let (from, to) = (a.dtype.scalar, u.dtype().scalar);
        let f = if u.op() == Ops::BITCAST {
            if a.dtype.itemsize() != u.dtype().itemsize() {
                return Err(self.err(
                    pos,
                    u,
                    format_args!("bitcast from {:?} changes the item size", a.dtype),
                ));
            }
            canon_fn(to)
        } else {
            cast_fn(from, to)
        };
        let f =
            f.ok_or_else(|| self.err(pos, u, format_args!("no conversion from {:?}", a.dtype)))?;
        let v = self.alloc(u);
        self.check_lanes(pos, u, a, v.lanes)?;
        for j in 0..v.lanes {
            self.code.push(Inst::Unary {
                f,
                dst: v.at + j,
                a: a.lane(j),
            });
        }
        Ok(())
    }

    fn alu(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let op = u.op();
        let srcs: Vec<Val> = u
            .src()
            .iter()
            .map(|s| self.val(pos, u, s))
            .collect::<Result<_>>()?;
        let want = if op.is_unary() {
            1
        } else if op.is_binary() {
            2
        } else {
            3
        };
        if srcs.len() != want {
            return Err(self.err(
                pos,
                u,
                format_args!("{} sources, {op:?} takes {want}", srcs.len()),
            ));
        }
        // Comparisons compute on their operands' dtype, every other op on its result dtype.
        let kind = if op.is_comparison() {
            srcs[0].dtype.scalar
        } else {
            u.dtype().scalar
        };
        let f = match op {
            Ops::WHERE => Some(AluFn::Where),
            Ops::MULACC => mulacc_fn(kind).map(AluFn::Ternary),
            _ if op.is_unary() => unary_fn(op, kind).map(AluFn::Unary),
            _ => binary_fn(op, kind).map(AluFn::Binary),
        };
        let f = f.ok_or_else(|| {
            self.err(
                pos,
                u,
                format_args!(
                    "{op:?} is not defined for {:?}",
                    DType {
                        scalar: kind,
                        count: 1,
                        ptr: false
                    }
                ),
            )
        })?;
        let v = self.alloc(u);
        for &s in &srcs {
            self.check_lanes(pos, u, s, v.lanes)?;
        }
        let l = |s: usize, j: u32| srcs[s].lane(j);
        for j in 0..v.lanes {
            let dst = v.at + j;
            self.code.push(match f {
                AluFn::Where => Inst::Where {
                    dst,
                    cond: l(0, j),
                    a: l(1, j),
                    b: l(2, j),
                },
                AluFn::Unary(f) => Inst::Unary { f, dst, a: l(0, j) },
                AluFn::Binary(f) => Inst::Binary {
                    f,
                    dst,
                    a: l(0, j),
                    b: l(1, j),
                },
                AluFn::Ternary(f) => Inst::Ternary {
                    f,
                    dst,
                    a: l(0, j),
                    b: l(1, j),
                    c: l(2, j),
                },
            });
        }
        Ok(())
    }

    fn finish(self) -> Result<InterpProgram> {
        if let Some((&id, _)) = self.open.iter().next() {
            let what = self
                .line_of
                .get(&id)
                .map_or_else(|| "a RANGE or IF".to_string(), |l| format!("%{l}"));
            return Err(Error::Compile {
                device: DEVICE.to_string(),
                kernel: self.name.to_string(),
                message: format!("{what} is never closed (no END / ENDIF)"),
            });
        }
        Ok(InterpProgram {
            name: self.name.to_string(),
            code: self.code,
            init: self.init,
            globals: self.globals,
            vars: self.vars,
            unsupported: self.unsupported,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::AxisType;

    // ------------------------------------------------------------ builders

    fn global(i: i64, dt: DType) -> UOp {
        UOp::new(Ops::DEFINE_GLOBAL, dt.ptr(), vec![], Arg::Int(i))
    }
    fn index(buf: &UOp, i: &UOp) -> UOp {
        UOp::new(
            Ops::INDEX,
            buf.dtype(),
            vec![buf.clone(), i.clone()],
            Arg::None,
        )
    }
    fn gated_index(buf: &UOp, i: &UOp, gate: &UOp) -> UOp {
        UOp::new(
            Ops::INDEX,
            buf.dtype(),
            vec![buf.clone(), i.clone(), gate.clone()],
            Arg::None,
        )
    }
    fn load(idx: &UOp, dt: DType) -> UOp {
        UOp::new(Ops::LOAD, dt, vec![idx.clone()], Arg::None)
    }
    fn store(target: &UOp, v: &UOp) -> UOp {
        UOp::new(
            Ops::STORE,
            DType::VOID,
            vec![target.clone(), v.clone()],
            Arg::None,
        )
    }
    fn range(end: &UOp, id: u32) -> UOp {
        UOp::range(end.clone(), id, AxisType::Global)
    }
    fn end(r: &UOp) -> UOp {
        UOp::new(Ops::END, DType::VOID, vec![r.clone()], Arg::None)
    }
    fn i32c(v: i64) -> UOp {
        UOp::int(DType::I32, v)
    }
    fn alu(op: Ops, src: &[&UOp]) -> UOp {
        UOp::alu(op, src.iter().map(|s| (*s).clone()).collect())
    }

    fn f32_bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    fn f32s(b: &[u8]) -> Vec<f32> {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
    fn i32_bytes(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    fn i32s(b: &[u8]) -> Vec<i32> {
        b.chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    /// Compiles `uops` through the device, runs them on buffers holding `data`, and returns
    /// the buffers' contents afterwards.
    fn run(uops: &[UOp], data: &[Vec<u8>], vals: &[i64]) -> Result<Vec<Vec<u8>>> {
        let dev = InterpDevice::new();
        let mems: Vec<DeviceMemory> = data
            .iter()
            .map(|d| dev.alloc(d.len()))
            .collect::<Result<_>>()?;
        for (m, d) in mems.iter().zip(data) {
            dev.copy_in(m, d)?;
        }
        let spec = ProgramSpec {
            name: "test".to_string(),
            uops: uops.to_vec(),
            src: String::new(),
            global_size: [1, 1, 1],
            local_size: None,
            buf_count: data.len(),
            vars: vec![],
            flops: 0,
            bytes: 0,
            opts: vec![],
        };
        let progs = dev.compile(&[Arc::new(spec)])?;
        let refs: Vec<&DeviceMemory> = mems.iter().collect();
        progs[0].launch(&refs, vals, true)?;
        mems.iter()
            .map(|m| {
                let mut out = vec![0u8; m.bytes];
                dev.copy_out(m, &mut out)?;
                Ok(out)
            })
            .collect()
    }

    /// `out[0] = op(a[0], b[0])` on one-element buffers of `dt`, returning the raw result bytes.
    fn binary_on(op: Ops, dt: DType, a: Vec<u8>, b: Vec<u8>) -> Vec<u8> {
        let out_dt = if op.is_comparison() { DType::BOOL } else { dt };
        let (o, ga, gb) = (global(0, out_dt), global(1, dt), global(2, dt));
        let zero = i32c(0);
        let (la, lb) = (load(&index(&ga, &zero), dt), load(&index(&gb, &zero), dt));
        let r = alu(op, &[&la, &lb]);
        let st = store(&index(&o, &zero), &r);
        let prog = [o, ga, gb, zero, la, lb, r, st];
        let out = vec![0u8; out_dt.itemsize()];
        run(&prog, &[out, a, b], &[]).unwrap().swap_remove(0)
    }

    // ------------------------------------------------------------ tests

    #[test]
    fn elementwise_add_f32() {
        let (o, a, b) = (
            global(0, DType::F32),
            global(1, DType::F32),
            global(2, DType::F32),
        );
        let n = i32c(16);
        let r = range(&n, 0);
        let la = load(&index(&a, &r), DType::F32);
        let lb = load(&index(&b, &r), DType::F32);
        let sum = &la + &lb;
        let st = store(&index(&o, &r), &sum);
        let prog = [o, a, b, n, r.clone(), la, lb, sum, st, end(&r)];
        let xa: Vec<f32> = (0..16).map(|i| i as f32 * 0.1).collect();
        let xb: Vec<f32> = (0..16).map(|i| 1.0 / (i as f32 + 1.0)).collect();
        let res = run(&prog, &[vec![0; 64], f32_bytes(&xa), f32_bytes(&xb)], &[]).unwrap();
        let want: Vec<f32> = xa.iter().zip(&xb).map(|(x, y)| x + y).collect();
        assert_eq!(f32s(&res[0]), want);
    }

    #[test]
    fn sum_reduction_with_register() {
        let (o, a) = (global(0, DType::F32), global(1, DType::F32));
        let (zero, n, fzero) = (i32c(0), i32c(10), UOp::float(DType::F32, 0.0));
        let acc = UOp::new(Ops::DEFINE_REG, DType::F32, vec![], Arg::Int(0));
        let init = store(&acc, &fzero);
        let r = UOp::range(n.clone(), 0, AxisType::Reduce);
        let la = load(&index(&a, &r), DType::F32);
        let cur = UOp::new(
            Ops::LOAD,
            DType::F32,
            vec![acc.clone(), r.clone()],
            Arg::None,
        );
        let next = &cur + &la;
        let upd = store(&acc, &next);
        let e = end(&r);
        let fin = UOp::new(
            Ops::LOAD,
            DType::F32,
            vec![acc.clone(), e.clone()],
            Arg::None,
        );
        let st = store(&index(&o, &zero), &fin);
        let prog = [
            o, a, zero, n, fzero, acc, init, r, la, cur, next, upd, e, fin, st,
        ];
        let xs: Vec<f32> = (0..10).map(|i| (i as f32).sin()).collect();
        let res = run(&prog, &[vec![0; 4], f32_bytes(&xs)], &[]).unwrap();
        let want = xs.iter().fold(0.0f32, |s, x| s + x);
        assert_eq!(f32s(&res[0]), vec![want]);
    }

    #[test]
    fn gated_load_outside_bounds_yields_zero() {
        let (o, a) = (global(0, DType::F32), global(1, DType::F32));
        let (n, four) = (i32c(8), i32c(4));
        let r = range(&n, 0);
        let gate = r.lt(&four);
        let la = load(&gated_index(&a, &r, &gate), DType::F32);
        let st = store(&index(&o, &r), &la);
        let prog = [o, a, n, four, r.clone(), gate, la, st, end(&r)];
        let res = run(
            &prog,
            &[vec![0xff; 32], f32_bytes(&[1.0, 2.0, 3.0, 4.0])],
            &[],
        )
        .unwrap();
        assert_eq!(f32s(&res[0]), vec![1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn gated_store_is_skipped() {
        let o = global(0, DType::I32);
        let (n, one, seven) = (i32c(4), i32c(1), i32c(7));
        let r = range(&n, 0);
        let gate = r.lt(&one);
        let st = store(&gated_index(&o, &(&r * 100), &gate), &seven);
        let prog = [
            o,
            n,
            one,
            seven,
            r.clone(),
            r.c(100),
            &r * 100,
            gate,
            st,
            end(&r),
        ];
        // Indices 100, 200 and 300 would be out of bounds: the gate keeps them from memory.
        let res = run(&prog, &[vec![0; 4]], &[]).unwrap();
        assert_eq!(i32s(&res[0]), vec![7]);
    }

    #[test]
    fn u8_addition_wraps() {
        let out = binary_on(Ops::ADD, DType::U8, vec![200], vec![100]);
        assert_eq!(out, vec![200u8.wrapping_add(100)]);
        assert_eq!(out, vec![44]);
        let out = binary_on(Ops::MUL, DType::I8, vec![100], vec![3]);
        assert_eq!(out, vec![100i8.wrapping_mul(3) as u8]);
    }

    #[test]
    fn integer_division_truncates_toward_zero() {
        let i = |v: i32| v.to_le_bytes().to_vec();
        let div = |a, b| {
            i32::from_le_bytes(
                binary_on(Ops::IDIV, DType::I32, i(a), i(b))
                    .try_into()
                    .unwrap(),
            )
        };
        let rem = |a, b| {
            i32::from_le_bytes(
                binary_on(Ops::MOD, DType::I32, i(a), i(b))
                    .try_into()
                    .unwrap(),
            )
        };
        assert_eq!(div(-7, 2), -3);
        assert_eq!(rem(-7, 2), -1);
        assert_eq!(div(7, -2), -3);
        assert_eq!(rem(7, -2), 1);
        assert_eq!(div(5, 0), 0);
        assert_eq!(rem(5, 0), 0);
        assert_eq!(div(i32::MIN, -1), i32::MIN);
    }

    #[test]
    fn u64_is_unsigned() {
        let u = |v: u64| v.to_le_bytes().to_vec();
        let big = u64::MAX - 5;
        let q = binary_on(Ops::IDIV, DType::U64, u(big), u(3));
        assert_eq!(u64::from_le_bytes(q.try_into().unwrap()), big / 3);
        assert_eq!(binary_on(Ops::CMPLT, DType::U64, u(1), u(big)), vec![1]);
        let m = binary_on(Ops::MUL, DType::U64, u(big), u(7));
        assert_eq!(
            u64::from_le_bytes(m.try_into().unwrap()),
            big.wrapping_mul(7)
        );
        let s = binary_on(Ops::SHR, DType::U64, u(big), u(60));
        assert_eq!(u64::from_le_bytes(s.try_into().unwrap()), big >> 60);
    }

    #[test]
    fn shifts_are_arithmetic_for_signed() {
        let i = |v: i32| v.to_le_bytes().to_vec();
        let shr = binary_on(Ops::SHR, DType::I32, i(-16), i(2));
        assert_eq!(i32::from_le_bytes(shr.try_into().unwrap()), -4);
        let shl = binary_on(Ops::SHL, DType::I32, i(3), i(33));
        assert_eq!(
            i32::from_le_bytes(shl.try_into().unwrap()),
            3i32.wrapping_shl(33)
        );
    }

    /// Casts each element of `xs` (f32) to `to` and returns the raw output bytes.
    fn cast_f32(xs: &[f32], to: DType) -> Vec<u8> {
        let (o, a) = (global(0, to), global(1, DType::F32));
        let n = i32c(xs.len() as i64);
        let r = range(&n, 0);
        let la = load(&index(&a, &r), DType::F32);
        let c = la.cast(to);
        let st = store(&index(&o, &r), &c);
        let prog = [o, a, n, r.clone(), la, c, st, end(&r)];
        run(
            &prog,
            &[vec![0; xs.len() * to.itemsize()], f32_bytes(xs)],
            &[],
        )
        .unwrap()
        .swap_remove(0)
    }

    #[test]
    fn cast_f32_to_int_truncates_and_saturates() {
        let xs = [-2.7f32, 2.7, f32::NAN, 1e10, -1e10, -0.5];
        let got = i32s(&cast_f32(&xs, DType::I32));
        let want: Vec<i32> = xs.iter().map(|&x| x as i32).collect();
        assert_eq!(got, want);
        assert_eq!(got[0], -2);
        assert_eq!(got[2], 0);
    }

    #[test]
    fn cast_to_bool_and_half() {
        let xs = [0.0f32, -0.0, 3.5, f32::NAN, 65520.0, 1.0 / 3.0];
        assert_eq!(cast_f32(&xs, DType::BOOL), vec![0, 0, 1, 1, 1, 1]);
        let h = cast_f32(&xs, DType::F16);
        let got: Vec<u16> = h
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        let want: Vec<u16> = xs
            .iter()
            .map(|&x| half::f16::from_f32(x).to_bits())
            .collect();
        // NaN payloads may differ; compare NaN-ness there.
        for (g, w) in got.iter().zip(&want) {
            let (g, w) = (half::f16::from_bits(*g), half::f16::from_bits(*w));
            assert!(
                g == w || (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits(),
                "{g} vs {w}"
            );
        }
    }

    #[test]
    fn f16_arithmetic_rounds_through_f32() {
        let h = |v: f32| half::f16::from_f32(v).to_bits().to_le_bytes().to_vec();
        let got = binary_on(Ops::ADD, DType::F16, h(1.0), h(0.0004));
        let want = half::f16::from_f32(
            half::f16::from_f32(1.0).to_f32() + half::f16::from_f32(0.0004).to_f32(),
        );
        assert_eq!(got, want.to_bits().to_le_bytes().to_vec());
    }

    #[test]
    fn max_with_nan_is_a_less_than_b_then_b_else_a() {
        let f = |v: f32| v.to_le_bytes().to_vec();
        let max = |a, b| {
            f32::from_le_bytes(
                binary_on(Ops::MAX, DType::F32, f(a), f(b))
                    .try_into()
                    .unwrap(),
            )
        };
        assert!(max(f32::NAN, 1.0).is_nan());
        assert_eq!(max(1.0, f32::NAN), 1.0);
        assert_eq!(max(-3.0, 2.0), 2.0);
        assert_eq!(max(2.0, -3.0), 2.0);
    }

    #[test]
    fn nested_loops_transpose_4x3() {
        // out[j*4 + i] = a[i*3 + j] for a 4x3 matrix a.
        let (o, a) = (global(0, DType::F32), global(1, DType::F32));
        let (four, three) = (i32c(4), i32c(3));
        let i = range(&four, 0);
        let j = range(&three, 1);
        let src = &(&i * 3) + &j;
        let dst = &(&j * 4) + &i;
        let la = load(&index(&a, &src), DType::F32);
        let st = store(&index(&o, &dst), &la);
        let prog = [
            o,
            a,
            four.clone(),
            three.clone(),
            i.clone(),
            j.clone(),
            &i * 3,
            src,
            &j * 4,
            dst,
            la,
            st,
            end(&j),
            end(&i),
        ];
        let xs: Vec<f32> = (0..12).map(|v| v as f32).collect();
        let res = run(&prog, &[vec![0; 48], f32_bytes(&xs)], &[]).unwrap();
        let mut want = vec![0.0f32; 12];
        for r in 0..4 {
            for c in 0..3 {
                want[c * 4 + r] = xs[r * 3 + c];
            }
        }
        assert_eq!(f32s(&res[0]), want);
    }

    #[test]
    fn out_of_bounds_store_is_an_error() {
        let o = global(0, DType::F32);
        let (n, one) = (i32c(5), UOp::float(DType::F32, 1.0));
        let r = range(&n, 0);
        let st = store(&index(&o, &r), &one);
        let prog = [o, n, one, r.clone(), st, end(&r)];
        let err = run(&prog, &[vec![0; 16]], &[]).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::Launch { .. }), "{msg}");
        assert!(
            msg.contains("index 4 out of bounds for buffer 0 of 4 elements"),
            "{msg}"
        );
    }

    #[test]
    fn out_of_bounds_load_is_an_error() {
        let (o, a) = (global(0, DType::F32), global(1, DType::F32));
        let m = i32c(-1);
        let la = load(&index(&a, &m), DType::F32);
        let st = store(&index(&o, &m), &la);
        let err = run(&[o, a, m, la, st], &[vec![0; 4], vec![0; 4]], &[]).unwrap_err();
        assert!(
            err.to_string()
                .contains("index -1 out of bounds for buffer 1"),
            "{err}"
        );
    }

    #[test]
    fn empty_range_skips_the_body() {
        let o = global(0, DType::I32);
        let (n, zero, seven) = (i32c(0), i32c(0), i32c(7));
        let r = range(&n, 0);
        // The body would store out of bounds if it ran.
        let st = store(&index(&o, &(&r + 100)), &seven);
        let prog = [
            o,
            n,
            zero,
            seven,
            r.clone(),
            r.c(100),
            &r + 100,
            st,
            end(&r),
        ];
        let res = run(&prog, &[vec![0; 4]], &[]).unwrap();
        assert_eq!(i32s(&res[0]), vec![0]);
    }

    #[test]
    fn symbolic_loop_bound_and_if_block() {
        // for i in 0..n { if i != 2 { out[i] = i * 10 } }
        let o = global(0, DType::I32);
        let n = UOp::new(
            Ops::DEFINE_VAR,
            DType::I32,
            vec![],
            Arg::Var("n".into(), 1, 8),
        );
        let (two, ten) = (i32c(2), i32c(10));
        let r = range(&n, 0);
        let cond = r.ne(&two);
        let iff = UOp::new(Ops::IF, DType::VOID, vec![cond.clone()], Arg::None);
        let v = &r * &ten;
        let st = store(&index(&o, &r), &v);
        let endif = UOp::new(Ops::ENDIF, DType::VOID, vec![iff.clone()], Arg::None);
        let prog = [o, n, two, ten, r.clone(), cond, iff, v, st, endif, end(&r)];
        let res = run(&prog, &[i32_bytes(&[-1; 6])], &[5]).unwrap();
        assert_eq!(i32s(&res[0]), vec![0, 10, -1, 30, 40, -1]);
    }

    #[test]
    fn aliased_input_and_output() {
        // a[i] = a[i] * 2 with the same memory passed as buffers 0 and 1.
        let (o, a) = (global(0, DType::I32), global(1, DType::I32));
        let (n, two) = (i32c(3), i32c(2));
        let r = range(&n, 0);
        let la = load(&index(&a, &r), DType::I32);
        let v = &la * &two;
        let st = store(&index(&o, &r), &v);
        let prog = [o, a, n, two, r.clone(), la, v, st, end(&r)];
        let dev = InterpDevice::new();
        let mem = dev.alloc(12).unwrap();
        dev.copy_in(&mem, &i32_bytes(&[1, 2, 3])).unwrap();
        let p = InterpProgram::new("alias", &prog).unwrap();
        p.launch(&[&mem, &mem], &[], false).unwrap();
        let mut out = vec![0u8; 12];
        dev.copy_out(&mem, &mut out).unwrap();
        assert_eq!(i32s(&out), vec![2, 4, 6]);
    }

    #[test]
    fn vector_load_alu_store_and_gep() {
        // out[4i..4i+4] = a[4i..4i+4] * 2 as float4; out2[i] = lane 3 + lane 0, for i in 0..2.
        let f4 = DType::F32.vec(4);
        let (o, a, o2) = (
            global(0, DType::F32),
            global(1, DType::F32),
            global(2, DType::F32),
        );
        let (two_i, four) = (i32c(2), i32c(4));
        let two = UOp::float(DType::F32, 2.0);
        let two4 = UOp::new(Ops::VECTORIZE, f4, vec![two.clone(); 4], Arg::None);
        let r = range(&two_i, 0);
        let base = &r * &four;
        let la = load(&index(&a, &base), f4);
        let m = &la * &two4;
        let st = store(&index(&o, &base), &m);
        let g3 = UOp::new(Ops::GEP, DType::F32, vec![la.clone()], Arg::Int(3));
        let g0 = UOp::new(Ops::GEP, DType::F32, vec![la.clone()], Arg::Int(0));
        let s = &g3 + &g0;
        let st2 = store(&index(&o2, &r), &s);
        let prog = [
            o,
            a,
            o2,
            two_i,
            four,
            two,
            two4,
            r.clone(),
            base,
            la,
            m,
            st,
            g3,
            g0,
            s,
            st2,
            end(&r),
        ];
        let xs: Vec<f32> = (0..8).map(|v| v as f32 + 0.5).collect();
        let res = run(&prog, &[vec![0; 32], f32_bytes(&xs), vec![0; 8]], &[]).unwrap();
        assert_eq!(
            f32s(&res[0]),
            xs.iter().map(|x| x * 2.0).collect::<Vec<_>>()
        );
        assert_eq!(f32s(&res[2]), vec![xs[3] + xs[0], xs[7] + xs[4]]);
    }

    #[test]
    fn mulacc_is_not_fused() {
        let (o, a) = (global(0, DType::F32), global(1, DType::F32));
        let zero = i32c(0);
        let (i1, i2) = (i32c(1), i32c(2));
        let x = load(&index(&a, &zero), DType::F32);
        let y = load(&index(&a, &i1), DType::F32);
        let z = load(&index(&a, &i2), DType::F32);
        let mac = UOp::alu(Ops::MULACC, vec![x.clone(), y.clone(), z.clone()]);
        let st = store(&index(&o, &zero), &mac);
        let prog = [o, a, zero, i1, i2, x, y, z, mac, st];
        let (xv, yv, zv) = (1.0f32 + f32::EPSILON, 1.0f32 - f32::EPSILON, -1.0f32);
        let res = run(&prog, &[vec![0; 4], f32_bytes(&[xv, yv, zv])], &[]).unwrap();
        assert_eq!(f32s(&res[0]), vec![xv * yv + zv]);
        assert_ne!(
            xv.mul_add(yv, zv),
            xv * yv + zv,
            "test inputs must tell fused from unfused"
        );
    }

    #[test]
    fn matmul_16x16() {
        // c[i, j] = sum_k a[i, k] * b[k, j], accumulated in k order like the Rust reference.
        let nn = 16usize;
        let (c, a, b) = (
            global(0, DType::F32),
            global(1, DType::F32),
            global(2, DType::F32),
        );
        let n = i32c(nn as i64);
        let fzero = UOp::float(DType::F32, 0.0);
        let acc = UOp::new(Ops::DEFINE_REG, DType::F32, vec![], Arg::Int(0));
        let (i, j) = (range(&n, 0), range(&n, 1));
        let k = UOp::range(n.clone(), 2, AxisType::Reduce);
        let init = store(&acc, &fzero);
        let (ik, kj, ij) = (&(&i * &n) + &k, &(&k * &n) + &j, &(&i * &n) + &j);
        let la = load(&index(&a, &ik), DType::F32);
        let lb = load(&index(&b, &kj), DType::F32);
        let prod = &la * &lb;
        let cur = UOp::new(
            Ops::LOAD,
            DType::F32,
            vec![acc.clone(), k.clone()],
            Arg::None,
        );
        let next = &cur + &prod;
        let upd = store(&acc, &next);
        let ek = end(&k);
        let fin = UOp::new(
            Ops::LOAD,
            DType::F32,
            vec![acc.clone(), ek.clone()],
            Arg::None,
        );
        let st = store(&index(&c, &ij), &fin);
        let prog = [
            c,
            a,
            b,
            n.clone(),
            fzero,
            acc,
            i.clone(),
            j.clone(),
            init,
            k.clone(),
            &i * &n,
            ik,
            &k * &n,
            kj,
            la,
            lb,
            prod,
            cur,
            next,
            upd,
            ek,
            &i * &n,
            ij,
            fin,
            st,
            end(&j),
            end(&i),
        ];
        // `&i * &n` appears twice above (hash-consed: same node); drop the second copy.
        let mut seen = FxHashMap::default();
        let prog: Vec<UOp> = prog
            .into_iter()
            .filter(|u| seen.insert(u.id(), ()).is_none())
            .collect();
        let xa: Vec<f32> = (0..nn * nn)
            .map(|v| ((v * 7) % 13) as f32 * 0.25 - 1.0)
            .collect();
        let xb: Vec<f32> = (0..nn * nn)
            .map(|v| ((v * 5) % 11) as f32 * 0.5 - 2.0)
            .collect();
        let res = run(
            &prog,
            &[vec![0; nn * nn * 4], f32_bytes(&xa), f32_bytes(&xb)],
            &[],
        )
        .unwrap();
        let mut want = vec![0.0f32; nn * nn];
        for r in 0..nn {
            for col in 0..nn {
                want[r * nn + col] =
                    (0..nn).fold(0.0f32, |s, kk| s + xa[r * nn + kk] * xb[kk * nn + col]);
            }
        }
        assert_eq!(f32s(&res[0]), want);
    }

    #[test]
    fn malformed_programs_are_compile_errors() {
        let n = i32c(4);
        let r = range(&n, 0);
        // A RANGE without END.
        let err = InterpProgram::new("bad", &[n.clone(), r.clone()]).unwrap_err();
        assert!(matches!(err, Error::Compile { .. }), "{err}");
        // A source used before it is computed.
        let v = &r + 1;
        let err = InterpProgram::new("bad", &[n.clone(), v, r.clone(), end(&r)]).unwrap_err();
        assert!(err.to_string().contains("not earlier"), "{err}");
        // SQRT of an integer.
        let s = alu(Ops::SQRT, &[&n]);
        let err = InterpProgram::new("bad", &[n.clone(), s]).unwrap_err();
        assert!(
            err.to_string().contains("SQRT is not defined for int32"),
            "{err}"
        );
    }

    #[test]
    fn special_is_unsupported_at_launch() {
        let n = i32c(4);
        let sp = UOp::new(
            Ops::SPECIAL,
            DType::I32,
            vec![n.clone()],
            Arg::Special(crate::uop::SpecialKind::Global, 0),
        );
        let p = InterpProgram::new("gpu", &[n, sp]).unwrap();
        let err = p.launch(&[], &[], true).unwrap_err();
        assert!(
            matches!(err, Error::Launch { .. }) && err.to_string().contains("SPECIAL"),
            "{err}"
        );
    }

    #[test]
    fn copy_size_mismatch_is_an_error() {
        let dev = InterpDevice::new();
        let m = dev.alloc(8).unwrap();
        assert!(dev.copy_in(&m, &[0; 4]).is_err());
        assert!(dev.copy_out(&m, &mut [0; 12]).is_err());
        assert_eq!(dev.name(), "INTERP");
        assert!(!dev.renderer().target().has_threads);
    }

    #[test]
    fn listing_is_numbered_and_indented() {
        let o = global(0, DType::I32);
        let n = i32c(2);
        let r = range(&n, 0);
        let st = store(&index(&o, &r), &r);
        let prog = [o, n, r.clone(), st, end(&r)];
        let text = InterpRenderer::new().render("k", &prog);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6, "{text}");
        assert!(lines[3].starts_with("%2    RANGE "), "{text}");
        assert!(lines[4].starts_with("%3      STORE "), "{text}");
        assert_eq!(
            lines[3].find("int32"),
            lines[4].find("void"),
            "aligned columns: {text}"
        );
        assert!(
            lines[4].contains("(%?, %2)"),
            "INDEX is not in the list: {text}"
        );
        assert!(lines[5].starts_with("%4    END"), "{text}");
    }

    #[test]
    fn million_iteration_loop_sums_like_rust() {
        // 2^20 iterations of a few instructions (the rate is printed with --nocapture).
        let o = global(0, DType::F32);
        let (zero, n) = (i32c(0), i32c(1 << 20));
        let acc = UOp::new(Ops::DEFINE_REG, DType::F32, vec![], Arg::Int(0));
        let r = range(&n, 0);
        let x = r.cast(DType::F32);
        let cur = UOp::new(
            Ops::LOAD,
            DType::F32,
            vec![acc.clone(), r.clone()],
            Arg::None,
        );
        let next = &cur + &x;
        let upd = store(&acc, &next);
        let e = end(&r);
        let fin = UOp::new(
            Ops::LOAD,
            DType::F32,
            vec![acc.clone(), e.clone()],
            Arg::None,
        );
        let st = store(&index(&o, &zero), &fin);
        let prog = [o, zero, n, acc, r, x, cur, next, upd, e, fin, st];
        let dev = InterpDevice::new();
        let mem = dev.alloc(4).unwrap();
        let p = InterpProgram::new("loop", &prog).unwrap();
        let secs = p.launch(&[&mem], &[], true).unwrap();
        eprintln!(
            "1M iterations x 5 instructions in {secs:.4}s ({:.1} M inst/s)",
            5.0 * 1.048576 / secs
        );
        let want = (0..1 << 20).fold(0.0f32, |s, i| s + i as f32);
        assert_eq!(f32s(mem.downcast::<HostMemory>().as_slice()), vec![want]);
    }
}
