//! ferrograd: a hackable deep-learning stack in Rust, in the spirit of tinygrad.

pub mod codegen;
pub mod error;
pub mod renderer;
pub mod runtime;
pub mod uop;

pub use error::{Error, Result};
pub use uop::{ConstValue, DType, Element, Ops, UOp};
