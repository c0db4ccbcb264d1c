//! AMD GPUs (feature `hip`, device `AMD`): renders HIP C++, compiles it with hiprtc for the
//! GPU's architecture, loads the code object with the HIP runtime and launches one thread per
//! global index (grid = global / local, block = local) on the null stream, so kernels and copies
//! run in submission order.
//!
//! Both libraries (libamdhip64, libhiprtc) are loaded at run time, so building needs no ROCm and
//! a machine without it or without an AMD GPU gets `Error::DeviceUnavailable`. Without a GPU,
//! `hiprtc_compile` with an explicit architecture still works: CI compiles the generated kernels
//! for RDNA and CDNA that way (tests/hip_compile.rs).
//!
//! The parts: `api` (the loaded functions), `compile` (hiprtc, the code target), `device` (the
//! `Backend`), `memory`, `program` (a loaded kernel and its launch).

mod api;
mod compile;
mod device;
mod memory;
mod program;

pub use compile::{hip_renderer, hip_target, hiprtc_available, hiprtc_compile, hiprtc_version, HIPRTC_OPTIONS};
pub use device::{open, HipDevice};
pub use memory::HipMemory;
pub use program::HipProgram;
