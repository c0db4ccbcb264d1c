//! Codegen: kernel AST → optimized, lowered, linearized program.

pub mod program;

pub use program::ProgramSpec;
