//! Codegen: kernel AST → optimized, lowered, linearized program.

pub mod collapse;
pub mod expand;
pub mod gpu;
pub mod heuristic;
pub mod kernel;
pub mod linearize;
pub mod lower;
pub mod opts;
pub mod program;
pub mod vectorize;

pub use kernel::{get_program, prepare, try_program};
pub use program::ProgramSpec;
