//! A loaded CUDA kernel and its launch.

use super::memory::CudaMemory;
use crate::error::{Error, Result};
use crate::renderer::ProgramSpec;
use crate::runtime::backend::{DeviceMemory, Program};
use crate::runtime::gpu_launch::{grid_and_block, value_slots, var_bytes, Limits};
use cudarc::driver::{result as drv, sys, CudaContext, CudaFunction};
use std::ffi::c_void;
use std::sync::Arc;

/// A loaded kernel with its launch geometry.
pub struct CudaProgram {
    pub(super) device: String,
    pub(super) name: String,
    pub(super) ctx: Arc<CudaContext>,
    // Holds the module, so the function stays valid while the program lives.
    pub(super) func: Arc<CudaFunction>,
    pub(super) grid: [u32; 3],
    pub(super) block: [u32; 3],
    /// The schedule's buffer numbers the kernel takes, in parameter order.
    pub(super) buffer_params: Vec<usize>,
    /// Byte size of each variable parameter, in argument order.
    pub(super) var_bytes: Vec<usize>,
}

/// A CUDA event destroyed when dropped.
struct Event(sys::CUevent);

impl Event {
    fn new() -> std::result::Result<Event, drv::DriverError> {
        drv::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map(Event)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by event::create and destroyed only here.
        let _ = unsafe { drv::event::destroy(self.0) };
    }
}

impl CudaProgram {
    /// A program for `spec` around the loaded `func`, with the spec's launch geometry
    /// (checked against the device's limits).
    pub(super) fn new(
        device: &str,
        ctx: &Arc<CudaContext>,
        limits: Limits,
        spec: &ProgramSpec,
        func: Arc<CudaFunction>,
    ) -> Result<CudaProgram> {
        let (grid, block) = grid_and_block(device, spec, limits)?;
        Ok(CudaProgram {
            device: device.to_string(),
            name: spec.name.clone(),
            ctx: ctx.clone(),
            func,
            grid,
            block,
            buffer_params: spec.buffer_params(),
            var_bytes: var_bytes(spec),
        })
    }

    fn fail(&self, message: String) -> Error {
        Error::Launch { device: self.device.clone(), kernel: self.name.clone(), message }
    }
}

impl Program for CudaProgram {
    fn launch(&self, bufs: &[&DeviceMemory], vals: &[i64], wait: bool) -> Result<f64> {
        let needed = self.buffer_params.last().map_or(0, |&k| k + 1);
        if bufs.len() < needed || vals.len() != self.var_bytes.len() {
            return Err(self.fail(format!(
                "{} buffers and {} values given, the kernel takes {needed} and {}",
                bufs.len(),
                vals.len(),
                self.var_bytes.len()
            )));
        }
        if self.grid.contains(&0) {
            return Ok(0.0);
        }
        let ptrs: Vec<sys::CUdeviceptr> =
            self.buffer_params.iter().map(|&k| bufs[k].downcast::<CudaMemory>().ptr).collect();
        let slots = value_slots(vals, &self.var_bytes);
        let mut params: Vec<*mut c_void> = ptrs
            .iter()
            .map(|p| p as *const sys::CUdeviceptr as *mut c_void)
            .chain(slots.iter().map(|s| s.as_ptr() as *mut c_void))
            .collect();
        let err = |what: &str, e: drv::DriverError| self.fail(format!("{what}: {e}"));
        self.ctx.bind_to_thread().map_err(|e| err("binding the context", e))?;
        let events = if wait {
            let (start, end) = (Event::new(), Event::new());
            Some((start.map_err(|e| err("cuEventCreate", e))?, end.map_err(|e| err("cuEventCreate", e))?))
        } else {
            None
        };
        let stream: sys::CUstream = std::ptr::null_mut();
        if let Some((start, _)) = &events {
            // SAFETY: a live event of this context, recorded on the legacy default stream.
            unsafe { drv::event::record(start.0, stream) }.map_err(|e| err("cuEventRecord", e))?;
        }
        let (g, b) = (self.grid, self.block);
        // SAFETY: `func` is a kernel of a module kept loaded by `self.func`; `params` holds one
        // pointer per kernel parameter in signature order (buffers as device pointers from this
        // context, then the variables with the byte size of their C type), and the pointed-to
        // `ptrs` and `slots` live until cuLaunchKernel returns (it copies the values). The
        // kernel stays inside the buffers the scheduler sized for it, and the grid and block
        // were checked against the device limits when the program was made.
        unsafe {
            drv::launch_kernel(self.func.cu_function(), (g[0], g[1], g[2]), (b[0], b[1], b[2]), 0, stream, &mut params)
        }
        .map_err(|e| err("cuLaunchKernel", e))?;
        match events {
            Some((start, end)) => {
                // SAFETY: a live event of this context, recorded after the launch on its stream.
                unsafe { drv::event::record(end.0, stream) }.map_err(|e| err("cuEventRecord", e))?;
                // SAFETY: a live, recorded event; waiting has no other precondition.
                unsafe { drv::event::synchronize(end.0) }.map_err(|e| err("running the kernel", e))?;
                // SAFETY: both events are live, recorded on the same stream, and `end` is done.
                let ms = unsafe { drv::event::elapsed(start.0, end.0) }.map_err(|e| err("cuEventElapsedTime", e))?;
                Ok(ms as f64 / 1e3)
            }
            None => Ok(0.0),
        }
    }
}
