//! Runtime: devices (memory, compilers, programs). One file per device.

pub mod device;
pub mod interp;
pub mod memory;

pub use device::{Device, DeviceMemory, Program};
pub use interp::{InterpDevice, InterpProgram, InterpRenderer};
pub use memory::HostMemory;
pub mod buffer;
pub mod cc;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod disk_cache;
#[cfg(feature = "opencl")]
pub mod opencl;
pub mod registry;
pub mod threadpool;

pub use buffer::{buffer_of, Buffer};
pub use registry::{default_device_name, get_device};
