//! NVRTC: which libraries are there, the GPU architecture to compile for, compiling CUDA C
//! to PTX and CUBIN, and the code target of a device.

use crate::renderer::cstyle::{cuda_dialect, CStyleRenderer};
use crate::renderer::Target;
use cudarc::driver::sys;
use cudarc::nvrtc::{result as rtc, sys as rtc_sys};
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
/// NVRTC options besides the architecture. No FMA contraction: results must not depend on the
/// compiler's choices (the CPU device compiles with `-ffp-contract=off` for the same reason).
pub(super) const NVRTC_OPTIONS: &[&str] = &["--fmad=false"];

pub(super) const NO_DRIVER: &str =
    "the CUDA driver library (libcuda.so.1) was not found, so this machine has no usable \
     NVIDIA driver. Install the NVIDIA driver, or add the folder holding libcuda.so.1 to LD_LIBRARY_PATH; \
     otherwise use another device (DEV=CPU)";
pub(super) const NO_NVRTC: &str = "the CUDA runtime compiler library (libnvrtc.so) was not found. Install the CUDA \
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
pub(super) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
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
    Target::gpu(device)
}

/// The CUDA C renderer for a device called `device`.
pub fn cuda_renderer(device: &str) -> CStyleRenderer {
    CStyleRenderer::new(cuda_dialect(), cuda_target(device))
}
