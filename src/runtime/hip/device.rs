//! The AMD device: a GPU through the HIP runtime, its memory, the compile cache, programs.

use super::api::{hip, rtc, Hip, Ptr};
use super::compile::{hip_target, hiprtc_compile, hiprtc_version, HIPRTC_OPTIONS, LIMITS};
use super::memory::HipMemory;
use super::program::{HipProgram, Kernel};
use crate::error::{Error, Result};
use crate::helpers::{cache_dir, debug_level, stable_hash_hex};
use crate::renderer::cstyle::{hip_dialect, CStyleRenderer};
use crate::renderer::{ProgramSpec, Renderer};
use crate::runtime::backend::{device_index, Backend, DeviceMemory, Program};
use crate::runtime::compile_cache::{CompileCache, Todo};
use crate::runtime::disk_cache::DiskCache;
use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

pub struct HipDevice {
    name: String,
    ordinal: i32,
    hip: &'static Hip,
    /// The GPU's marketing name (part of the compile cache's key with hiprtc's version).
    gpu: String,
    renderer: CStyleRenderer,
    cache: CompileCache<Kernel>,
    disk: DiskCache,
}

/// Opens `AMD` or `AMD:N` (the registry's opener).
pub fn open(name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(HipDevice::open(name)?))
}

impl HipDevice {
    /// Opens `AMD` (device 0) or `AMD:N`. Errors say what is missing and how to fix it.
    pub fn open(name: &str) -> Result<HipDevice> {
        let unavailable = |reason: String| Error::DeviceUnavailable { device: name.to_string(), reason };
        let ordinal = device_index(name)? as i32;
        let hip = hip().map_err(unavailable)?;
        rtc().map_err(unavailable)?;
        // SAFETY: hipInit takes flags 0; the count pointer is valid for writes.
        hip.check("hipInit", unsafe { (hip.init)(0) }).map_err(|e| {
            unavailable(format!(
                "{e}: no AMD GPU is usable here. It needs the amdgpu kernel driver and ROCm (`rocminfo` lists the \
                 GPU); otherwise use another device (DEV=CPU)"
            ))
        })?;
        let mut count = 0;
        // SAFETY: as above.
        hip.check("hipGetDeviceCount", unsafe { (hip.device_count)(&mut count) }).map_err(&unavailable)?;
        if ordinal >= count {
            return Err(unavailable(format!("device {ordinal} asked for, but this machine has {count} AMD GPU(s)")));
        }
        let mut gpu = [0 as c_char; 256];
        // SAFETY: the buffer holds the 256 bytes passed as its length; the ordinal was checked.
        hip.check("hipDeviceGetName", unsafe { (hip.device_name)(gpu.as_mut_ptr(), 256, ordinal) })
            .map_err(&unavailable)?;
        let gpu: String = gpu.iter().take_while(|&&c| c != 0).map(|&c| c as u8 as char).collect();
        if debug_level() >= 1 {
            let (a, b) = hiprtc_version().unwrap_or_default();
            eprintln!("{name}: {gpu}, hiprtc {a}.{b}");
        }
        Ok(HipDevice {
            name: name.to_string(),
            ordinal,
            hip,
            gpu,
            renderer: CStyleRenderer::new(hip_dialect(), hip_target(name)),
            cache: CompileCache::default(),
            disk: DiskCache::new(cache_dir().join("hip"), "co"),
        })
    }

    fn other(&self, message: String) -> Error {
        Error::Other(format!("{}: {message}", self.name))
    }

    /// Makes this GPU the calling thread's current device (HIP's state is per thread).
    fn bind(&self) -> std::result::Result<(), String> {
        // SAFETY: the ordinal was checked against the device count when opening.
        self.hip.check("hipSetDevice", unsafe { (self.hip.set_device)(self.ordinal) })
    }

    fn key(&self, src: &str) -> String {
        let (a, b) = hiprtc_version().unwrap_or_default();
        let v = format!("hiprtc {a}.{b} {}", HIPRTC_OPTIONS.join(" "));
        stable_hash_hex(&[self.gpu.as_bytes(), v.as_bytes(), src.as_bytes()])
    }

    /// Loads a code object on this GPU and finds the kernel `name` in it.
    fn load(&self, image: &[u8], name: &str) -> std::result::Result<Arc<Kernel>, String> {
        self.bind()?;
        let (mut module, mut function): (Ptr, Ptr) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: `image` is a whole code object that outlives the call; `module` is valid for writes.
        self.hip.check("loading the code object", unsafe {
            (self.hip.module_load_data)(&mut module, image.as_ptr() as *const c_void)
        })?;
        let kernel = Kernel { hip: self.hip, ordinal: self.ordinal, module: module as usize, function: 0 };
        let cname = CString::new(name).map_err(|_| "kernel name contains a NUL byte".to_string())?;
        // SAFETY: `module` was just loaded (and is unloaded by `kernel`'s drop); the name is
        // NUL-terminated.
        self.hip.check(&format!("finding kernel {name}"), unsafe {
            (self.hip.module_get_function)(&mut function, module, cname.as_ptr())
        })?;
        Ok(Arc::new(Kernel { function: function as usize, ..kernel }))
    }

