//! CUDA (feature `cuda`): renders CUDA C, compiles it with NVRTC for the device's compute
//! capability, loads the result with the driver API and launches one thread per global index
//! (grid = global / local, block = local) on the legacy default stream, so kernels and copies
//! run in submission order.
//!
//! Both libraries (`libcuda.so.1` from the NVIDIA driver, `libnvrtc.so` from the CUDA toolkit
//! or the `nvidia-cuda-nvrtc-cu12` wheel) are loaded at run time through `cudarc`, so building
//! needs no CUDA toolkit. `cudarc` panics when a library is missing, so every entry point
//! checks for the library first and a machine without one gets `Error::DeviceUnavailable`.

use super::backend::{Backend, DeviceMemory, Program};
use super::compile_cache::{CompileCache, Todo};
use super::disk_cache::DiskCache;
use crate::error::{Error, Result};
use crate::helpers::{cache_dir, debug_level, stable_hash_hex};
use crate::renderer::cstyle::{cuda_dialect, CStyleRenderer};
use crate::renderer::ProgramSpec;
use crate::renderer::{Renderer, Target};
use crate::uop::Ops;
use cudarc::driver::{result as drv, sys, CudaContext, CudaFunction};
use cudarc::nvrtc::{result as rtc, sys as rtc_sys, Ptx};
use std::ffi::{c_char, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// NVRTC options besides the architecture. No FMA contraction: results must not depend on the
/// compiler's choices (the CPU device compiles with `-ffp-contract=off` for the same reason).
const NVRTC_OPTIONS: &[&str] = &["--fmad=false"];

const NO_DRIVER: &str = "the CUDA driver library (libcuda.so.1) was not found, so this machine has no usable \
     NVIDIA driver. Install the NVIDIA driver, or add the folder holding libcuda.so.1 to LD_LIBRARY_PATH; \
     otherwise use another device (DEV=CPU)";
const NO_NVRTC: &str = "the CUDA runtime compiler library (libnvrtc.so) was not found. Install the CUDA \
     toolkit, or `pip install nvidia-cuda-nvrtc-cu12` and add its nvidia/cuda_nvrtc/lib folder to \
     LD_LIBRARY_PATH";

/// Whether the NVRTC library can be loaded (it needs no GPU).
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to dlopen the library under its usual names and closes it again;
    // loading libnvrtc runs no initializers with preconditions.
    unsafe { rtc_sys::is_culib_present() }
}

/// Whether the CUDA driver library can be loaded (true does not mean there is a GPU).
pub fn driver_available() -> bool {
    // SAFETY: as in `nvrtc_available`, a dlopen attempt of the driver library.
    unsafe { sys::is_culib_present() }
}

/// NVRTC's version, `None` when the library is missing.
pub fn nvrtc_version() -> Option<(i32, i32)> {
    if !nvrtc_available() {
        return None;
    }
    catch_unwind(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: the library is present (checked above); both pointers are valid for writes.
        unsafe { rtc_sys::nvrtcVersion(&mut major, &mut minor) }.result().ok().map(|_| (major, minor))
    })
    .ok()
    .flatten()
}

/// The virtual architectures this NVRTC compiles for (`[50, 52, ..., 90, 100, 120]`).
fn nvrtc_archs() -> Vec<i32> {
    catch_unwind(|| {
        let mut n = 0;
        // SAFETY: NVRTC is loaded by the caller's check; `n` is valid for writes.
        if unsafe { rtc_sys::nvrtcGetNumSupportedArchs(&mut n) }.result().is_err() || n <= 0 {
            return Vec::new();
        }
        let mut archs = vec![0i32; n as usize];
        // SAFETY: `archs` holds exactly the `n` entries NVRTC writes.
        match unsafe { rtc_sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }.result() {
            Ok(()) => archs,
            Err(_) => Vec::new(),
        }
    })
    .unwrap_or_default()
}

/// The `--gpu-architecture` for compute capability `cc`: the real architecture (`sm_90`, giving a
/// CUBIN) when this NVRTC knows it, else the newest older virtual one (`compute_89`, PTX that the
/// driver compiles when loading).
pub fn gpu_arch(cc: (i32, i32)) -> String {
    let want = cc.0 * 10 + cc.1;
    let archs = nvrtc_archs();
    if archs.is_empty() || archs.contains(&want) {
        return format!("sm_{want}");
    }
    match archs.iter().filter(|&&a| a <= want).max() {
        Some(a) => format!("compute_{a}"),
        None => format!("sm_{want}"),
    }
}

