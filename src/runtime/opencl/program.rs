//! OpenCL memory, built kernels and their launch.

use crate::error::{Error, Result};
use crate::renderer::ProgramSpec;
use crate::runtime::backend::{DeviceMemory, Program};
use crate::uop::{Arg, DType, Ops, Scalar};
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::Device as ClDeviceInfo;
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem};
use opencl3::program::Program as ClProgramObj;
use opencl3::types::{cl_mem, CL_BLOCKING};
use std::sync::{Arc, Mutex};

/// One allocation: a read-write OpenCL buffer (at least one byte: OpenCL has no empty buffers).
pub struct ClMemory {
    pub(super) buf: Buffer<u8>,
}

impl ClMemory {
    pub(super) fn mem(&self) -> cl_mem {
        self.buf.get()
    }

    /// Copies `src` (exactly the buffer's size, non-empty: the caller checks) into the buffer
    /// and waits for it.
    pub(super) fn write(&self, queue: &CommandQueue, src: &[u8]) -> std::result::Result<(), ClError> {
        // SAFETY: a blocking write of `src.len()` bytes, which fit in the buffer (the caller
        // checked the size); `src` stays borrowed until the call returns, after the copy is done.
        let event = unsafe {
            opencl3::command_queue::enqueue_write_buffer(
                queue.get(),
                self.mem(),
                CL_BLOCKING,
                0,
                src.len(),
                src.as_ptr().cast(),
                0,
                std::ptr::null(),
            )
        }?;
        // The copy is done; the event is released when dropped.
        drop(Event::new(event));
        Ok(())
    }

    /// Copies the buffer (exactly `dst.len()` bytes, non-empty: the caller checks) into `dst`,
    /// after every kernel launched before it (the queue is in order).
    pub(super) fn read(&self, queue: &CommandQueue, dst: &mut [u8]) -> std::result::Result<(), ClError> {
        // SAFETY: a blocking read of `dst.len()` bytes (the buffer's size, checked by the caller)
        // into `dst`, which is exclusively borrowed until the call returns, after the copy is done.
        let event = unsafe {
            opencl3::command_queue::enqueue_read_buffer(
                queue.get(),
                self.mem(),
                CL_BLOCKING,
                0,
                dst.len(),
                dst.as_mut_ptr().cast(),
                0,
                std::ptr::null(),
            )
        }?;
        drop(Event::new(event));
        Ok(())
    }
}

/// Everything the device and its programs share (the queue is in order: launches and copies
/// run in submission order).
pub(super) struct ClShared {
    pub(super) name: String,
    pub(super) device: ClDeviceInfo,
    pub(super) context: Context,
    pub(super) queue: CommandQueue,
}

/// How a kernel's arguments are laid out: buffer arguments (the DEFINE_GLOBAL index each one
/// is), then symbolic variables (their dtypes), in the renderer's parameter order.
#[derive(Clone)]
pub(super) struct ArgLayout {
    pub(super) bufs: Vec<usize>,
    pub(super) vars: Vec<DType>,
}

impl ArgLayout {
    pub(super) fn of(spec: &ProgramSpec) -> ArgLayout {
        let vars: Vec<DType> = spec
            .uops
            .iter()
            .filter(|u| u.op() == Ops::DEFINE_VAR && matches!(u.arg(), Arg::Var(..)))
            .map(|u| u.dtype())
            .collect();
        ArgLayout { bufs: spec.buffer_params(), vars }
    }
}

/// A built kernel, shared by every spec with the same source. `clSetKernelArg` is not thread
/// safe, so setting arguments and enqueueing happen under the lock.
pub(super) struct BuiltKernel {
    pub(super) kernel: Mutex<Kernel>,
    // Keeps the program (shared by the kernels built together) alive while the kernel is.
    pub(super) _program: Arc<ClProgramObj>,
}

