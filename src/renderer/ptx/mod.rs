//! The PTX renderer: the linear program written directly as NVIDIA's virtual assembly (no CUDA C,
//! no NVRTC), for the `NV` device, which loads it with `cuModuleLoadData`, and for `ptxas`.
//!
//! Every value gets a virtual register of its class (`%p` predicates for bool, `%r` 32-bit
//! integers — 8/16-bit integers live there sign- or zero-extended —, `%rd` 64-bit integers and
//! addresses, `%h` f16/bf16 bits, `%f` f32, `%fd` f64); loops are a counter, a test and two
//! labels; `IF` branches around its block. Loads and stores use generic addresses (global
//! buffers as CUDA passes them; local memory through `cvta.shared`).
//!
//! Where PTX's rules differ from C's, the interpreter's are written out (`alu.rs`): float add,
//! sub and mul carry `.rn`, so ptxas never fuses them into FMAs; division and remainder by 0 give
//! 0 and `MIN / -1` wraps; shift amounts are masked; `!=` on floats is unordered (true for NaN,
//! `setp.neu`); float→int conversion saturates with NaN → 0 (PTX's own `cvt.rzi` rule, clamped
//! further for 8/16-bit results); `MAX` keeps C's `a < b ? b : a`. Two rules are PTX's: `EXP2`,
//! `LOG2` and `SIN` are the hardware approximations (`ex2.approx`: 2 ulp; `sin.approx`: 2^-20.9
//! absolute error on [-π, π], worse far outside), and f64 has none of them: the target asks for f64 ones
//! as f64 arithmetic (`codegen/transcendental.rs`; `ptx_unsupported` still names any left).

mod alu;

use crate::renderer::{Renderer, Target};
use crate::uop::{Arg, ConstValue, DType, FxHashMap, Ops, Scalar, SpecialKind, UOp};

use std::fmt::Write;

/// The PTX ISA version written in the header (CUDA 11.8 and later drivers load it).
pub const PTX_VERSION: &str = "7.8";

/// Renders kernels as PTX for one architecture (`sm_80`).
pub struct PtxRenderer {
    target: Target,
    arch: String,
}

impl PtxRenderer {
    /// A renderer for `arch` (`sm_80`; PTX for it also runs on later GPUs) with `target`'s limits.
    pub fn new(target: Target, arch: &str) -> PtxRenderer {
        // PTX's transcendentals are f32 approximations: f64 ones are lowered to arithmetic.
        PtxRenderer { target: Target { f64_transcendentals: false, ..target }, arch: arch.to_string() }
    }

    pub fn arch(&self) -> &str {
        &self.arch
    }
}

/// The PTX renderer for a device called `device` with CUDA's usual limits.
pub fn ptx_renderer(device: &str, arch: &str) -> PtxRenderer {
    PtxRenderer::new(Target::gpu(device), arch)
}

impl Renderer for PtxRenderer {
    fn target(&self) -> &Target {
        &self.target
    }

    fn render(&self, name: &str, uops: &[UOp]) -> String {
        Ptx::default().run(name, &self.arch, uops)
    }
}

/// The first op of `uops` PTX cannot express (f64 transcendentals), as a message naming it.
pub fn ptx_unsupported(uops: &[UOp]) -> Option<String> {
    uops.iter()
        .find(|u| matches!(u.op(), Ops::EXP2 | Ops::LOG2 | Ops::SIN) && u.dtype().scalar == Scalar::F64)
        .map(|u| format!("PTX has no f64 {:?} (its transcendentals are f32 approximations); use DEV=CUDA", u.op()))
}

/// A register class: its declaration type and name prefix.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Class {
    Pred,
    B16,
    B32,
    B64,
    F32,
    F64,
}

impl Class {
    pub(super) fn of(dt: DType) -> Class {
        if dt.ptr {
            return Class::B64;
        }
        match dt.scalar {
            Scalar::Bool => Class::Pred,
            Scalar::F16 | Scalar::BF16 => Class::B16,
            Scalar::F32 => Class::F32,
            Scalar::F64 => Class::F64,
            Scalar::I64 | Scalar::U64 => Class::B64,
            _ => Class::B32,
        }
    }
    fn decl(self) -> (&'static str, &'static str) {
        match self {
            Class::Pred => ("pred", "%p"),
            Class::B16 => ("b16", "%h"),
            Class::B32 => ("b32", "%r"),
            Class::B64 => ("b64", "%rd"),
            Class::F32 => ("f32", "%f"),
            Class::F64 => ("f64", "%fd"),
        }
    }
}