/// The message of a caught panic (cudarc panics on a missing library function).
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    match (payload.downcast_ref::<String>(), payload.downcast_ref::<&str>()) {
        (Some(s), _) => s.clone(),
        (_, Some(s)) => s.to_string(),
        _ => "panic inside cudarc".into(),
    }
}

/// What NVRTC made of one source.
pub struct Compiled {
    pub ptx: String,
    /// Machine code, when compiled for a real architecture (`sm_XY`).
    pub cubin: Option<Vec<u8>>,
}

fn c_chars_to_string(v: &[c_char]) -> String {
    let bytes: Vec<u8> = v.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compiles CUDA C `src` with NVRTC for `arch` (`sm_90`, `compute_89`). The error is NVRTC's
/// message and log.
pub fn nvrtc_compile(src: &str, arch: &str) -> std::result::Result<Compiled, String> {
    if !nvrtc_available() {
        return Err(NO_NVRTC.to_string());
    }
    let csrc = CString::new(src).map_err(|_| "kernel source contains a NUL byte".to_string())?;
    let mut opts = vec![format!("--gpu-architecture={arch}")];
    opts.extend(NVRTC_OPTIONS.iter().map(|s| s.to_string()));
    let run = || -> std::result::Result<Compiled, String> {
        let prog = rtc::create_program(&csrc, Some(c"kernel.cu")).map_err(|e| format!("nvrtcCreateProgram: {e}"))?;
        struct Guard(rtc_sys::nvrtcProgram);
        impl Drop for Guard {
            fn drop(&mut self) {
                // SAFETY: created by create_program above and destroyed only here.
                let _ = unsafe { rtc::destroy_program(self.0) };
            }
        }
        let prog = Guard(prog);
        // SAFETY (this and the calls below): `prog.0` is a live program (destroyed by the guard
        // after the last use); `csrc`, which it refers to, outlives it.
        let compiled = unsafe { rtc::compile_program(prog.0, &opts) };
        if let Err(e) = compiled {
            // SAFETY: as above.
            let log = unsafe { rtc::get_program_log(prog.0) }.map(|l| c_chars_to_string(&l)).unwrap_or_default();
            return Err(format!("NVRTC {e} (options {}):\n{}", opts.join(" "), log.trim()));
        }
        // SAFETY: as above; compiled successfully.
        let ptx = unsafe { rtc::get_ptx(prog.0) }.map_err(|e| format!("nvrtcGetPTX: {e}"))?;
        let cubin = if arch.starts_with("sm_") {
            let mut size = 0usize;
            // SAFETY: as above; `size` is valid for writes.
            unsafe { rtc_sys::nvrtcGetCUBINSize(prog.0, &mut size) }
                .result()
                .map_err(|e| format!("nvrtcGetCUBINSize: {e}"))?;
            let mut bin = vec![0u8; size];
            // SAFETY: `bin` has the `size` bytes NVRTC writes.
            unsafe { rtc_sys::nvrtcGetCUBIN(prog.0, bin.as_mut_ptr() as *mut c_char) }
                .result()
                .map_err(|e| format!("nvrtcGetCUBIN: {e}"))?;
            (size > 0).then_some(bin)
        } else {
            None
        };
        Ok(Compiled { ptx: c_chars_to_string(&ptx), cubin })
    };
    catch_unwind(AssertUnwindSafe(run))
        .unwrap_or_else(|p| Err(format!("the NVRTC library is incomplete or too old ({})", panic_text(p.as_ref()))))
}

/// The code generator's view of a CUDA GPU with typical limits (the device refines them).
pub fn cuda_target(device: &str) -> Target {
    let mut t = Target::cpu(device);
    t.has_local = true;
    t.has_threads = false;
    t.threads = 1;
    t.native_half = false;
    t.supports_f64 = true;
    t.global_max = [i32::MAX as usize, 65535, 65535];
    t.local_max = [1024, 1024, 64];
    t.local_max_total = 1024;
    t.simd_bytes = 0;
    t
}

/// The CUDA C renderer for a device called `device`.
pub fn cuda_renderer(device: &str) -> CStyleRenderer {
    CStyleRenderer::new(cuda_dialect(), cuda_target(device))
}

/// A device allocation. `ptr` is 0 for an empty buffer.
pub struct CudaMemory {
    ptr: sys::CUdeviceptr,
    ctx: Arc<CudaContext>,
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        if self.ptr != 0 && self.ctx.bind_to_thread().is_ok() {
            // SAFETY: `ptr` came from cuMemAlloc in this context and is freed only here; the
            // legacy default stream orders the free after the kernels that used it.
            let _ = unsafe { drv::free_sync(self.ptr) };
        }
    }
}

