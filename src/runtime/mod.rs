//! Runtime: devices (memory, compilers, programs). One file per device.

pub(crate) mod backend;
pub(crate) mod interp;
pub(crate) mod memory;
#[cfg(all(feature = "metal", target_os = "macos"))]
pub mod metal;

pub use backend::{Backend, DeviceMemory, Program};
pub use interp::{InterpDevice, InterpProgram, InterpRenderer};
pub use memory::HostMemory;
pub(crate) mod buffer;
pub mod cc;
pub(crate) mod compile_cache;
pub mod cpu;
mod cpu_graph;
#[cfg(feature = "cuda")]
pub mod cuda;
pub(crate) mod disk_cache;
#[cfg(any(feature = "cuda", feature = "hip", all(feature = "metal", target_os = "macos")))]
pub(crate) mod gpu_launch;
pub mod graph;
pub(crate) mod graph_build;
#[cfg(feature = "hip")]
pub mod hip;
pub mod null;
#[cfg(feature = "opencl")]
pub mod opencl;
pub(crate) mod registry;
pub(crate) mod threadpool;
#[cfg(feature = "webgpu")]
pub mod webgpu;

pub use buffer::{buffer_of, Buffer};
pub use registry::{default_device_name, get_device};