/// The type suffix of an arithmetic instruction on `dt` (8/16-bit integers compute as 32-bit).
pub(super) fn op_type(dt: DType) -> &'static str {
    match dt.scalar {
        Scalar::Bool => "pred",
        Scalar::I8 | Scalar::I16 | Scalar::I32 => "s32",
        Scalar::U8 | Scalar::U16 | Scalar::U32 => "u32",
        Scalar::I64 => "s64",
        Scalar::U64 => "u64",
        Scalar::F16 | Scalar::BF16 => "b16",
        Scalar::F32 => "f32",
        Scalar::F64 => "f64",
        Scalar::Void => "b32",
    }
}

/// The type of a load or store of one element of `dt` in memory.
fn mem_type(dt: DType) -> &'static str {
    match dt.scalar {
        Scalar::Bool | Scalar::U8 => "u8",
        Scalar::I8 => "s8",
        Scalar::I16 => "s16",
        Scalar::U16 => "u16",
        Scalar::F16 | Scalar::BF16 => "b16",
        _ => op_type(dt),
    }
}

/// An immediate operand of `dt` holding `v` (floats by their bits, as PTX writes them).
pub(super) fn immediate(v: ConstValue, dt: DType) -> String {
    let v = v.cast(dt);
    match dt.scalar {
        Scalar::F32 => format!("0f{:08X}", (v.as_f64() as f32).to_bits()),
        Scalar::F64 => format!("0d{:016X}", v.as_f64().to_bits()),
        Scalar::F16 => format!("0x{:04X}", half::f16::from_f64(v.as_f64()).to_bits()),
        Scalar::BF16 => format!("0x{:04X}", half::bf16::from_f64(v.as_f64()).to_bits()),
        Scalar::U64 => format!("{}", v.as_i64() as u64),
        Scalar::U8 | Scalar::U16 | Scalar::U32 => format!("{}", v.as_i64() as u64 as u32),
        Scalar::Bool => format!("{}", v.as_bool() as u32),
        _ => format!("{}", v.as_i64()),
    }
}

/// An open block: a loop (its counter, dtype and labels) or an `IF` (its end label).
enum Block {
    Loop { counter: String, ty: &'static str, head: String, exit: String },
    If { exit: String },
}

#[derive(Default)]
pub(super) struct Ptx {
    counts: FxHashMap<Class, usize>,
    names: FxHashMap<UOp, String>,
    body: String,
    params: Vec<(usize, String)>,
    shared: Vec<String>,
    blocks: Vec<Block>,
    labels: usize,
}

impl Ptx {
    /// A fresh register of `class`.
    pub(super) fn reg(&mut self, class: Class) -> String {
        let n = self.counts.entry(class).or_default();
        *n += 1;
        format!("{}{}", class.decl().1, *n - 1)
    }

    pub(super) fn line(&mut self, s: &str) {
        let _ = writeln!(self.body, "  {s}");
    }

    pub(super) fn n(&self, u: &UOp) -> String {
        self.names.get(u).cloned().unwrap_or_else(|| panic!("PTX renderer: {:?} used before it is defined", u.op()))
    }

    fn label(&mut self, what: &str) -> String {
        self.labels += 1;
        format!("$L{what}{}", self.labels - 1)
    }

    fn run(mut self, name: &str, arch: &str, uops: &[UOp]) -> String {
        for u in uops {
            self.op(name, u);
        }
        self.params.sort_by_key(|(i, _)| *i);
        let mut out = String::new();
        let _ = writeln!(out, ".version {PTX_VERSION}\n.target {arch}\n.address_size 64");
        for s in &self.shared {
            let _ = writeln!(out, "{s}");
        }
        let params: Vec<&str> = self.params.iter().map(|(_, p)| p.as_str()).collect();
        let _ = writeln!(out, ".visible .entry {name}(\n  {}\n)\n{{", params.join(",\n  "));
        let mut classes: Vec<(&Class, &usize)> = self.counts.iter().collect();
        classes.sort_by_key(|(c, _)| c.decl().1);
        for (class, n) in classes {
            let (ty, prefix) = class.decl();
            let _ = writeln!(out, "  .reg .{ty} {prefix}<{n}>;");
        }
        out.push_str(&self.body);
        out.push_str("  ret;\n}\n");
        out
    }

