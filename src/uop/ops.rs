//! The operation set of the one IR. The same enum names tensor-graph ops (BUFFER, RESHAPE,
//! REDUCE_AXIS, ...), kernel ops (RANGE, INDEX, LOAD, STORE, REDUCE) and program ops
//! (DEFINE_REG, END), so a reader can follow one node from the tensor call to the kernel.

use std::fmt;

#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Ops {
    // ---- graph / buffers ----
    /// Root of a graph with several outputs.
    SINK,
    /// A device, `arg = Str(name)`; source of tensor-level CONST nodes.
    DEVICE,
    /// Realized memory, `arg = Buffer(handle)`, shape `[size]`.
    BUFFER,
    /// A scalar constant, `arg = Const(value)`. Tensor-level consts have one DEVICE source.
    CONST,
    /// A tensor-level leaf `[0, 1, ..., n-1]`: `src = [DEVICE]`, `arg = Int(n)`. Becomes the
    /// loop index in a kernel (arange, eye and random counters need no memory).
    IOTA,
    /// Forces its source to be materialized into its own buffer.
    CONTIGUOUS,
    /// Copies its source to the device named by `arg = Str(device)`.
    COPY,
    /// Writes its second source into the buffer of its first (in-place update).
    ASSIGN,
    /// Detaches from autograd; no effect on values.
    DETACH,
    /// A tensor spread over several devices: `src` = one tensor per device (all of one shape),
    /// `arg = Int(axis)`: the sources are consecutive slices of that axis, or `Int(-1)`: each is a
    /// whole copy. Its device is the devices' names joined by `,` (`CPU,CPU:1`); the scheduler
    /// splits every op on such a device into one op per device (`schedule/multi.rs`).
    MULTI,

    // ---- movement (tensor level only; become index arithmetic) ----
    RESHAPE,
    PERMUTE,
    EXPAND,
    PAD,
    SHRINK,
    FLIP,

    // ---- reduce ----
    /// Tensor-level reduce: `arg = Reduce(op, axes)`, reduced axes keep size 1.
    REDUCE_AXIS,
    /// Kernel-level reduce: `src = [value, RANGE...]`, `arg = Op(ADD | MAX | MUL)`.
    REDUCE,

    // ---- unary ALU ----
    NEG,
    RECIP,
    SQRT,
    EXP2,
    LOG2,
    SIN,
    TRUNC,
    // ---- binary ALU ----
    ADD,
    SUB,
    MUL,
    /// Float division.
    FDIV,
    /// Integer division, truncating toward zero (C semantics).
    IDIV,
    /// Integer remainder with the sign of the dividend (C semantics).
    MOD,
    MAX,
    CMPLT,
    CMPNE,
    CMPEQ,
    AND,
    OR,
    XOR,
    SHL,
    SHR,
    // ---- ternary ALU ----
    WHERE,
    /// `a * b + c`; for floats rounded once (fused, C's `fma`). The linearizer uses it for
    /// the accumulate step of a reduce of products (matmul, conv).
    MULACC,

    // ---- casts ----
    CAST,
    BITCAST,

    // ---- kernel / program ----
    /// Kernel buffer argument number `arg = Int(i)`, pointer dtype.
    DEFINE_GLOBAL,
    /// A symbolic integer bound at launch, `arg = Var(name, min, max)`.
    DEFINE_VAR,
    /// A variable with its value for one realize: `src = [DEFINE_VAR, CONST]`. Appears in
    /// symbolic movement arguments; the scheduler strips it into the item's variable values,
    /// so a kernel sees only the DEFINE_VAR and is the same for every value.
    BIND,
    /// A register (accumulator), `arg = Int(id)`.
    DEFINE_REG,
    /// A work-group local memory array (GPU), pointer dtype, `src = [size]`, `arg = Int(id)`.
    DEFINE_LOCAL,
    /// A loop index: `src = [end]`, `arg = Range(id, AxisType)`; in a linear program it opens
    /// a loop.
    RANGE,
    /// Closes the loop of its RANGE source in a linear program.
    END,
    /// A GPU index builtin (global/local id), `arg = Special(kind, dim)`, `src = [size]`.
    SPECIAL,
    /// Address computation: `src = [buffer, index]` or `[buffer, index, gate]`.
    INDEX,
    /// Reads through an INDEX (0 where the gate is false) or reads a DEFINE_REG
    /// (`src = [reg, ordering dep]`).
    LOAD,
    /// Writes `src[1]` through the INDEX (or DEFINE_REG) `src[0]`.
    STORE,
    /// Local-memory barrier (work-group synchronization).
    BARRIER,
    /// Builds a vector from scalars.
    VECTORIZE,
    /// Takes lane `arg = Int(i)` of a vector.
    GEP,
    /// Opens a conditional block on `src[0]`; closed by ENDIF.
    IF,
    ENDIF,
}

