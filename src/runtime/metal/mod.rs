//! Metal (feature `metal`, macOS only): renders MSL (`renderer::cstyle::metal_dialect`),
//! compiles it with the Metal framework (fast math off, so NaN and infinities keep their
//! meaning), and runs one compute pipeline per kernel on one command queue, in submission order.
//! Buffers are shared (unified) memory: copies are `memcpy` after the queue has finished the
//! work before them.
//!
//! Built and linted for macOS from Linux in CI (`cargo clippy --target aarch64-apple-darwin
//! --features metal`); never run on a Mac yet. On other systems the feature builds nothing and
//! `DEV=METAL` is an error saying it needs macOS.
//!
//! The parts: `device` (the `Backend`), `memory`, `program` (a pipeline and its launch).

mod device;
mod memory;
mod program;

pub use device::{open, MetalDevice};
pub use memory::MetalMemory;
pub use program::MetalProgram;
