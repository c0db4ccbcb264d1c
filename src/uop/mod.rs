//! The IR: one node type for the tensor graph, kernels and programs.

pub mod dtype;
pub mod node;
pub mod node_table;
pub mod ops;
pub mod pattern;
pub mod print;
pub mod range;
pub(crate) mod shape;
pub mod symbolic;
#[allow(clippy::module_inception)]
pub mod uop;

pub use dtype::{ConstValue, DType, Element, Scalar};
pub use node::{Arg, BufferHandle, BufferObj, FxHashMap, FxHashSet, SpecialKind, UOp, WeakUOp};
pub use ops::{AxisType, Ops};
