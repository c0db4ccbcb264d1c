//! Device graphs: a captured list of kernel launches on one device, resolved once and replayed
//! as one unit (tinygrad's CUDA graphs, Metal ICBs, HCQ queues). TinyJit builds one per run of
//! consecutive kernels on a device that has graphs (`graph_build.rs`) and, on every replay, points the launches
//! at that call's inputs and fresh outputs before running it: no schedule, no lookups.

use super::buffer::Buffer;
use super::Program;
use crate::error::{Error, Result};
use std::sync::Arc;

/// One launch of a graph as captured: its program, buffers (DEFINE_GLOBAL order) and the
/// values of its variables (the kernel's order).
pub struct GraphLaunch<'a> {
    pub program: &'a Arc<dyn Program>,
    pub bufs: &'a [Arc<Buffer>],
    pub vals: Vec<i64>,
}

/// A device's resolved launch list. It keeps every buffer it points at alive, so running it
/// never reads freed memory.
pub trait DeviceGraph {
    /// Points argument `arg` of launch `i` at `buf` (a replay's own input or output).
    fn set_buffer(&mut self, i: usize, arg: usize, buf: &Arc<Buffer>) -> Result<()>;
    /// Sets the value of variable `k` (the kernel's order) of launch `i`.
    fn set_value(&mut self, i: usize, k: usize, v: i64);
    /// Runs the launches in order, as a single launch would (a GPU's may still be running
    /// when it returns, ordered before later work on the device).
    fn run(&mut self) -> Result<()>;
}

/// The check every graph's `set_buffer` makes: a replacement must hold at least as many bytes
/// as the buffer the launch was captured with (its kernel indexes that far).
pub(crate) fn check_replacement(device: &str, kernel: &str, arg: usize, held: &Buffer, new: &Buffer) -> Result<()> {
    if new.nbytes() < held.nbytes() {
        return Err(Error::Launch {
            device: device.to_string(),
            kernel: kernel.to_string(),
            message: format!(
                "argument {arg} of a graph launch replaced by {} bytes, it had {}",
                new.nbytes(),
                held.nbytes()
            ),
        });
    }
    Ok(())
}
