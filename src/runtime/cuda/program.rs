//! A loaded CUDA kernel and its launch.

use super::memory::CudaMemory;
use crate::error::{Error, Result};
use crate::renderer::ProgramSpec;
use crate::runtime::backend::{DeviceMemory, Program};
use crate::uop::Ops;
use cudarc::driver::{result as drv, sys, CudaContext, CudaFunction};
use std::ffi::c_void;
use std::sync::Arc;

/// Device limits that decide whether a launch geometry is valid.
#[derive(Clone, Copy)]
pub(super) struct Limits {
    pub(super) block: [u32; 3],
    pub(super) block_total: u32,
    pub(super) grid: [u32; 3],
}

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
        let global = spec.global_size;
        let local = spec.local_size.unwrap_or([1, 1, 1]);
        let fail = |message: String| Error::Launch { device: device.to_string(), kernel: spec.name.clone(), message };
        let mut grid = [0u32; 3];
        let mut block = [0u32; 3];
        for d in 0..3 {
            let (g, l) = (global[d], local[d].max(1));
            if g % l != 0 {
                return Err(fail(format!("global size {global:?} is not a multiple of local size {local:?}")));
            }
            if l > limits.block[d] as usize || g / l > limits.grid[d] as usize {
                return Err(fail(format!("launch {global:?}/{local:?} exceeds the device limits")));
            }
            grid[d] = (g / l) as u32;
            block[d] = l as u32;
        }
        if block.iter().map(|&b| b as u64).product::<u64>() > limits.block_total as u64 {
            return Err(fail(format!("local size {local:?} exceeds {} threads per block", limits.block_total)));
        }
        let var_bytes = spec.uops.iter().filter(|u| u.op() == Ops::DEFINE_VAR).map(|u| u.dtype().itemsize()).collect();
        Ok(CudaProgram {
            device: device.to_string(),
            name: spec.name.clone(),
            ctx: ctx.clone(),
            func,
            grid,
            block,
            buffer_params: spec.buffer_params(),
            var_bytes,
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
        // Each value in an 8-byte slot; the kernel reads its parameter's size from the front.
        let slots: Vec<[u8; 8]> = vals
            .iter()
            .zip(&self.var_bytes)
            .map(|(&v, &n)| {
                let mut slot = [0u8; 8];
                match n {
                    1 => slot[..1].copy_from_slice(&(v as i8).to_ne_bytes()),
                    2 => slot[..2].copy_from_slice(&(v as i16).to_ne_bytes()),
                    4 => slot[..4].copy_from_slice(&(v as i32).to_ne_bytes()),
                    _ => slot.copy_from_slice(&v.to_ne_bytes()),
                }
                slot
            })
            .collect();
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
