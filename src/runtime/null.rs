//! NULL: a device that allocates nothing, compiles nothing and runs nothing (like tinygrad's
//! NULL). Kernels are still scheduled and rendered (as C), so `DEV=NULL` shows what a graph
//! becomes without executing it, and schedule/codegen tests run anywhere. Reads return zeros.
//!
//! It is also the template for a new device: a name, memory, a renderer, a compiler, programs.

use super::backend::{Backend, DeviceMemory, Program};
use crate::error::{Error, Result};
use crate::renderer::cstyle::{c_dialect, CStyleRenderer};
use crate::renderer::{ProgramSpec, Renderer, Target};
use std::sync::Arc;

pub struct NullDevice {
    renderer: CStyleRenderer,
}

/// Opens the NULL device (the registry's opener).
pub fn open(_name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(NullDevice { renderer: CStyleRenderer::new(c_dialect(), Target::cpu("NULL")) }))
}

/// A kernel that does nothing.
struct NullProgram;

impl Program for NullProgram {
    fn launch(&self, _bufs: &[&DeviceMemory], _vals: &[i64], _wait: bool) -> Result<f64> {
        Ok(0.0)
    }
}

/// Memory of the NULL device: only its size.
struct NoStorage;

fn check_size(what: &str, buffer: usize, host: usize) -> Result<()> {
    if buffer == host {
        return Ok(());
    }
    Err(Error::Other(format!("NULL: {what} of {host} bytes for a buffer of {buffer}")))
}

impl Backend for NullDevice {
    fn name(&self) -> &str {
        "NULL"
    }
    fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        Ok(DeviceMemory { bytes, inner: Box::new(NoStorage) })
    }
    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()> {
        check_size("copy_in", dst.bytes, src.len())
    }
    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()> {
        check_size("copy_out", src.bytes, dst.len())?;
        dst.fill(0);
        Ok(())
    }
    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }
    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        Ok(specs.iter().map(|_| Arc::new(NullProgram) as Arc<dyn Program>).collect())
    }
}
