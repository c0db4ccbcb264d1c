//! The backend contract: what a device supplies (memory, a compiler, programs, a renderer).

use crate::error::{Error, Result};
use crate::renderer::ProgramSpec;
use crate::renderer::Renderer;
use std::any::Any;
use std::sync::Arc;

/// Device memory, type-erased: each device downcasts to its own type (`HostMemory` on CPU).
pub struct DeviceMemory {
    pub bytes: usize,
    pub inner: Box<dyn Any + Send + Sync>,
}

impl DeviceMemory {
    pub fn downcast<T: 'static>(&self) -> &T {
        self.inner.downcast_ref::<T>().expect("device memory of another device")
    }
}

/// A compiled kernel, ready to launch.
pub trait Program: std::any::Any + Send + Sync {
    /// Runs the kernel on `bufs` (in DEFINE_GLOBAL order) with the values of its symbolic
    /// variables; returns the time it took in seconds when `wait` is set (else 0).
    fn launch(&self, bufs: &[&DeviceMemory], vals: &[i64], wait: bool) -> Result<f64>;
}

/// A device: allocator, compiler, launcher and renderer.
pub trait Backend: Send + Sync + 'static {
    /// Canonical name (`CPU`, `INTERP`, `CL:0`).
    fn name(&self) -> &str;
    fn alloc(&self, bytes: usize) -> Result<DeviceMemory>;
    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()>;
    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()>;
    /// The code generator's view of this device.
    fn renderer(&self) -> &dyn Renderer;
    /// Compiles several kernels at once (in one compiler run or in parallel).
    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>>;
    /// Who compiles this device's kernels (compiler, version, flags, target), for devices whose
    /// compiler can be wrong: its kernels are checked against the interpreter once per identity
    /// (`tensor::selftest`). `None` for devices that compile nothing.
    fn compiler_identity(&self) -> Option<String> {
        None
    }
    /// How many flag sets (rungs, safest last) the compiler can fall back to when it fails the
    /// self-test; 1 when there is nothing to fall back to.
    fn compiler_rungs(&self) -> usize {
        1
    }
    /// Compiles from now on with rung `rung` (< `compiler_rungs()`); `compiler_identity` names it.
    fn set_compiler_rung(&self, _rung: usize) {}
    /// Waits for all launched work.
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}

/// The `N` of a device name `KIND:N` (0 without one), for devices that have several.
#[cfg_attr(not(any(feature = "opencl", feature = "cuda", feature = "hip")), allow(dead_code))]
pub fn device_index(name: &str) -> Result<usize> {
    match name.split_once(':') {
        None => Ok(0),
        Some((kind, n)) => n.parse().map_err(|_| Error::DeviceUnavailable {
            device: name.to_string(),
            reason: format!("`{n}` is not a device number ({kind}:0, {kind}:1, ...)"),
        }),
    }
}
