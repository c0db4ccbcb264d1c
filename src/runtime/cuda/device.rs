//! The CUDA device: context, memory, the compile cache, programs.

use super::memory::CudaMemory;
use super::nvrtc::{
    cuda_target, driver_available, gpu_arch, nvrtc_available, nvrtc_compile, nvrtc_version, panic_text, NO_DRIVER,
    NO_NVRTC, NVRTC_OPTIONS,
};
use super::program::CudaProgram;
use crate::error::{Error, Result};
use crate::helpers::{cache_dir, debug_level, stable_hash_hex};
use crate::renderer::cstyle::{cuda_dialect, CStyleRenderer};
use crate::renderer::ptx::{ptx_unsupported, PtxRenderer, PTX_VERSION};
use crate::renderer::ProgramSpec;
use crate::renderer::Renderer;
use crate::runtime::backend::{Backend, DeviceMemory, Program};
use crate::runtime::compile_cache::{CompileCache, Todo};
use crate::runtime::disk_cache::DiskCache;
use crate::runtime::gpu_launch::Limits;
use cudarc::driver::{result as drv, sys, CudaContext, CudaFunction};
use cudarc::nvrtc::Ptx;
use std::panic::catch_unwind;
use std::sync::Arc;

pub struct CudaDevice {
    name: String,
    ctx: Arc<CudaContext>,
    arch: String,
    limits: Limits,
    /// CUDA C for NVRTC (`CUDA`), or PTX written directly (`NV`).
    renderer: CudaRenderer,
    /// Loaded kernels by key (architecture, NVRTC version, options, source).
    cache: CompileCache<CudaFunction>,
    disk: DiskCache,
}

/// How a CUDA device writes its kernels.
enum CudaRenderer {
    CudaC(CStyleRenderer),
    Ptx(PtxRenderer),
}

/// Opens `CUDA` or `CUDA:N` (the registry's opener).
pub fn open(name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(CudaDevice::open(name, false)?))
}

/// Opens `NV` or `NV:N`: the same GPU with kernels rendered as PTX by ferrograd itself
/// (`renderer::ptx`) and loaded by the driver, without NVRTC.
pub fn open_ptx(name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(CudaDevice::open(name, true)?))
}

impl CudaDevice {
    /// Opens `CUDA` (ordinal 0) or `CUDA:N`, rendering CUDA C for NVRTC, or PTX when `ptx`
    /// (then NVRTC is not needed). Errors say what is missing and how to fix it.
    pub fn open(name: &str, ptx: bool) -> Result<CudaDevice> {
        let unavailable = |reason: String| Error::DeviceUnavailable { device: name.to_string(), reason };
        let ordinal = crate::runtime::backend::device_index(name)?;
        if !driver_available() {
            return Err(unavailable(NO_DRIVER.to_string()));
        }
        if !ptx && !nvrtc_available() {
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
            renderer: if ptx {
                // PTX for sm_90 also runs on later GPUs (the driver compiles it for them).
                let sm = (cc.0 * 10 + cc.1).min(90);
                CudaRenderer::Ptx(PtxRenderer::new(target, &format!("sm_{sm}")))
            } else {
                CudaRenderer::CudaC(CStyleRenderer::new(cuda_dialect(), target))
            },
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
    fn load_cached(&self, key: &str, spec: &ProgramSpec) -> Option<Arc<CudaFunction>> {
        let image = self.disk.read(key, |bytes| !bytes.is_empty())?;
        self.load(image, &spec.name).ok().map(Arc::new)
    }

    /// Compiles and loads one kernel, and stores its image in the disk cache.
    fn build(&self, key: &str, spec: &ProgramSpec) -> Result<Arc<CudaFunction>> {
        if let CudaRenderer::Ptx(_) = self.renderer {
            // The source is PTX: the driver assembles it for this GPU.
            if let Some(why) = ptx_unsupported(&spec.uops) {
                return Err(self.compile_fail(&spec.name, why, &spec.src));
            }
            let mut image = spec.src.clone().into_bytes();
            image.push(0);
            let func = self.load(image.clone(), &spec.name).map_err(|e| self.compile_fail(&spec.name, e, &spec.src))?;
            self.disk.store_bytes(key, &image);
            return Ok(Arc::new(func));
        }
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
}

impl Backend for CudaDevice {
    fn compiler_identity(&self) -> Option<String> {
        if let CudaRenderer::Ptx(r) = &self.renderer {
            return Some(format!("ferrograd's PTX {} for {}, assembled by the driver", PTX_VERSION, r.arch()));
        }
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
        match &self.renderer {
            CudaRenderer::CudaC(r) => r,
            CudaRenderer::Ptx(r) => r,
        }
    }

    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        let keys: Vec<String> = specs.iter().map(|s| self.key(&s.src)).collect();
        // NVRTC programs are independent: each kernel is built on its own.
        let build = |group: &[Todo]| group.iter().map(|(key, spec)| self.build(key, spec)).collect();
        let funcs = self.cache.get_or_build(&keys, specs, |k, s| self.load_cached(k, s), build)?;
        funcs
            .into_iter()
            .zip(specs)
            .map(|(f, spec)| {
                Ok(Arc::new(CudaProgram::new(&self.name, &self.ctx, self.limits, spec, f)?) as Arc<dyn Program>)
            })
            .collect()
    }

    fn synchronize(&self) -> Result<()> {
        self.ctx.synchronize().map_err(|e| Error::Other(format!("{}: synchronize: {e}", self.name)))
    }
}