/// A kernel with its launch geometry.
pub struct ClProgram {
    pub(super) name: String,
    pub(super) shared: Arc<ClShared>,
    pub(super) built: Arc<BuiltKernel>,
    pub(super) layout: ArgLayout,
    pub(super) global: [usize; 3],
    pub(super) local: Option<[usize; 3]>,
}

impl ClProgram {
    fn launch_err(&self, message: String) -> Error {
        Error::Launch { device: self.shared.name.clone(), kernel: self.name.clone(), message }
    }
}

impl Program for ClProgram {
    fn launch(&self, bufs: &[&DeviceMemory], vals: &[i64], wait: bool) -> Result<f64> {
        if vals.len() != self.layout.vars.len() {
            return Err(self.launch_err(format!(
                "{} symbolic values given, the kernel takes {}",
                vals.len(),
                self.layout.vars.len()
            )));
        }
        let mems: Vec<cl_mem> = self
            .layout
            .bufs
            .iter()
            .map(|&i| {
                let m = bufs
                    .get(i)
                    .ok_or_else(|| self.launch_err(format!("buffer {i} missing ({} buffers given)", bufs.len())))?;
                let m = m.inner.downcast_ref::<ClMemory>().ok_or_else(|| {
                    self.launch_err(format!("buffer {i} is not OpenCL memory of {}", self.shared.name))
                })?;
                Ok(m.mem())
            })
            .collect::<Result<_>>()?;
        let start = wait.then(std::time::Instant::now);
        let event = {
            let kernel = self.built.kernel.lock().unwrap_or_else(|e| e.into_inner());
            let fail = |what: &str, e: ClError| self.launch_err(format!("{what}: {e}"));
            for (k, mem) in mems.iter().enumerate() {
                // SAFETY: argument k of the rendered kernel is the `__global` pointer of this
                // DEFINE_GLOBAL (the renderer orders buffer parameters by index); `mem` is a live
                // buffer of this context, and the driver retains it for the launch.
                unsafe { kernel.set_arg(k as u32, mem) }.map_err(|e| fail("setting a buffer argument", e))?;
            }
            for (j, (&v, dt)) in vals.iter().zip(&self.layout.vars).enumerate() {
                let k = (mems.len() + j) as u32;
                // SAFETY: argument k is the scalar parameter of the j-th DEFINE_VAR, declared with
                // the OpenCL type of `dt`; each arm passes a value of exactly that size.
                let r = unsafe {
                    match dt.scalar {
                        Scalar::I64 | Scalar::U64 => kernel.set_arg(k, &v),
                        Scalar::I16 | Scalar::U16 => kernel.set_arg(k, &(v as i16)),
                        Scalar::I8 | Scalar::U8 | Scalar::Bool => kernel.set_arg(k, &(v as i8)),
                        _ => kernel.set_arg(k, &(v as i32)),
                    }
                };
                r.map_err(|e| fail("setting a variable argument", e))?;
            }
            let local = self.local.as_ref().map_or(std::ptr::null(), |l| l.as_ptr());
            // SAFETY: every argument is set above; `global` and `local` point to 3 sizes each
            // (or local is null: the driver chooses) and outlive the call, which copies them.
            unsafe {
                self.shared.queue.enqueue_nd_range_kernel(
                    kernel.get(),
                    3,
                    std::ptr::null(),
                    self.global.as_ptr(),
                    local,
                    &[],
                )
            }
            .map_err(|e| fail("enqueueing the kernel", e))?
        };
        let Some(start) = start else { return Ok(0.0) };
        event.wait().map_err(|e| self.launch_err(format!("waiting for the kernel: {e}")))?;
        // The device's own timestamps when the queue profiles; otherwise the host's clock.
        match (event.profiling_command_start(), event.profiling_command_end()) {
            (Ok(s), Ok(e)) if e >= s && s > 0 => Ok((e - s) as f64 * 1e-9),
            _ => Ok(start.elapsed().as_secs_f64()),
        }
    }
}
