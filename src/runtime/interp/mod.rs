//! INTERP: runs linear programs directly in Rust (the executable specification).
//!
//! `compile` decodes a linear program once: every value-producing UOp gets a slot (one `u64`
//! per vector lane) in a flat register file, every op becomes an `Inst` holding slot numbers
//! and a function pointer already specialized for its dtype, and loops and IF blocks become
//! jumps to instruction numbers. `launch` then runs the instructions with no hashing and no
//! dtype dispatch beyond one indirect call per lane.
//!
//! A slot holds a value in its canonical form (see `Lane`): integers sign- or zero-extended
//! to 64 bits, bools as 0/1, floats as their IEEE bits. Every load and store is bounds-checked.
//!
//! The parts:
//! - `device`: the device (host memory), its renderer and the program listing;
//! - `program`: the decoded form of a kernel, `Inst` and `InterpProgram`;
//! - `compile`: decoding linear UOps into instructions, slots and jump targets;
//! - `exec`: the run loop and bounds-checked memory access;
//! - `lane`: how each scalar dtype sits in a slot, and its arithmetic;
//! - `alu`: the per-dtype ALU, cast and constant functions the instructions call.

mod alu;
mod compile;
mod device;
mod exec;
mod lane;
mod program;
#[cfg(test)]
mod tests;

pub use device::{open, InterpDevice, InterpRenderer};
pub use program::InterpProgram;

const DEVICE: &str = "INTERP";
