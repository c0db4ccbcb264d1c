//! The decoded form of a kernel: instructions on slots of a flat register file.

use super::alu::{BinFn, TerFn, UnFn};

/// One scalar memory access: element `v[idx] + add` of buffer argument `buf`, skipped when
/// the gate slot holds 0. Vector accesses are decoded into one of these per lane.
#[derive(Clone, Copy, Debug)]
pub(super) struct Access {
    /// Index into the program's `globals`.
    pub(super) buf: u32,
    pub(super) idx: u32,
    pub(super) add: u32,
    pub(super) gate: Option<u32>,
}

/// A decoded instruction; operands are slot numbers, jump targets instruction numbers.
#[derive(Clone, Copy, Debug)]
pub(super) enum Inst {
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
pub(super) struct Global {
    pub(super) arg: usize,
    pub(super) itemsize: usize,
}

/// A compiled INTERP kernel.
#[derive(Debug)]
pub struct InterpProgram {
    pub(super) name: String,
    pub(super) code: Vec<Inst>,
    /// The register file at launch: constants filled in, everything else 0.
    pub(super) init: Vec<u64>,
    pub(super) globals: Vec<Global>,
    /// DEFINE_VAR slots in argument order, with the conversion of an i64 to their dtype.
    pub(super) vars: Vec<(u32, UnFn)>,
    /// Set when the program uses something INTERP cannot run yet; launching reports it.
    pub(super) unsupported: Option<String>,
}

impl InterpProgram {
    pub fn name(&self) -> &str {
        &self.name
    }
}
