//! OpenCL (`DEV=CL`, `CL:1`, …): renders OpenCL C, builds it with the driver, launches one work
//! item per global index. `opencl3` loads `libOpenCL.so.1` at run time, so building needs no
//! OpenCL SDK, and a machine without a loader, a driver (ICD) or a device gets
//! `Error::DeviceUnavailable` saying what to install. CI runs this device on PoCL (a CPU
//! OpenCL); the same code drives GPU drivers.
//!
//! Device `CL:n` is the n-th device over all platforms, in platform order. Programs are cached
//! by source hash in the shared `compile_cache`; the uncached kernels of one compile call are
//! built in parallel (the driver keeps its own on-disk cache; PoCL's is under `POCL_CACHE_DIR`).

use super::backend::{Backend, DeviceMemory, Program};
use super::compile_cache::{CompileCache, Todo};
use crate::error::{Error, Result};
use crate::helpers::{debug_level, stable_hash_hex};
use crate::renderer::cstyle::{opencl_dialect, CStyleRenderer};
use crate::renderer::ProgramSpec;
use crate::renderer::{Renderer, Target};
use crate::uop::{Arg, DType, Ops, Scalar};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device as ClDeviceInfo, CL_DEVICE_TYPE_ALL};
use opencl3::error_codes::{
    ClError, CL_BUILD_PROGRAM_FAILURE, CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_FUNCTION_NOT_AVAILABLE,
    DLOPEN_RUNTIME_LOAD_FAILED,
};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program as ClProgramObj;
use opencl3::types::{cl_device_id, cl_mem, CL_BLOCKING};
use std::sync::{Arc, Mutex};

const INSTALL_HINT: &str = "install an OpenCL driver: on Debian/Ubuntu `apt-get install ocl-icd-libopencl1 \
                            pocl-opencl-icd` for the CPU (PoCL), or your GPU vendor's OpenCL driver; \
                            `clinfo -l` lists what OpenCL sees";

/// Why `CL` cannot open, from the error of the first OpenCL call.
fn unavailable(device: &str, what: &str, e: ClError) -> Error {
    let reason = match e.0 {
        DLOPEN_RUNTIME_LOAD_FAILED => format!(
            "the OpenCL loader libOpenCL.so.1 could not be loaded ({e}); {INSTALL_HINT} \
             (or set OPENCL_DYLIB_PATH to the library)"
        ),
        DLOPEN_FUNCTION_NOT_AVAILABLE => {
            format!("the OpenCL loader lacks a function ferrograd needs ({e}); install a newer ocl-icd-libopencl1")
        }
        CL_PLATFORM_NOT_FOUND_KHR => format!("no OpenCL platform is installed ({e}); {INSTALL_HINT}"),
        _ => format!("{what} failed: {e}; {INSTALL_HINT}"),
    };
    Error::DeviceUnavailable { device: device.to_string(), reason }
}

/// One allocation: a read-write OpenCL buffer (at least one byte: OpenCL has no empty buffers).
pub struct ClMemory {
    buf: Buffer<u8>,
}

impl ClMemory {
    fn mem(&self) -> cl_mem {
        self.buf.get()
    }
}

/// Everything the device and its programs share (the queue is in order: launches and copies
/// run in submission order).
struct ClShared {
    name: String,
    device: ClDeviceInfo,
    context: Context,
    queue: CommandQueue,
}

/// How a kernel's arguments are laid out: buffer arguments (the DEFINE_GLOBAL index each one
/// is), then symbolic variables (their dtypes), in the renderer's parameter order.
#[derive(Clone)]
struct ArgLayout {
    bufs: Vec<usize>,
    vars: Vec<DType>,
}

impl ArgLayout {
    fn of(spec: &ProgramSpec) -> ArgLayout {
        let mut bufs: Vec<usize> = Vec::new();
        let mut vars: Vec<DType> = Vec::new();
        for u in &spec.uops {
            match u.op() {
                Ops::DEFINE_GLOBAL => bufs.push(u.arg_int() as usize),
                Ops::DEFINE_VAR if matches!(u.arg(), Arg::Var(..)) => vars.push(u.dtype()),
                _ => {}
            }
        }
        bufs.sort_unstable();
        bufs.dedup();
        // A spec given only as source: buffers 0..buf_count.
        if spec.uops.is_empty() {
            bufs = (0..spec.buf_count).collect();
        }
        ArgLayout { bufs, vars }
    }
}

/// A built kernel, shared by every spec with the same source. `clSetKernelArg` is not thread
/// safe, so setting arguments and enqueueing happen under the lock.
struct BuiltKernel {
    kernel: Mutex<Kernel>,
    // Keeps the program alive while the kernel is.
    _program: ClProgramObj,
}

