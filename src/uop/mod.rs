//! The IR: one node type for the tensor graph, kernels and programs.

pub(crate) mod dim;
pub mod dtype;
pub(crate) mod node;
pub(crate) mod node_table;
pub(crate) mod ops;
pub mod pattern;
pub mod print;
pub(crate) mod range;
pub(crate) mod shape;
pub mod symbolic;
#[allow(clippy::module_inception)]
pub(crate) mod uop;

pub use dim::Variable;
pub use dtype::{ConstValue, DType, Element, Scalar};
pub use node::{live_uop_count, Arg, BufferHandle, BufferObj, Dim, FxHashMap, FxHashSet, SpecialKind, UOp, WeakUOp};
pub use ops::{AxisType, Ops};
