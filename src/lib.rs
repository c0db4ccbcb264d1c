//! ferrograd: a hackable deep-learning stack in Rust, in the spirit of tinygrad.
//!
//! Tensors are lazy: operations build a graph of [`UOp`]s; `realize()` (or reading data)
//! schedules it into fused kernels, generates code for the device, compiles and runs it.

// Lets `#[derive(Module)]` (which names `::ferrograd::...`) work inside this crate too.
extern crate self as ferrograd;

pub mod codegen;
pub mod compiler_log;
pub mod device;
pub mod distributed;
pub mod engine;
pub mod error;
pub mod flags;
pub mod func;
pub mod gradient;
pub mod helpers;
pub mod jit;
pub mod models;
pub mod nn;
#[cfg(feature = "onnx")]
pub mod onnx;
pub mod renderer;
pub mod runtime;
pub mod schedule;
pub mod tensor;
pub mod uop;
pub mod viz;

pub use device::Device;
pub use error::{Error, Result};
pub use jit::TinyJit;
pub use tensor::Tensor;
pub use uop::{ConstValue, DType, Dim, Element, Ops, UOp, Variable};
