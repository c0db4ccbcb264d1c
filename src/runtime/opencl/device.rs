//! The OpenCL device: platform and device discovery, memory, the compile cache.

use crate::error::{Error, Result};
use crate::helpers::{debug_level, stable_hash_hex};
use crate::renderer::cstyle::{opencl_dialect, qcom_dialect, CDialect, CStyleRenderer};
use crate::renderer::ProgramSpec;
use crate::renderer::{Renderer, Target};
use crate::runtime::backend::{Backend, DeviceMemory, Program};
use crate::runtime::compile_cache::{CompileCache, Todo};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device as ClDeviceInfo, CL_DEVICE_TYPE_ALL};
use opencl3::error_codes::{
    ClError, CL_BUILD_PROGRAM_FAILURE, CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_FUNCTION_NOT_AVAILABLE,
    DLOPEN_RUNTIME_LOAD_FAILED,
};
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program as ClProgramObj;
use opencl3::types::cl_device_id;
use std::sync::{Arc, Mutex};

use super::program::{ArgLayout, BuiltKernel, ClMemory, ClProgram, ClShared};

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

/// Which OpenCL C a device is given: plain OpenCL C 1.2, or the QCOM (Adreno) dialect.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ClFlavor {
    OpenCl,
    Qcom,
}

impl ClFlavor {
    fn dialect(self) -> CDialect {
        match self {
            ClFlavor::OpenCl => opencl_dialect(),
            ClFlavor::Qcom => qcom_dialect(),
        }
    }
}

pub struct ClDevice {
    shared: Arc<ClShared>,
    renderer: CStyleRenderer,
    /// The dialect's prelude, written once when kernels are built together.
    prelude: &'static str,
    options: String,
    max_alloc: u64,
    cache: CompileCache<BuiltKernel>,
}

/// Opens `CL` or `CL:N` (the registry's opener).
pub fn open(name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(ClDevice::open(name, crate::runtime::backend::device_index(name)?, ClFlavor::OpenCl)?))
}

/// Opens `QCOM` or `QCOM:N`: OpenCL device N (over all platforms, as `CL:N`) given the QCOM
/// dialect and Adreno's limits (the registry's opener). It is meant for Qualcomm's driver, and
/// runs on any OpenCL device, which is how it is tested (on PoCL).
pub fn open_qcom(name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(ClDevice::open(name, crate::runtime::backend::device_index(name)?, ClFlavor::Qcom)?))
}

/// Most threads in an Adreno work group (A6xx/A7xx report 1024; a kernel's own limit, from its
/// registers, can be lower and is checked when it is built).
const ADRENO_MAX_WORK_GROUP: usize = 1024;

impl ClDevice {
    /// Opens device `index` (over all platforms) with the dialect of `flavor`. `name` is the
    /// canonical device name (`CL`, `CL:1`, `QCOM`); every failure is `Error::DeviceUnavailable`.
    pub fn open(name: &str, index: usize, flavor: ClFlavor) -> Result<ClDevice> {
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
            local_max_total: match flavor {
                ClFlavor::OpenCl => info.max_work_group_size().unwrap_or(1).max(1),
                ClFlavor::Qcom => info.max_work_group_size().unwrap_or(1).clamp(1, ADRENO_MAX_WORK_GROUP),
            },
            simd_bytes: 0,
            vector_registers: 0,
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
            renderer: CStyleRenderer::new(flavor.dialect(), target),
            prelude: flavor.dialect().prelude,
            options,
            max_alloc,
            cache: CompileCache::default(),
        })
    }

    fn key(&self, src: &str) -> String {
        stable_hash_hex(&[self.options.as_bytes(), src.as_bytes()])
    }

    /// Builds kernels as one OpenCL program (one driver compile: PoCL spends most of a build
    /// on per-program work), with the dialect's prelude once. If that fails, each kernel is
    /// built on its own, so the error names the kernel at fault.
    fn build_group(&self, group: &[Todo]) -> Result<Vec<Arc<BuiltKernel>>> {
        if group.len() > 1 {
            let prelude = self.prelude;
            let mut src = String::from(prelude);
            for (_, spec) in group {
                src.push_str(spec.src.strip_prefix(prelude).unwrap_or(&spec.src));
            }
            let names: Vec<&str> = group.iter().map(|(_, s)| s.name.as_str()).collect();
            if let Ok(kernels) = self.build_source(&src, &names) {
                return Ok(kernels);
            }
        }
        group.iter().map(|(_, spec)| Ok(self.build_source(&spec.src, &[&spec.name])?.remove(0))).collect()
    }

    /// Builds `src` with the driver and creates the kernels `names` from it.
    fn build_source(&self, src: &str, names: &[&str]) -> Result<Vec<Arc<BuiltKernel>>> {
        let fail =
            |message: String| Error::Compile { device: self.shared.name.clone(), kernel: names.join(", "), message };
        let with_source = |mut message: String| {
            if debug_level() >= 1 {
                message.push_str("\nsource:\n");
                message.push_str(src);
            }
            message
        };
        let mut program = ClProgramObj::create_from_source(&self.shared.context, src)
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
        let program = Arc::new(program);
        names
            .iter()
            .map(|name| {
                let kernel = Kernel::create(&program, name)
                    .map_err(|e| fail(with_source(format!("no kernel `{name}` in the program: {e}"))))?;
                Ok(Arc::new(BuiltKernel { kernel: Mutex::new(kernel), _program: program.clone() }))
            })
            .collect()
    }

    /// A kernel's work group must fit the threads the driver allows for it (its registers can
    /// make that fewer than the device's maximum, as on Adreno): else an error naming both.
    fn check_work_group(&self, built: &BuiltKernel, spec: &ProgramSpec) -> Result<()> {
        let Some(local) = spec.local_size else { return Ok(()) };
        let threads: usize = local.iter().product();
        let kernel = built.kernel.lock().unwrap_or_else(|e| e.into_inner());
        match kernel.get_work_group_size(self.shared.device.id()) {
            Ok(allowed) if threads > allowed => Err(Error::Compile {
                device: self.shared.name.clone(),
                kernel: spec.name.clone(),
                message: format!(
                    "its work group of {threads} threads ({local:?}) exceeds the {allowed} the driver allows for it"
                ),
            }),
            _ => Ok(()),
        }
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
        mem.write(&self.shared.queue, src)
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
        mem.read(&self.shared.queue, dst)
            .map_err(|e| Error::Other(format!("{}: reading device memory failed: {e}", self.shared.name)))
    }

    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }

    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        let keys: Vec<String> = specs.iter().map(|s| self.key(&s.src)).collect();
        // The driver keeps its own disk cache.
        let build = |group: &[Todo]| self.build_group(group);
        let built = self.cache.get_or_build(&keys, specs, |_, _| None, build)?;
        for (built, spec) in built.iter().zip(specs) {
            self.check_work_group(built, spec)?;
        }
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