/// A kernel with its launch geometry.
pub struct ClProgram {
    name: String,
    shared: Arc<ClShared>,
    built: Arc<BuiltKernel>,
    layout: ArgLayout,
    global: [usize; 3],
    local: Option<[usize; 3]>,
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

pub struct ClDevice {
    shared: Arc<ClShared>,
    renderer: CStyleRenderer,
    options: String,
    max_alloc: u64,
    cache: CompileCache<BuiltKernel>,
}

/// Opens `CL` or `CL:N` (the registry's opener).
pub fn open(name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(ClDevice::open(name, super::backend::device_index(name)?)?))
}

impl ClDevice {
    /// Opens device `index` (over all platforms). `name` is the canonical device name (`CL`,
    /// `CL:1`); every failure is `Error::DeviceUnavailable`.
    pub fn open(name: &str, index: usize) -> Result<ClDevice> {
        let platforms = get_platforms().map_err(|e| unavailable(name, "listing OpenCL platforms", e))?;
        let mut devices: Vec<(cl_device_id, String)> = Vec::new();
        for p in &platforms {
            // A platform without devices answers CL_DEVICE_NOT_FOUND; skip it.
            if let Ok(ids) = p.get_devices(CL_DEVICE_TYPE_ALL) {
                let pname = p.name().unwrap_or_default();
                devices.extend(ids.into_iter().map(|id| (id, pname.clone())));
            }
        }
        let Some(&(id, ref platform)) = devices.get(index) else {
            let reason = if devices.is_empty() {
                format!("OpenCL found no device on {} platform(s); {INSTALL_HINT}", platforms.len())
            } else {
                let names: Vec<String> = devices
                    .iter()
                    .enumerate()
                    .map(|(i, (d, p))| format!("CL:{i} {} ({p})", ClDeviceInfo::new(*d).name().unwrap_or_default()))
                    .collect();
                format!("there is no OpenCL device {index}; devices: {}", names.join(", "))
            };
            return Err(Error::DeviceUnavailable { device: name.to_string(), reason });
        };
        let info = ClDeviceInfo::new(id);
        let context = Context::from_device(&info).map_err(|e| unavailable(name, "creating an OpenCL context", e))?;
        let queue = CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(|e| unavailable(name, "creating an OpenCL command queue", e))?;

        let item_sizes = info.max_work_item_sizes().unwrap_or_default();
        let local_max: [usize; 3] = std::array::from_fn(|d| item_sizes.get(d).copied().unwrap_or(1).max(1));
        let extensions = info.extensions().unwrap_or_default();
        let supports_f64 = extensions.split_whitespace().any(|x| x == "cl_khr_fp64");
        // The device name and 16-bit floats computed in f32 as on the CPU; the rest is the GPU's.
        let target = Target {
            has_local: true,
            has_threads: false,
            threads: 1,
            supports_f64,
            // SPECIAL indices are `int` in the rendered source.
            global_max: [i32::MAX as usize; 3],
            local_max,
            local_max_total: info.max_work_group_size().unwrap_or(1).max(1),
            simd_bytes: 0,
            ..Target::cpu(name)
        };
        // Correctly rounded float division and sqrt where the device offers them, so results
        // match the C device (OpenCL otherwise allows 2.5 ulp / 3 ulp).
        const CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT: u64 = 1 << 7;
        let single_fp = info.single_fp_config().unwrap_or(0);
        let options = if single_fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0 {
            "-cl-fp32-correctly-rounded-divide-sqrt".to_string()
        } else {
            String::new()
        };
        let max_alloc = info.max_mem_alloc_size().unwrap_or(u64::MAX);
        if debug_level() >= 1 {
            eprintln!(
                "{name}: {} ({platform}), {}, fp64 {}",
                info.name().unwrap_or_default(),
                info.version().unwrap_or_default(),
                if supports_f64 { "yes" } else { "no" }
            );
        }
        Ok(ClDevice {
            shared: Arc::new(ClShared { name: name.to_string(), device: info, context, queue }),
            renderer: CStyleRenderer::new(opencl_dialect(), target),
            options,
            max_alloc,
            cache: CompileCache::default(),
        })
    }

    fn key(&self, src: &str) -> String {
        stable_hash_hex(&[self.options.as_bytes(), src.as_bytes()])
    }

    /// Builds one kernel's source with the driver.
    fn build(&self, spec: &ProgramSpec) -> Result<BuiltKernel> {
        let fail =
            |message: String| Error::Compile { device: self.shared.name.clone(), kernel: spec.name.clone(), message };
        let with_source = |mut message: String| {
            if debug_level() >= 1 {
                message.push_str("\nsource:\n");
                message.push_str(&spec.src);
            }
            message
        };
        let mut program = ClProgramObj::create_from_source(&self.shared.context, &spec.src)
            .map_err(|e| fail(format!("creating the program: {e}")))?;
        if let Err(e) = program.build(&[self.shared.device.id()], &self.options) {
            let log = program.get_build_log(self.shared.device.id()).unwrap_or_default();
            let what = if e.0 == CL_BUILD_PROGRAM_FAILURE {
                "the OpenCL C compiler rejected the kernel"
            } else {
                "build failed"
            };
            return Err(fail(with_source(format!("{what} ({e}):\n{}", log.trim()))));
        }
        let kernel = Kernel::create(&program, &spec.name)
            .map_err(|e| fail(with_source(format!("no kernel `{}` in the program: {e}", spec.name))))?;
        Ok(BuiltKernel { kernel: Mutex::new(kernel), _program: program })
    }