    fn op(&mut self, kernel: &str, u: &UOp) {
        let dt = u.dtype();
        match u.op() {
            Ops::DEFINE_GLOBAL => {
                let i = u.arg_int() as usize;
                self.params.push((i, format!(".param .u64 data{i}")));
                let r = self.reg(Class::B64);
                self.line(&format!("ld.param.u64 {r}, [data{i}];"));
                self.names.insert(u.clone(), r);
            }
            Ops::DEFINE_VAR => {
                let Arg::Var(vname, _, _) = u.arg() else { unreachable!() };
                self.params.push((usize::MAX, format!(".param .{} {vname}", op_type(dt))));
                let r = self.reg(Class::of(dt));
                self.line(&format!("ld.param.{} {r}, [{vname}];", op_type(dt)));
                self.names.insert(u.clone(), r);
            }
            Ops::CONST => {
                let v = u.const_value().expect("CONST without value");
                let r = self.reg(Class::of(dt));
                if dt.is_bool() {
                    self.line(&format!("setp.ne.u32 {r}, {}, 0;", immediate(v, dt)));
                } else {
                    self.line(&format!("mov.{} {r}, {};", mov_type(dt), immediate(v, dt)));
                }
                self.names.insert(u.clone(), r);
            }
            Ops::SPECIAL => {
                let Arg::Special(kind, d) = u.arg() else { unreachable!() };
                let d = ["x", "y", "z"][*d as usize];
                let get = |p: &mut Ptx, reg: &str| {
                    let r = p.reg(Class::B32);
                    p.line(&format!("mov.u32 {r}, %{reg}.{d};"));
                    r
                };
                let r = match kind {
                    SpecialKind::Group => get(self, "ctaid"),
                    SpecialKind::Local => get(self, "tid"),
                    SpecialKind::Global => {
                        let (g, l, t) = (get(self, "ctaid"), get(self, "ntid"), get(self, "tid"));
                        if dt.bits() > 32 {
                            let (w, t64) = (self.reg(Class::B64), self.reg(Class::B64));
                            self.line(&format!("mul.wide.u32 {w}, {g}, {l};"));
                            self.line(&format!("cvt.u64.u32 {t64}, {t};"));
                            self.line(&format!("add.s64 {w}, {w}, {t64};"));
                            w
                        } else {
                            let r = self.reg(Class::B32);
                            self.line(&format!("mad.lo.s32 {r}, {g}, {l}, {t};"));
                            r
                        }
                    }
                };
                let r = if dt.bits() > 32 && *kind != SpecialKind::Global {
                    let w = self.reg(Class::B64);
                    self.line(&format!("cvt.u64.u32 {w}, {r};"));
                    w
                } else {
                    r
                };
                self.names.insert(u.clone(), r);
            }
            Ops::DEFINE_LOCAL => {
                let size = u.src()[0].as_int().expect("DEFINE_LOCAL of a constant size");
                let var = format!("{kernel}_temp{}", u.arg_int());
                self.shared.push(format!(".shared .align 16 .b8 {var}[{}];", size.max(1) as usize * dt.itemsize()));
                let r = self.reg(Class::B64);
                self.line(&format!("cvta.shared.u64 {r}, {var};"));
                self.names.insert(u.clone(), r);
            }
            Ops::DEFINE_REG => {
                let r = self.reg(Class::of(dt.base()));
                self.names.insert(u.clone(), r);
            }
            Ops::RANGE => {
                let counter = self.reg(Class::of(dt));
                let ty = op_type(dt);
                let (head, exit) = (self.label("loop"), self.label("end"));
                let end = self.n(&u.src()[0]);
                let done = self.reg(Class::Pred);
                self.line(&format!("mov.{} {counter}, 0;", mov_type(dt)));
                let _ = writeln!(self.body, "{head}:");
                self.line(&format!("setp.ge.{ty} {done}, {counter}, {end};"));
                self.line(&format!("@{done} bra {exit};"));
                self.names.insert(u.clone(), counter.clone());
                self.blocks.push(Block::Loop { counter, ty, head, exit });
            }
            Ops::END | Ops::ENDIF => match self.blocks.pop() {
                Some(Block::Loop { counter, ty, head, exit }) => {
                    self.line(&format!("add.{ty} {counter}, {counter}, 1;"));
                    self.line(&format!("bra {head};"));
                    let _ = writeln!(self.body, "{exit}:");
                }
                Some(Block::If { exit }) => {
                    let _ = writeln!(self.body, "{exit}:");
                }
                None => panic!("PTX renderer: {:?} without an open block", u.op()),
            },
            Ops::IF => {
                let c = self.n(&u.src()[0]);
                let exit = self.label("endif");
                self.line(&format!("@!{c} bra {exit};"));
                self.blocks.push(Block::If { exit });
            }
            Ops::BARRIER => self.line("bar.sync 0;"),
            Ops::INDEX => {
                let (base, idx) = (self.n(&u.src()[0]), &u.src()[1]);
                let size = u.src()[0].dtype().itemsize();
                let (off, addr) = (self.reg(Class::B64), self.reg(Class::B64));
                if idx.dtype().bits() > 32 {
                    self.line(&format!("mul.lo.s64 {off}, {}, {size};", self.n(idx)));
                } else {
                    self.line(&format!("mul.wide.s32 {off}, {}, {size};", self.n(idx)));
                }
                self.line(&format!("add.s64 {addr}, {base}, {off};"));
                self.names.insert(u.clone(), addr);
            }
            Ops::LOAD => self.load(u),
            Ops::STORE => self.store(u),
            Ops::SINK => {}
            op if op.is_alu() || op == Ops::CAST || op == Ops::BITCAST => {
                assert!(dt.count <= 1, "PTX renderer: no vectors ({dt:?})");
                let r = self.alu(u);
                self.names.insert(u.clone(), r);
            }
            op => panic!("PTX renderer: unsupported op {op:?}"),
        }
    }