/// A loaded kernel with its launch geometry.
pub struct CudaProgram {
    device: String,
    name: String,
    ctx: Arc<CudaContext>,
    // Holds the module, so the function stays valid while the program lives.
    func: Arc<CudaFunction>,
    grid: [u32; 3],
    block: [u32; 3],
    buf_count: usize,
    /// Byte size of each variable parameter, in argument order.
    var_bytes: Vec<usize>,
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
    fn fail(&self, message: String) -> Error {
        Error::Launch { device: self.device.clone(), kernel: self.name.clone(), message }
    }
}

impl Program for CudaProgram {
    fn launch(&self, bufs: &[&DeviceMemory], vals: &[i64], wait: bool) -> Result<f64> {
        if bufs.len() != self.buf_count || vals.len() != self.var_bytes.len() {
            return Err(self.fail(format!(
                "{} buffers and {} values given, the kernel takes {} and {}",
                bufs.len(),
                vals.len(),
                self.buf_count,
                self.var_bytes.len()
            )));
        }
        if self.grid.contains(&0) {
            return Ok(0.0);
        }
        let ptrs: Vec<sys::CUdeviceptr> = bufs.iter().map(|b| b.downcast::<CudaMemory>().ptr).collect();
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

/// Device limits that decide whether a launch geometry is valid.
#[derive(Clone, Copy)]
struct Limits {
    block: [u32; 3],
    block_total: u32,
    grid: [u32; 3],
}

pub struct CudaDevice {
    name: String,
    ctx: Arc<CudaContext>,
    arch: String,
    limits: Limits,
    renderer: CStyleRenderer,
    /// Loaded kernels by key (architecture, NVRTC version, options, source).
    cache: CompileCache<CudaFunction>,
    disk: DiskCache,
}

/// Opens `CUDA` or `CUDA:N` (the registry's opener).
pub fn open(name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(CudaDevice::open(name)?))
}

impl CudaDevice {
    /// Opens `CUDA` (ordinal 0) or `CUDA:N`. Errors say what is missing and how to fix it.
    pub fn open(name: &str) -> Result<CudaDevice> {
        let unavailable = |reason: String| Error::DeviceUnavailable { device: name.to_string(), reason };
        let ordinal = super::backend::device_index(name)?;
        if !driver_available() {
            return Err(unavailable(NO_DRIVER.to_string()));
        }
        if !nvrtc_available() {
            return Err(unavailable(NO_NVRTC.to_string()));
        }
        let opened = catch_unwind(move || -> std::result::Result<_, String> {
            drv::init().map_err(|e| {
                format!("cuInit failed ({e}); is there an NVIDIA GPU and a working driver (nvidia-smi)?")
            })?;
            let count = drv::device::get_count().map_err(|e| format!("cuDeviceGetCount: {e}"))?;
            if ordinal >= count.max(0) as usize {
                return Err(format!("device {ordinal} asked for, but this machine has {count} CUDA device(s)"));
            }
            let ctx = CudaContext::new(ordinal).map_err(|e| format!("creating a context: {e}"))?;
            let cc = ctx.compute_capability().map_err(|e| format!("reading the compute capability: {e}"))?;
            let attr = |a: sys::CUdevice_attribute| ctx.attribute(a).map(|v| v.max(1) as u32);
            use sys::CUdevice_attribute as A;
            let limits = (|| -> std::result::Result<Limits, drv::DriverError> {
                Ok(Limits {
                    block: [
                        attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                        attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                        attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
                    ],
                    block_total: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
                    grid: [
                        attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                        attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                        attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
                    ],
                })
            })()
            .map_err(|e| format!("reading the device limits: {e}"))?;
            let gpu = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
            Ok((ctx, cc, limits, gpu))
        });
        let (ctx, cc, limits, gpu) = match opened {
            Ok(r) => r.map_err(unavailable)?,
            Err(payload) => {
                let why = panic_text(payload.as_ref());
                return Err(unavailable(format!(
                    "the CUDA driver library is incomplete or too old ({why}); update the NVIDIA driver"
                )));
            }
        };
        let arch = gpu_arch(cc);
        if debug_level() >= 1 {
            let v = nvrtc_version().map(|(a, b)| format!("{a}.{b}")).unwrap_or_default();
            eprintln!("{name}: {gpu}, compute capability {}.{}, NVRTC {v} compiling for {arch}", cc.0, cc.1);
        }
        let mut target = cuda_target(name);
        target.local_max = [limits.block[0] as usize, limits.block[1] as usize, limits.block[2] as usize];
        target.local_max_total = limits.block_total as usize;
        target.global_max = [
            limits.grid[0] as usize * limits.block[0] as usize,
            limits.grid[1] as usize * limits.block[1] as usize,
            limits.grid[2] as usize * limits.block[2] as usize,
        ];
        Ok(CudaDevice {
            name: name.to_string(),
            ctx,
            arch,
            limits,
            renderer: CStyleRenderer::new(cuda_dialect(), target),
            cache: CompileCache::default(),
            disk: DiskCache::new(cache_dir().join("cuda"), "bin"),
        })
    }

