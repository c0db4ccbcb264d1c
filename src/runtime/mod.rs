//! Runtime: devices (memory, compilers, programs). One file per device.

pub mod device;
pub mod interp;
pub mod memory;

pub use device::{Device, DeviceMemory, Program};
pub use memory::HostMemory;
