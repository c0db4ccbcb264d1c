//! A loaded AMD GPU kernel and its launch.

use super::api::{Hip, Ptr};
use super::memory::HipMemory;
use crate::error::{Error, Result};
use crate::renderer::ProgramSpec;
use crate::runtime::backend::{DeviceMemory, Program};
use crate::runtime::gpu_launch::{grid_and_block, value_slots, var_bytes, Limits};
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Instant;

/// A loaded code object and the kernel found in it; unloaded when the last program using it goes.
pub struct Kernel {
    pub(super) hip: &'static Hip,
    pub(super) ordinal: i32,
    /// `hipModule_t` and `hipFunction_t`, as addresses (raw pointers are not `Send`).
    pub(super) module: usize,
    pub(super) function: usize,
}

impl Drop for Kernel {
    fn drop(&mut self) {
        // SAFETY: the module was loaded on this device by hipModuleLoadData and is unloaded only
        // here, after the last program holding this kernel is gone.
        unsafe {
            (self.hip.set_device)(self.ordinal);
            (self.hip.module_unload)(self.module as Ptr);
        }
    }
}

pub struct HipProgram {
    device: String,
    name: String,
    kernel: Arc<Kernel>,
    grid: [u32; 3],
    block: [u32; 3],
    /// The schedule's buffer numbers the kernel takes, in parameter order.
    buffer_params: Vec<usize>,
    var_bytes: Vec<usize>,
}

impl HipProgram {
    pub(super) fn new(device: &str, limits: Limits, spec: &ProgramSpec, kernel: Arc<Kernel>) -> Result<HipProgram> {
        let (grid, block) = grid_and_block(device, spec, limits)?;
        Ok(HipProgram {
            device: device.to_string(),
            name: spec.name.clone(),
            kernel,
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

impl Program for HipProgram {
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
        let ptrs: Vec<usize> = self.buffer_params.iter().map(|&k| bufs[k].downcast::<HipMemory>().ptr).collect();
        let slots = value_slots(vals, &self.var_bytes);
        let mut params: Vec<*mut c_void> = ptrs
            .iter()
            .map(|p| p as *const usize as *mut c_void)
            .chain(slots.iter().map(|s| s.as_ptr() as *mut c_void))
            .collect();
        let hip = self.kernel.hip;
        // SAFETY: selecting this device for the calling thread has no other precondition.
        hip.check("hipSetDevice", unsafe { (hip.set_device)(self.kernel.ordinal) }).map_err(|e| self.fail(e))?;
        let (g, b) = (self.grid, self.block);
        let start = Instant::now();
        // SAFETY: the function belongs to a module kept loaded by `self.kernel`; `params` holds one
        // pointer per kernel parameter in signature order (buffers as device addresses from this
        // device, then the variables with their C type's size), and the pointed-to `ptrs` and
        // `slots` live until the call returns (it copies the values). The kernel stays inside the
        // buffers the scheduler sized for it, and grid and block were checked against the limits.
        let status = unsafe {
            (hip.launch)(
                self.kernel.function as Ptr,
                g[0],
                g[1],
                g[2],
                b[0],
                b[1],
                b[2],
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        hip.check("hipModuleLaunchKernel", status).map_err(|e| self.fail(e))?;
        if !wait {
            return Ok(0.0);
        }
        // Host time around launch and completion (a few microseconds more than the kernel).
        // SAFETY: waiting for the device has no preconditions.
        hip.check("running the kernel", unsafe { (hip.synchronize)() }).map_err(|e| self.fail(e))?;
        Ok(start.elapsed().as_secs_f64())
    }
}
