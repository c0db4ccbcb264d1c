//! The HIP runtime (`libamdhip64`) and its compiler hiprtc, loaded at run time: the few
//! functions the AMD device calls, as C function pointers. ROCm 5 ships hiprtc inside
//! libamdhip64; ROCm 6 in its own libhiprtc.

use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::OnceLock;

/// `hipError_t` / `hiprtcResult`: 0 is success.
pub type Status = c_int;
pub type Ptr = *mut c_void;

/// A struct holding a loaded library and the functions named, with a `load` that looks each up.
macro_rules! library {
    ($(#[$m:meta])* $name:ident { $($field:ident = $sym:ident: fn($($arg:ty),*) -> $ret:ty;)* }) => {
        $(#[$m])*
        pub struct $name {
            _lib: Library,
            $(pub $field: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }
        impl $name {
            fn load(lib: Library) -> Result<$name, String> {
                $(
                    // SAFETY: the symbol is declared with the C signature of the HIP/hiprtc
                    // headers (ROCm 5 and 6 share them); the Library it comes from is stored next
                    // to the pointers and never unloaded, so the pointer stays valid.
                    let $field = *unsafe {
                        lib.get::<unsafe extern "C" fn($($arg),*) -> $ret>(concat!(stringify!($sym), "\0").as_bytes())
                    }
                    .map_err(|e| e.to_string())?;
                )*
                Ok($name { _lib: lib, $($field,)* })
            }
        }
    };
}

library!(
    /// The HIP runtime API, as the device uses it.
    Hip {
        init = hipInit: fn(c_uint) -> Status;
        device_count = hipGetDeviceCount: fn(*mut c_int) -> Status;
        set_device = hipSetDevice: fn(c_int) -> Status;
        device_name = hipDeviceGetName: fn(*mut c_char, c_int, c_int) -> Status;
        malloc = hipMalloc: fn(*mut Ptr, usize) -> Status;
        free = hipFree: fn(Ptr) -> Status;
        memset = hipMemset: fn(Ptr, c_int, usize) -> Status;
        memcpy_htod = hipMemcpyHtoD: fn(Ptr, *const c_void, usize) -> Status;
        memcpy_dtoh = hipMemcpyDtoH: fn(*mut c_void, Ptr, usize) -> Status;
        module_load_data = hipModuleLoadData: fn(*mut Ptr, *const c_void) -> Status;
        module_get_function = hipModuleGetFunction: fn(*mut Ptr, Ptr, *const c_char) -> Status;
        module_unload = hipModuleUnload: fn(Ptr) -> Status;
        // (function, grid x y z, block x y z, shared bytes, stream, parameters, extra)
        launch = hipModuleLaunchKernel:
            fn(Ptr, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Ptr, *mut *mut c_void, *mut *mut c_void) -> Status;
        synchronize = hipDeviceSynchronize: fn() -> Status;
        error_string = hipGetErrorString: fn(Status) -> *const c_char;
    }
);

library!(
    /// hiprtc, HIP's run-time compiler.
    Rtc {
        create = hiprtcCreateProgram: fn(*mut Ptr, *const c_char, *const c_char, c_int, Ptr, Ptr) -> Status;
        compile = hiprtcCompileProgram: fn(Ptr, c_int, *const *const c_char) -> Status;
        log_size = hiprtcGetProgramLogSize: fn(Ptr, *mut usize) -> Status;
        log = hiprtcGetProgramLog: fn(Ptr, *mut c_char) -> Status;
        code_size = hiprtcGetCodeSize: fn(Ptr, *mut usize) -> Status;
        code = hiprtcGetCode: fn(Ptr, *mut c_char) -> Status;
        destroy = hiprtcDestroyProgram: fn(*mut Ptr) -> Status;
        version = hiprtcVersion: fn(*mut c_int, *mut c_int) -> Status;
        error_string = hiprtcGetErrorString: fn(Status) -> *const c_char;
    }
);

const HIP_NAMES: &[&str] = &["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"];
const RTC_NAMES: &[&str] = &["libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.5", "/opt/rocm/lib/libhiprtc.so"];

fn open_first(names: &[&str]) -> Option<Library> {
    // SAFETY: loading a ROCm library runs its initializers, which have no preconditions on the
    // caller; the libraries are the ones named, from the system's library path.
    names.iter().find_map(|n| unsafe { Library::new(n) }.ok())
}

/// The HIP runtime, loaded once; the error says what is missing and what to install.
pub fn hip() -> Result<&'static Hip, String> {
    static HIP: OnceLock<Result<Hip, String>> = OnceLock::new();
    HIP.get_or_init(|| match open_first(HIP_NAMES) {
        None => Err("the HIP runtime (libamdhip64.so) was not found. Install ROCm (or Debian's libamdhip64-5), \
                     or add the folder holding libamdhip64.so to LD_LIBRARY_PATH; otherwise use another device \
                     (DEV=CPU)"
            .into()),
        Some(lib) => Hip::load(lib).map_err(|e| format!("the HIP runtime library is incomplete or too old: {e}")),
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// hiprtc, loaded once: its own library (ROCm 6) or the one inside libamdhip64 (ROCm 5).
pub fn rtc() -> Result<&'static Rtc, String> {
    static RTC: OnceLock<Result<Rtc, String>> = OnceLock::new();
    RTC.get_or_init(|| {
        let found = open_first(RTC_NAMES).map(Rtc::load);
        match found {
            Some(Ok(rtc)) => Ok(rtc),
            _ => match open_first(HIP_NAMES) {
                Some(lib) => Rtc::load(lib).map_err(|e| {
                    format!("hiprtc was not found (libhiprtc.so, or inside libamdhip64.so: {e}). Install ROCm's hiprtc")
                }),
                None => Err("hiprtc (libhiprtc.so) was not found. Install ROCm (or Debian's libamdhip64-5 and \
                             libhiprtc-builtins5), or add the folder holding it to LD_LIBRARY_PATH"
                    .into()),
            },
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// `Err("what: errorName (status)")` for a failed call, `error_string` naming the status.
fn check(
    error_string: unsafe extern "C" fn(Status) -> *const c_char,
    what: &str,
    status: Status,
) -> Result<(), String> {
    if status == 0 {
        return Ok(());
    }
    // SAFETY: the HIP and hiprtc error-string functions accept any status value and return a
    // static NUL-terminated string or null.
    let p = unsafe { error_string(status) };
    let name = if p.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, static and NUL-terminated (above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    };
    Err(format!("{what}: {name} ({status})"))
}

impl Hip {
    pub fn check(&self, what: &str, status: Status) -> Result<(), String> {
        check(self.error_string, what, status)
    }
}

impl Rtc {
    pub fn check(&self, what: &str, status: Status) -> Result<(), String> {
        check(self.error_string, what, status)
    }
}