    fn memory<'a>(&self, m: &'a DeviceMemory) -> Result<&'a ClMemory> {
        m.inner
            .downcast_ref::<ClMemory>()
            .ok_or_else(|| Error::Other(format!("{}: memory of another device", self.shared.name)))
    }
}

impl Backend for ClDevice {
    fn compiler_identity(&self) -> Option<String> {
        let d = &self.shared.device;
        Some(format!(
            "OpenCL {} ({}, driver {}) {}",
            d.name().unwrap_or_default(),
            d.version().unwrap_or_default(),
            d.driver_version().unwrap_or_default(),
            self.options
        ))
    }

    fn name(&self) -> &str {
        &self.shared.name
    }

    fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        let oom = || Error::OutOfMemory { device: self.shared.name.clone(), bytes };
        if bytes as u64 > self.max_alloc {
            return Err(oom());
        }
        // SAFETY: no host pointer is passed, so the driver owns the storage; the size is non-zero.
        let buf = unsafe {
            Buffer::<u8>::create(&self.shared.context, CL_MEM_READ_WRITE, bytes.max(1), std::ptr::null_mut())
        }
        .map_err(|_| oom())?;
        Ok(DeviceMemory { bytes, inner: Box::new(ClMemory { buf }) })
    }

    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()> {
        let mem = self.memory(dst)?;
        if src.len() != dst.bytes {
            return Err(Error::Other(format!(
                "{}: copying {} bytes into a buffer of {}",
                self.shared.name,
                src.len(),
                dst.bytes
            )));
        }
        if src.is_empty() {
            return Ok(());
        }
        // SAFETY: a blocking write of `src.len()` bytes, which fit in the buffer (checked above);
        // `src` stays borrowed until the call returns, after the copy is done.
        unsafe {
            opencl3::command_queue::enqueue_write_buffer(
                self.shared.queue.get(),
                mem.mem(),
                CL_BLOCKING,
                0,
                src.len(),
                src.as_ptr().cast(),
                0,
                std::ptr::null(),
            )
        }
        // The copy is done; the event is released when dropped.
        .map(|event| drop(Event::new(event)))
        .map_err(|e| Error::Other(format!("{}: writing to device memory failed: {e}", self.shared.name)))
    }

    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()> {
        let mem = self.memory(src)?;
        if dst.len() != src.bytes {
            return Err(Error::Other(format!(
                "{}: copying a buffer of {} bytes into {}",
                self.shared.name,
                src.bytes,
                dst.len()
            )));
        }
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: a blocking read of `dst.len()` bytes (the buffer's size, checked above) into
        // `dst`, which is exclusively borrowed until the call returns, after the copy is done.
        // The in-order queue runs it after every kernel launched before.
        unsafe {
            opencl3::command_queue::enqueue_read_buffer(
                self.shared.queue.get(),
                mem.mem(),
                CL_BLOCKING,
                0,
                dst.len(),
                dst.as_mut_ptr().cast(),
                0,
                std::ptr::null(),
            )
        }
        // The copy is done; the event is released when dropped.
        .map(|event| drop(Event::new(event)))
        .map_err(|e| Error::Other(format!("{}: reading device memory failed: {e}", self.shared.name)))
    }

    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }

    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        let keys: Vec<String> = specs.iter().map(|s| self.key(&s.src)).collect();
        // The driver keeps its own disk cache; each kernel is its own program.
        let build = |group: &[Todo]| group.iter().map(|(_, spec)| self.build(spec).map(Arc::new)).collect();
        let built = self.cache.get_or_build(&keys, specs, |_, _| None, build)?;
        Ok(built
            .into_iter()
            .zip(specs)
            .map(|(built, spec)| {
                Arc::new(ClProgram {
                    name: spec.name.clone(),
                    shared: self.shared.clone(),
                    built,
                    layout: ArgLayout::of(spec),
                    global: spec.global_size,
                    local: spec.local_size,
                }) as Arc<dyn Program>
            })
            .collect())
    }

    fn synchronize(&self) -> Result<()> {
        self.shared
            .queue
            .finish()
            .map_err(|e| Error::Other(format!("{}: waiting for the queue failed: {e}", self.shared.name)))
    }
}