impl Ops {
    /// Every elementwise arithmetic op, in a fixed order.
    pub const ALU: &'static [Ops] = &[
        Ops::NEG,
        Ops::RECIP,
        Ops::SQRT,
        Ops::EXP2,
        Ops::LOG2,
        Ops::SIN,
        Ops::TRUNC,
        Ops::ADD,
        Ops::SUB,
        Ops::MUL,
        Ops::FDIV,
        Ops::IDIV,
        Ops::MOD,
        Ops::MAX,
        Ops::CMPLT,
        Ops::CMPNE,
        Ops::CMPEQ,
        Ops::AND,
        Ops::OR,
        Ops::XOR,
        Ops::SHL,
        Ops::SHR,
        Ops::WHERE,
        Ops::MULACC,
    ];

    pub fn is_unary(self) -> bool {
        use Ops::*;
        matches!(self, NEG | RECIP | SQRT | EXP2 | LOG2 | SIN | TRUNC)
    }
    pub fn is_binary(self) -> bool {
        use Ops::*;
        matches!(self, ADD | SUB | MUL | FDIV | IDIV | MOD | MAX | CMPLT | CMPNE | CMPEQ | AND | OR | XOR | SHL | SHR)
    }
    pub fn is_ternary(self) -> bool {
        matches!(self, Ops::WHERE | Ops::MULACC)
    }
    /// Any elementwise arithmetic op (unary, binary or ternary).
    pub fn is_alu(self) -> bool {
        self.is_unary() || self.is_binary() || self.is_ternary()
    }
    pub fn is_movement(self) -> bool {
        use Ops::*;
        matches!(self, RESHAPE | PERMUTE | EXPAND | PAD | SHRINK | FLIP)
    }
    pub fn is_comparison(self) -> bool {
        matches!(self, Ops::CMPLT | Ops::CMPNE | Ops::CMPEQ)
    }
    /// `a op b == b op a`.
    pub fn is_commutative(self) -> bool {
        use Ops::*;
        matches!(self, ADD | MUL | MAX | CMPNE | CMPEQ | AND | OR | XOR)
    }
    /// Identity element of a reduce op over `dtype` (0 for ADD, 1 for MUL, lowest for MAX).
    /// The float sum's +0.0 is PyTorch's start value: a sum of -0.0s is +0.0.
    pub fn reduce_identity(self, dtype: crate::DType) -> crate::ConstValue {
        use crate::ConstValue;
        match self {
            Ops::ADD => ConstValue::Int(0).cast(dtype),
            Ops::MUL => ConstValue::Int(1).cast(dtype),
            Ops::MAX => {
                if dtype.is_float() {
                    ConstValue::Float(f64::NEG_INFINITY)
                } else if dtype.is_bool() {
                    ConstValue::Bool(false)
                } else {
                    ConstValue::Int(dtype.int_range().0 as i64)
                }
            }
            _ => panic!("{self:?} is not a reduce op"),
        }
    }
}

/// What a kernel loop range is used for. Optimizations split ranges and retype the parts.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum AxisType {
    /// An output axis run as a plain loop (CPU) or a global index (GPU).
    Global,
    /// An output axis split across the threads of a CPU thread pool.
    Thread,
    /// An output axis mapped to work-group local indices (GPU).
    Local,
    /// A reduce axis run as a plain loop.
    Reduce,
    /// A reduce axis split across a work group, combined in local memory (GPU).
    Group,
    /// An output axis turned into vector lanes / register tile.
    Upcast,
    /// A reduce axis unrolled into vector lanes.
    Unroll,
}

impl AxisType {
    pub fn is_reduce(self) -> bool {
        matches!(self, AxisType::Reduce | AxisType::Group | AxisType::Unroll)
    }
    /// Letter used in kernel names and DEBUG=3 output.
    pub fn letter(self) -> char {
        match self {
            AxisType::Global => 'g',
            AxisType::Thread => 't',
            AxisType::Local => 'l',
            AxisType::Reduce => 'r',
            AxisType::Group => 'G',
            AxisType::Upcast => 'u',
            AxisType::Unroll => 'U',
        }
    }
}

impl fmt::Display for Ops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
