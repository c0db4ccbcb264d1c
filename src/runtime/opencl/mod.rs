//! OpenCL (`DEV=CL`, `CL:1`, …): renders OpenCL C, builds it with the driver, launches one work
//! item per global index. `opencl3` loads `libOpenCL.so.1` at run time, so building needs no
//! OpenCL SDK, and a machine without a loader, a driver (ICD) or a device gets
//! `Error::DeviceUnavailable` saying what to install. CI runs this device on PoCL (a CPU
//! OpenCL); the same code drives GPU drivers.
//!
//! Device `CL:n` is the n-th device over all platforms, in platform order. `QCOM:n` is the same
//! device given the QCOM dialect (`renderer::cstyle::qcom_dialect`) and Adreno's work-group limit. Programs are cached
//! by source hash in the shared `compile_cache`; the uncached kernels of one compile call are
//! built in parallel (the driver keeps its own on-disk cache; PoCL's is under `POCL_CACHE_DIR`).
//!
//! The parts: `program` (memory, built kernels, launch) and `device` (the `Backend`).

mod device;
mod program;

pub use device::{open, open_qcom, ClDevice, ClFlavor};
pub use program::{ClMemory, ClProgram};
