//! CUDA (feature `cuda`): renders CUDA C, compiles it with NVRTC for the device's compute
//! capability, loads the result with the driver API and launches one thread per global index
//! (grid = global / local, block = local) on the legacy default stream, so kernels and copies
//! run in submission order.
//!
//! Both libraries (`libcuda.so.1` from the NVIDIA driver, `libnvrtc.so` from the CUDA toolkit
//! or the `nvidia-cuda-nvrtc-cu12` wheel) are loaded at run time through `cudarc`, so building
//! needs no CUDA toolkit. `cudarc` panics when a library is missing, so every entry point
//! checks for the library first and a machine without one gets `Error::DeviceUnavailable`.
//!
//! `NV` is the same device with kernels written as PTX by `renderer::ptx` (no NVRTC needed).
//!
//! The parts: `nvrtc` (libraries, architecture, compiling), `memory`, `program` (a loaded
//! kernel and its launch), `graph` (CUDA graphs for TinyJit's replays), `device` (the `Backend`).

mod device;
pub(crate) mod graph;
mod memory;
mod nvrtc;
mod program;

pub use device::{open, open_ptx, CudaDevice};
pub use memory::CudaMemory;
pub use nvrtc::{
    cuda_renderer, cuda_target, driver_available, gpu_arch, nvrtc_available, nvrtc_compile, nvrtc_version, Compiled,
};
pub use program::CudaProgram;
