//! Decoding a linear program into instructions: a slot range per value, a function pointer
//! per ALU op resolved for its dtype, jump targets for loops and IF blocks.

use super::alu::{binary_fn, canon_fn, cast_fn, const_slot, mulacc_fn, unary_fn, BinFn, TerFn, UnFn};
use super::program::{Access, Global, Inst, InterpProgram};
use super::DEVICE;
use crate::error::{Error, Result};
use crate::uop::{Arg, DType, FxHashMap, Ops, Scalar, UOp};

/// Decodes the linear program `uops` of kernel `name`, in list order: every source must come
/// before its users, every RANGE / IF be closed by its END / ENDIF.
pub(super) fn decode(name: &str, uops: &[UOp]) -> Result<InterpProgram> {
    let mut d = Decoder::new(name);
    for (pos, u) in uops.iter().enumerate() {
        d.step(pos, u)?;
        d.line_of.insert(u.id(), pos);
    }
    d.finish()
}

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
        let (idx, add) = if self.idx.lanes == 1 { (self.idx.at, j) } else { (self.idx.at + j, 0) };
        Access { buf: self.buf, idx, add, gate: self.gate.map(|g| g.lane(j)) }
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
        self.vals.get(&s.id()).copied().ok_or_else(|| match self.line_of.get(&s.id()) {
            Some(l) => self.err(pos, u, format_args!("source %{l} {:?} has no value", s.op())),
            None => self.err(pos, u, format_args!("source {:?} is not earlier in the program", s.op())),
        })
    }

    fn src(&self, pos: usize, u: &UOp, i: usize) -> Result<Val> {
        let s = u.src().get(i).ok_or_else(|| self.err(pos, u, format_args!("missing source {i}")))?;
        self.val(pos, u, s)
    }

    /// The values of all sources of the UOp at `pos`.
    fn srcs(&self, pos: usize, u: &UOp) -> Result<Vec<Val>> {
        u.src().iter().map(|s| self.val(pos, u, s)).collect()
    }

    /// Gives `u` a value of `u.dtype().count` zeroed slots.
    fn alloc(&mut self, u: &UOp) -> Val {
        let lanes = u.dtype().count.max(1) as u32;
        let at = self.init.len() as u32;
        self.init.resize(self.init.len() + lanes as usize, 0);
        let v = Val { at, lanes, dtype: u.dtype() };
        self.vals.insert(u.id(), v);
        v
    }

    /// Checks that a source can feed an op of `lanes` lanes (same width, or a scalar).
    fn check_lanes(&self, pos: usize, u: &UOp, s: Val, lanes: u32) -> Result<()> {
        if s.lanes == 1 || s.lanes == lanes {
            Ok(())
        } else {
            Err(self.err(pos, u, format_args!("a source has {} lanes, the op {lanes}", s.lanes)))
        }
    }

    /// Copies every lane of `dst` from `src` (a scalar `src` broadcasts).
    fn copy_lanes(&mut self, dst: Val, src: Val) {
        for j in 0..dst.lanes {
            self.code.push(Inst::Copy { dst: dst.at + j, src: src.lane(j) });
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
                self.unsupported
                    .get_or_insert_with(|| format!("SPECIAL (%{pos}) is unsupported: {DEVICE} has no GPU indices"));
                Ok(())
            }
            Ops::RANGE => {
                let end = self.src(pos, u, 0)?;
                let idx = self.alloc(u);
                if end.lanes != 1 || idx.lanes != 1 {
                    return Err(self.err(pos, u, "a loop bound must be a scalar"));
                }
                self.open.insert(u.id(), self.code.len());
                self.code.push(Inst::Range { idx: idx.at, end: end.at, exit: 0 });
                Ok(())
            }
            Ops::END => self.end(pos, u),
            Ops::IF => {
                let cond = self.src(pos, u, 0)?;
                self.open.insert(u.id(), self.code.len());
                self.code.push(Inst::If { cond: cond.at, exit: 0 });
                Ok(())
            }
            Ops::ENDIF => self.endif(pos, u),
            Ops::LOAD => self.load(pos, u),
            Ops::STORE => self.store(pos, u),
            Ops::VECTORIZE => self.vectorize(pos, u),
            Ops::GEP => self.gep(pos, u),
            Ops::CAST | Ops::BITCAST => self.cast(pos, u),
            op if op.is_alu() => self.alu(pos, u),
            op => Err(self.err(pos, u, format_args!("{op:?} cannot appear in a linear program for {DEVICE}"))),
        }
    }

    fn define_global(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let arg = match u.arg() {
            Arg::Int(i) => usize::try_from(*i).map_err(|_| self.err(pos, u, "negative buffer number"))?,
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
        let bits = const_slot(c, u.dtype().scalar).ok_or_else(|| self.err(pos, u, "constant of no value type"))?;
        let v = self.alloc(u);
        for j in 0..v.lanes {
            self.init[(v.at + j) as usize] = bits;
        }
        Ok(())
    }

    /// The instruction number of the RANGE or IF (`want`) that the closing op `u` closes.
    fn opener(&mut self, pos: usize, u: &UOp, want: Ops) -> Result<usize> {
        let s = u.src().first().filter(|s| s.op() == want);
        let s = s.ok_or_else(|| self.err(pos, u, format_args!("source 0 must be the {want:?} it closes")))?;
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
        let inst = Inst::End { idx: *idx, end: *end, body: start as u32 + 1 };
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
            return Err(self.err(pos, u, "INDEX needs [buffer, index] or [buffer, index, gate]"));
        }
        // A pointer cast (to a vector pointer) changes nothing about the addressing: elements
        // stay in units of the buffer's dtype.
        let mut buf = &index.src()[0];
        while matches!(buf.op(), Ops::CAST | Ops::BITCAST) && buf.dtype().ptr && !buf.src().is_empty() {
            buf = &buf.src()[0];
        }
        let Some(&g) = self.global_of.get(&buf.id()) else {
            return Err(self.err(pos, u, format_args!("INDEX into {:?} is not supported by {DEVICE}", buf.op())));
        };
        let itemsize = self.globals[g as usize].itemsize;
        if elem.base().itemsize() != itemsize {
            return Err(self.err(pos, u, format_args!("{elem:?} access to a buffer of {itemsize}-byte elements")));
        }
        let idx = self.val(pos, u, &index.src()[1])?;
        if !idx.dtype.is_int() {
            return Err(self.err(pos, u, "the index must be an integer"));
        }
        let gate = index.src().get(2).map(|s| self.val(pos, u, s)).transpose()?;
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
                self.copy_lanes(v, reg);
                Ok(())
            }
            Ops::INDEX => {
                let addr = self.address(pos, u, from, u.dtype())?;
                let canon = canon_fn(u.dtype().scalar).ok_or_else(|| self.err(pos, u, "load of no value type"))?;
                let v = self.alloc(u);
                for s in [Some(addr.idx), addr.gate].into_iter().flatten() {
                    self.check_lanes(pos, u, s, v.lanes)?;
                }
                for j in 0..v.lanes {
                    self.code.push(Inst::Load { dst: v.at + j, at: addr.lane(j), canon });
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
                self.copy_lanes(reg, val);
                Ok(())
            }
            Ops::INDEX => {
                let addr = self.address(pos, u, to, val.dtype)?;
                let lanes = [val, addr.idx].iter().chain(addr.gate.iter()).map(|s| s.lanes).max().unwrap_or(1);
                for s in [Some(val), Some(addr.idx), addr.gate].into_iter().flatten() {
                    self.check_lanes(pos, u, s, lanes)?;
                }
                for j in 0..lanes {
                    self.code.push(Inst::Store { val: val.lane(j), at: addr.lane(j) });
                }
                Ok(())
            }
            op => Err(self.err(pos, u, format_args!("STORE to {op:?} is not supported"))),
        }
    }

    /// Concatenates the lanes of the sources.
    fn vectorize(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let srcs = self.srcs(pos, u)?;
        let v = self.alloc(u);
        let total: u32 = srcs.iter().map(|s| s.lanes).sum();
        if total != v.lanes {
            return Err(self.err(pos, u, format_args!("{total} source lanes for {} lanes", v.lanes)));
        }
        let lanes = srcs.iter().flat_map(|s| (0..s.lanes).map(move |j| s.at + j));
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
            Arg::Axes(ax) => ax.iter().map(|&i| u32::try_from(i).unwrap_or(u32::MAX)).collect(),
            a => return Err(self.err(pos, u, format_args!("expected lane numbers, got {a:?}"))),
        };
        if let Some(bad) = picks.iter().find(|&&i| i >= src.lanes) {
            return Err(self.err(pos, u, format_args!("lane {bad} of a {}-lane value", src.lanes)));
        }
        let v = self.alloc(u);
        if picks.len() != v.lanes as usize {
            return Err(self.err(pos, u, format_args!("{} lanes picked for {} lanes", picks.len(), v.lanes)));
        }
        for (dst, i) in (v.at..).zip(picks) {
            self.code.push(Inst::Copy { dst, src: src.at + i });
        }
        Ok(())
    }

    fn cast(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let a = self.src(pos, u, 0)?;
        let (from, to) = (a.dtype.scalar, u.dtype().scalar);
        let f = if u.op() == Ops::BITCAST {
            if a.dtype.itemsize() != u.dtype().itemsize() {
                return Err(self.err(pos, u, format_args!("bitcast from {:?} changes the item size", a.dtype)));
            }
            canon_fn(to)
        } else {
            cast_fn(from, to)
        };
        let f = f.ok_or_else(|| self.err(pos, u, format_args!("no conversion from {:?}", a.dtype)))?;
        let v = self.alloc(u);
        self.check_lanes(pos, u, a, v.lanes)?;
        for j in 0..v.lanes {
            self.code.push(Inst::Unary { f, dst: v.at + j, a: a.lane(j) });
        }
        Ok(())
    }

    fn alu(&mut self, pos: usize, u: &UOp) -> Result<()> {
        let op = u.op();
        let srcs = self.srcs(pos, u)?;
        let want = if op.is_unary() {
            1
        } else if op.is_binary() {
            2
        } else {
            3
        };
        if srcs.len() != want {
            return Err(self.err(pos, u, format_args!("{} sources, {op:?} takes {want}", srcs.len())));
        }
        // Comparisons compute on their operands' dtype, every other op on its result dtype.
        let kind = if op.is_comparison() { srcs[0].dtype.scalar } else { u.dtype().scalar };
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
                format_args!("{op:?} is not defined for {:?}", DType { scalar: kind, count: 1, ptr: false }),
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
                AluFn::Where => Inst::Where { dst, cond: l(0, j), a: l(1, j), b: l(2, j) },
                AluFn::Unary(f) => Inst::Unary { f, dst, a: l(0, j) },
                AluFn::Binary(f) => Inst::Binary { f, dst, a: l(0, j), b: l(1, j) },
                AluFn::Ternary(f) => Inst::Ternary { f, dst, a: l(0, j), b: l(1, j), c: l(2, j) },
            });
        }
        Ok(())
    }

    fn finish(self) -> Result<InterpProgram> {
        if let Some((&id, _)) = self.open.iter().next() {
            let what = self.line_of.get(&id).map_or_else(|| "a RANGE or IF".to_string(), |l| format!("%{l}"));
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

impl InterpProgram {
    /// Decodes a linear program (see the `interp` module docs).
    pub fn new(name: &str, uops: &[UOp]) -> Result<InterpProgram> {
        decode(name, uops)
    }
}