    fn load(&mut self, u: &UOp) {
        let src = &u.src()[0];
        if src.op() == Ops::DEFINE_REG {
            let acc = self.n(src);
            self.names.insert(u.clone(), acc);
            return;
        }
        let dt = u.dtype();
        assert!(dt.count <= 1, "PTX renderer: no vector loads ({dt:?})");
        let addr = self.n(src);
        let gate = src.src().get(2).map(|g| self.n(g));
        // A bool is a byte in memory, loaded into a 32-bit register and tested.
        let r = self.reg(if dt.is_bool() { Class::B32 } else { Class::of(dt) });
        if gate.is_some() {
            let zero = immediate(ConstValue::Int(0), if dt.is_bool() { DType::U32 } else { dt });
            self.line(&format!("mov.{} {r}, {zero};", if dt.is_bool() { "b32" } else { mov_type(dt) }));
        }
        let pred = gate.map(|g| format!("@{g} ")).unwrap_or_default();
        self.line(&format!("{pred}ld.{} {r}, [{addr}];", mem_type(dt)));
        let r = if dt.is_bool() {
            let p = self.reg(Class::Pred);
            self.line(&format!("setp.ne.u32 {p}, {r}, 0;"));
            p
        } else {
            r
        };
        self.names.insert(u.clone(), r);
    }

    fn store(&mut self, u: &UOp) {
        let (dst, value) = (&u.src()[0], &u.src()[1]);
        let dt = value.dtype();
        let v = self.n(value);
        if dst.op() == Ops::DEFINE_REG {
            let acc = self.n(dst);
            self.line(&format!("mov.{} {acc}, {v};", mov_type(dt)));
            return;
        }
        assert!(dt.count <= 1, "PTX renderer: no vector stores ({dt:?})");
        let addr = self.n(dst);
        let pred = dst.src().get(2).filter(|_| dst.op() == Ops::INDEX).map(|g| format!("@{} ", self.n(g)));
        let v = if dt.is_bool() {
            let b = self.reg(Class::B32);
            self.line(&format!("selp.u32 {b}, 1, 0, {v};"));
            b
        } else {
            v
        };
        self.line(&format!("{}st.{} [{addr}], {v};", pred.unwrap_or_default(), mem_type(dt)));
    }
}

/// The type of a `mov` of a `dt` register.
pub(super) fn mov_type(dt: DType) -> &'static str {
    match Class::of(dt) {
        Class::Pred => "pred",
        Class::B16 => "b16",
        Class::B32 => "b32",
        Class::B64 => "b64",
        Class::F32 => "f32",
        Class::F64 => "f64",
    }
}
