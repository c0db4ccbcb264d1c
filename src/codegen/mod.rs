//! Codegen: kernel AST → optimized, lowered, linearized program.

pub(crate) mod collapse;
pub(crate) mod expand;
pub(crate) mod gpu;
pub(crate) mod heuristic;
pub(crate) mod kernel;
pub(crate) mod kernel_ops;
pub(crate) mod linearize;
pub(crate) mod lower;
pub mod opts;
pub mod passes;
pub(crate) mod shared_loops;
pub(crate) mod symbolic_ranges;
mod transcendental;
pub(crate) mod vector_rules;
pub(crate) mod vectorize;

pub use crate::renderer::ProgramSpec;
pub use kernel::{get_program, heuristic_opts, kernel_name, prepare, try_program, MAX_PROGRAM_OPS};