    /// The architecture kernels are compiled for (`sm_90`).
    pub fn arch(&self) -> &str {
        &self.arch
    }

    fn key(&self, src: &str) -> String {
        let v = nvrtc_version().map(|(a, b)| format!("{a}.{b}")).unwrap_or_default();
        stable_hash_hex(&[self.arch.as_bytes(), v.as_bytes(), NVRTC_OPTIONS.join(" ").as_bytes(), src.as_bytes()])
    }

    fn compile_fail(&self, kernel: &str, message: String, src: &str) -> Error {
        let mut message = message;
        if debug_level() >= 1 {
            message.push_str("\nsource:\n");
            message.push_str(src);
        }
        Error::Compile { device: self.name.clone(), kernel: kernel.to_string(), message }
    }

    /// Loads a module image (CUBIN, or NUL-terminated PTX) and finds the kernel `name` in it.
    fn load(&self, image: Vec<u8>, name: &str) -> std::result::Result<CudaFunction, String> {
        let module = self.ctx.load_module(Ptx::from_binary(image)).map_err(|e| {
            let hint = if e.0 == sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION {
                " (the driver is older than NVRTC: use an NVRTC no newer than the driver's CUDA version, which \
                 nvidia-smi shows)"
            } else {
                ""
            };
            format!("loading the module: {e}{hint}")
        })?;
        module.load_function(name).map_err(|e| format!("finding kernel {name}: {e}"))
    }

    /// The kernel loaded from the disk cache, if a loadable image is there.
    fn from_disk(&self, key: &str, spec: &ProgramSpec) -> Option<Arc<CudaFunction>> {
        let image = self.disk.read(key, |bytes| !bytes.is_empty())?;
        self.load(image, &spec.name).ok().map(Arc::new)
    }

    /// Compiles and loads one kernel, and stores its image in the disk cache.
    fn build(&self, key: &str, spec: &ProgramSpec) -> Result<Arc<CudaFunction>> {
        let out = nvrtc_compile(&spec.src, &self.arch).map_err(|m| self.compile_fail(&spec.name, m, &spec.src))?;
        let mut ptx = out.ptx.into_bytes();
        ptx.push(0);
        // Prefer machine code: it loads on any driver of the same major version; PTX from a newer
        // NVRTC than the driver does not.
        let (func, image) = match out.cubin {
            Some(cubin) => match self.load(cubin.clone(), &spec.name) {
                Ok(f) => (f, cubin),
                Err(cubin_err) => match self.load(ptx.clone(), &spec.name) {
                    Ok(f) => (f, ptx),
                    Err(ptx_err) => {
                        return Err(self.compile_fail(
                            &spec.name,
                            format!("CUBIN: {cubin_err}; PTX: {ptx_err}"),
                            &spec.src,
                        ))
                    }
                },
            },
            None => match self.load(ptx.clone(), &spec.name) {
                Ok(f) => (f, ptx),
                Err(e) => return Err(self.compile_fail(&spec.name, e, &spec.src)),
            },
        };
        self.disk.store_bytes(key, &image);
        Ok(Arc::new(func))
    }

