//! hiprtc: compiling HIP C++ to an AMD GPU code object, and the code target of an AMD GPU.

use super::api::{rtc, Ptr};
use crate::renderer::cstyle::{hip_dialect, CStyleRenderer};
use crate::renderer::Target;
use crate::runtime::gpu_launch::Limits;
use std::ffi::{c_char, CString};
use std::sync::Mutex;

/// hiprtc options besides the architecture: optimized, and no FMA contraction (results must not
/// depend on the compiler's choices, as on the other devices).
pub const HIPRTC_OPTIONS: &[&str] = &["-O3", "-ffp-contract=off"];

/// What every AMD GPU takes: 1024 threads per block in any shape, 2^31-1 blocks in x and 65535
/// in y and z (the limits HIP reports on CDNA and RDNA alike).
pub(super) const LIMITS: Limits =
    Limits { block: [1024, 1024, 1024], block_total: 1024, grid: [i32::MAX as u32, 65535, 65535] };

/// hiprtc's version, `None` when it cannot be loaded.
pub fn hiprtc_version() -> Option<(i32, i32)> {
    let rtc = rtc().ok()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both pointers are valid for writes.
    rtc.check("hiprtcVersion", unsafe { (rtc.version)(&mut major, &mut minor) }).ok()?;
    Some((major, minor))
}

/// Whether hiprtc can be loaded (it needs no GPU when the architecture is given).
pub fn hiprtc_available() -> bool {
    rtc().is_ok()
}

/// Compiles HIP C++ `src` with hiprtc to a code object (an AMDGPU ELF) for `arch` (`gfx90a`,
/// `gfx1030`), or for the current device's architecture when `None`. The error carries
/// hiprtc's log.
pub fn hiprtc_compile(src: &str, arch: Option<&str>) -> Result<Vec<u8>, String> {
    let rtc = rtc()?;
    let csrc = CString::new(src).map_err(|_| "kernel source contains a NUL byte".to_string())?;
    let mut opts: Vec<String> = arch.map(|a| format!("--offload-arch={a}")).into_iter().collect();
    opts.extend(HIPRTC_OPTIONS.iter().map(|s| s.to_string()));
    let copts: Vec<CString> = opts.iter().map(|o| CString::new(o.as_str()).expect("options have no NUL")).collect();
    let ptrs: Vec<*const c_char> = copts.iter().map(|o| o.as_ptr()).collect();
    let mut prog: Ptr = std::ptr::null_mut();
    // SAFETY: `csrc` and the name are NUL-terminated and outlive the program; no headers given.
    let created = unsafe {
        (rtc.create)(&mut prog, csrc.as_ptr(), c"kernel.hip".as_ptr(), 0, std::ptr::null_mut(), std::ptr::null_mut())
    };
    rtc.check("hiprtcCreateProgram", created)?;
    /// Destroys the program on every path (Debian's ROCm 5.2 crashes at exit when one is left).
    struct Program<'a>(Ptr, &'a super::api::Rtc);
    impl Drop for Program<'_> {
        fn drop(&mut self) {
            // SAFETY: created above and destroyed only here.
            unsafe { (self.1.destroy)(&mut self.0) };
        }
    }
    let prog = Program(prog, rtc);
    // SAFETY (this and the calls below): `prog.0` is a live program; `ptrs` holds `opts.len()`
    // NUL-terminated options that outlive the call; each output buffer has the size hiprtc
    // reported for it just before.
    let compiled = {
        // One compile at a time: comgr (hiprtc's compiler, ROCm 5.2) is not thread-safe; two at
        // once abort in LLVM ("Option registered more than once") or corrupt its heap.
        static COMPILING: Mutex<()> = Mutex::new(());
        let _one = COMPILING.lock().unwrap_or_else(|e| e.into_inner());
        unsafe { (rtc.compile)(prog.0, ptrs.len() as i32, ptrs.as_ptr()) }
    };
    if let Err(e) = rtc.check("hiprtcCompileProgram", compiled) {
        let mut n = 0usize;
        let mut log = Vec::new();
        if unsafe { (rtc.log_size)(prog.0, &mut n) } == 0 && n > 0 {
            log = vec![0u8; n];
            unsafe { (rtc.log)(prog.0, log.as_mut_ptr() as *mut c_char) };
        }
        let log = String::from_utf8_lossy(&log).trim_end_matches('\0').trim().to_string();
        return Err(format!("{e} (options {}):\n{log}", opts.join(" ")));
    }
    let mut n = 0usize;
    rtc.check("hiprtcGetCodeSize", unsafe { (rtc.code_size)(prog.0, &mut n) })?;
    let mut code = vec![0u8; n];
    rtc.check("hiprtcGetCode", unsafe { (rtc.code)(prog.0, code.as_mut_ptr() as *mut c_char) })?;
    Ok(code)
}

/// The code generator's view of an AMD GPU.
pub fn hip_target(device: &str) -> Target {
    Target {
        local_max: LIMITS.block.map(|b| b as usize),
        local_max_total: LIMITS.block_total as usize,
        global_max: [0, 1, 2].map(|d| LIMITS.grid[d] as usize * LIMITS.block[d] as usize),
        ..Target::gpu(device)
    }
}

/// The HIP renderer for a device called `device`.
pub fn hip_renderer(device: &str) -> CStyleRenderer {
    CStyleRenderer::new(hip_dialect(), hip_target(device))
}
