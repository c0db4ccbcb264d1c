//! Runtime: devices (memory, compilers, programs). One file per device.

pub mod backend;
pub mod interp;
pub mod memory;

pub use backend::{Backend, DeviceMemory, Program};
pub use interp::{InterpDevice, InterpProgram, InterpRenderer};
pub use memory::HostMemory;
pub mod buffer;
pub mod cc;
pub mod compile_cache;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod disk_cache;
pub mod null;
#[cfg(feature = "opencl")]
pub mod opencl;
pub mod registry;
pub mod threadpool;

pub use buffer::{buffer_of, Buffer};
pub use registry::{default_device_name, get_device};