    /// A program for `spec` around the loaded `func`, with the spec's launch geometry.
    fn program(&self, spec: &ProgramSpec, func: Arc<CudaFunction>) -> Result<CudaProgram> {
        let global = spec.global_size;
        let local = spec.local_size.unwrap_or([1, 1, 1]);
        let fail = |message: String| Error::Launch { device: self.name.clone(), kernel: spec.name.clone(), message };
        let mut grid = [0u32; 3];
        let mut block = [0u32; 3];
        for d in 0..3 {
            let (g, l) = (global[d], local[d].max(1));
            if g % l != 0 {
                return Err(fail(format!("global size {global:?} is not a multiple of local size {local:?}")));
            }
            if l > self.limits.block[d] as usize || g / l > self.limits.grid[d] as usize {
                return Err(fail(format!("launch {global:?}/{local:?} exceeds the device limits")));
            }
            grid[d] = (g / l) as u32;
            block[d] = l as u32;
        }
        if block.iter().map(|&b| b as u64).product::<u64>() > self.limits.block_total as u64 {
            return Err(fail(format!("local size {local:?} exceeds {} threads per block", self.limits.block_total)));
        }
        let var_bytes = spec.uops.iter().filter(|u| u.op() == Ops::DEFINE_VAR).map(|u| u.dtype().itemsize()).collect();
        Ok(CudaProgram {
            device: self.name.clone(),
            name: spec.name.clone(),
            ctx: self.ctx.clone(),
            func,
            grid,
            block,
            buf_count: spec.buf_count,
            var_bytes,
        })
    }
}

impl Backend for CudaDevice {
    fn compiler_identity(&self) -> Option<String> {
        let v = nvrtc_version().map(|(a, b)| format!("{a}.{b}")).unwrap_or_default();
        Some(format!("NVRTC {v} for {} {}", self.arch, NVRTC_OPTIONS.join(" ")))
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        let ctx = self.ctx.clone();
        if bytes == 0 {
            return Ok(DeviceMemory { bytes, inner: Box::new(CudaMemory { ptr: 0, ctx }) });
        }
        let other =
            |what: &str, e: drv::DriverError| Error::Other(format!("{}: {what} of {bytes} bytes: {e}", self.name));
        ctx.bind_to_thread().map_err(|e| other("binding the context", e))?;
        // SAFETY: the context is current on this thread; the new allocation is owned by the
        // returned CudaMemory, which frees it once.
        let ptr = match unsafe { drv::malloc_sync(bytes) } {
            Ok(p) => p,
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                return Err(Error::OutOfMemory { device: self.name.clone(), bytes })
            }
            Err(e) => return Err(other("cuMemAlloc", e)),
        };
        let mem = CudaMemory { ptr, ctx };
        // Zeroed like the CPU's memory, so no device reads garbage from an unwritten buffer.
        // SAFETY: `ptr` points to `bytes` bytes just allocated in the current context.
        unsafe { drv::memset_d8_sync(mem.ptr, 0, bytes) }.map_err(|e| other("cuMemsetD8", e))?;
        Ok(DeviceMemory { bytes, inner: Box::new(mem) })
    }

    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()> {
        if src.len() != dst.bytes {
            return Err(Error::Other(format!(
                "{}: copy_in of {} bytes into a buffer of {}",
                self.name,
                src.len(),
                dst.bytes
            )));
        }
        if src.is_empty() {
            return Ok(());
        }
        let mem = dst.downcast::<CudaMemory>();
        self.ctx.bind_to_thread().map_err(|e| Error::Other(format!("{}: {e}", self.name)))?;
        // SAFETY: `mem.ptr` is an allocation of `dst.bytes == src.len()` bytes in this context;
        // the synchronous copy reads `src` before returning and is ordered after earlier kernels.
        unsafe { drv::memcpy_htod_sync(mem.ptr, src) }
            .map_err(|e| Error::Other(format!("{}: copy to device: {e}", self.name)))
    }

    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()> {
        if dst.len() != src.bytes {
            return Err(Error::Other(format!(
                "{}: copy_out of a {}-byte buffer into {} bytes",
                self.name,
                src.bytes,
                dst.len()
            )));
        }
        if dst.is_empty() {
            return Ok(());
        }
        let mem = src.downcast::<CudaMemory>();
        self.ctx.bind_to_thread().map_err(|e| Error::Other(format!("{}: {e}", self.name)))?;
        // SAFETY: as in copy_in; the copy waits for the kernels before it and fills `dst`
        // completely before returning. An earlier kernel's fault shows up here as an error.
        unsafe { drv::memcpy_dtoh_sync(dst, mem.ptr) }
            .map_err(|e| Error::Other(format!("{}: copy from device: {e}", self.name)))
    }

    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }

    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        let keys: Vec<String> = specs.iter().map(|s| self.key(&s.src)).collect();
        // NVRTC programs are independent: each kernel is built on its own.
        let build = |group: &[Todo]| group.iter().map(|(key, spec)| self.build(key, spec)).collect();
        let funcs = self.cache.get_or_build(&keys, specs, |k, s| self.from_disk(k, s), build)?;
        funcs.into_iter().zip(specs).map(|(f, spec)| Ok(Arc::new(self.program(spec, f)?) as Arc<dyn Program>)).collect()
    }

    fn synchronize(&self) -> Result<()> {
        self.ctx.synchronize().map_err(|e| Error::Other(format!("{}: synchronize: {e}", self.name)))
    }
}
