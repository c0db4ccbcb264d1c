//! Codegen: kernel AST → optimized, lowered, linearized program.

pub mod collapse;
pub mod expand;
pub mod gpu;
pub mod heuristic;
pub mod kernel;
pub mod kernel_ops;
pub mod linearize;
pub mod lower;
pub mod opts;
pub mod passes;
pub mod vectorize;

pub use crate::renderer::ProgramSpec;
pub use kernel::{get_program, heuristic_opts, prepare, try_program};