    /// Compiles one kernel with hiprtc for this GPU, loads it and stores the code object on disk.
    fn build(&self, key: &str, spec: &ProgramSpec) -> Result<Arc<Kernel>> {
        let fail = |mut message: String| {
            if debug_level() >= 1 {
                message.push_str("\nsource:\n");
                message.push_str(&spec.src);
            }
            Error::Compile { device: self.name.clone(), kernel: spec.name.clone(), message }
        };
        // hiprtc compiles for the current device's architecture when none is given.
        self.bind().map_err(fail)?;
        let code = hiprtc_compile(&spec.src, None).map_err(fail)?;
        let kernel = self.load(&code, &spec.name).map_err(fail)?;
        self.disk.store_bytes(key, &code);
        Ok(kernel)
    }
}

impl Backend for HipDevice {
    fn compiler_identity(&self) -> Option<String> {
        let (a, b) = hiprtc_version().unwrap_or_default();
        Some(format!("hiprtc {a}.{b} for {} {}", self.gpu, HIPRTC_OPTIONS.join(" ")))
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        let mem = |ptr| HipMemory { ptr, hip: self.hip, ordinal: self.ordinal };
        if bytes == 0 {
            return Ok(DeviceMemory { bytes, inner: Box::new(mem(0)) });
        }
        self.bind().map_err(|e| self.other(e))?;
        let mut ptr: Ptr = std::ptr::null_mut();
        // SAFETY: `ptr` is valid for writes; the new allocation is owned by the HipMemory made
        // right after, which frees it once.
        let status = unsafe { (self.hip.malloc)(&mut ptr, bytes) };
        if status == 2 {
            // hipErrorOutOfMemory
            return Err(Error::OutOfMemory { device: self.name.clone(), bytes });
        }
        self.hip.check(&format!("hipMalloc of {bytes} bytes"), status).map_err(|e| self.other(e))?;
        let mem = mem(ptr as usize);
        // Zeroed like the CPU's memory, so no device reads garbage from an unwritten buffer.
        // SAFETY: `ptr` points to the `bytes` bytes just allocated on this device.
        self.hip.check("hipMemset", unsafe { (self.hip.memset)(ptr, 0, bytes) }).map_err(|e| self.other(e))?;
        Ok(DeviceMemory { bytes, inner: Box::new(mem) })
    }

    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()> {
        if src.len() != dst.bytes {
            return Err(self.other(format!("copy_in of {} bytes into a buffer of {}", src.len(), dst.bytes)));
        }
        if src.is_empty() {
            return Ok(());
        }
        let mem = dst.downcast::<HipMemory>();
        self.bind().map_err(|e| self.other(e))?;
        // SAFETY: `mem.ptr` is an allocation of `dst.bytes == src.len()` bytes on this device; the
        // copy from pageable memory reads `src` before returning and is ordered after earlier kernels.
        let status = unsafe { (self.hip.memcpy_htod)(mem.ptr as Ptr, src.as_ptr() as *const c_void, src.len()) };
        self.hip.check("copy to device", status).map_err(|e| self.other(e))
    }

    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()> {
        if dst.len() != src.bytes {
            return Err(self.other(format!("copy_out of a {}-byte buffer into {} bytes", src.bytes, dst.len())));
        }
        if dst.is_empty() {
            return Ok(());
        }
        let mem = src.downcast::<HipMemory>();
        self.bind().map_err(|e| self.other(e))?;
        // SAFETY: as in copy_in; the copy waits for the kernels before it and fills `dst`
        // completely before returning. An earlier kernel's fault shows up here as an error.
        let status = unsafe { (self.hip.memcpy_dtoh)(dst.as_mut_ptr() as *mut c_void, mem.ptr as Ptr, dst.len()) };
        self.hip.check("copy from device", status).map_err(|e| self.other(e))
    }

    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }

    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        let keys: Vec<String> = specs.iter().map(|s| self.key(&s.src)).collect();
        let from_disk = |key: &str, spec: &ProgramSpec| {
            let code = self.disk.read(key, |bytes| bytes.starts_with(b"\x7fELF"))?;
            self.load(&code, &spec.name).ok()
        };
        let build = |group: &[Todo]| group.iter().map(|(key, spec)| self.build(key, spec)).collect();
        let kernels = self.cache.get_or_build(&keys, specs, from_disk, build)?;
        kernels
            .into_iter()
            .zip(specs)
            .map(|(k, spec)| Ok(Arc::new(HipProgram::new(&self.name, LIMITS, spec, k)?) as Arc<dyn Program>))
            .collect()
    }

    fn synchronize(&self) -> Result<()> {
        self.bind().map_err(|e| self.other(e))?;
        // SAFETY: waiting for the device has no preconditions.
        self.hip.check("synchronize", unsafe { (self.hip.synchronize)() }).map_err(|e| self.other(e))
    }
}
