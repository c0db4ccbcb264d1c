//! Device memory of the AMD device.

use super::api::{Hip, Ptr};

/// A device allocation (its address; 0 for an empty buffer), freed when dropped.
pub struct HipMemory {
    pub(super) ptr: usize,
    pub(super) hip: &'static Hip,
    pub(super) ordinal: i32,
}

impl Drop for HipMemory {
    fn drop(&mut self) {
        if self.ptr != 0 {
            // SAFETY: `ptr` came from hipMalloc on this device and is freed only here; the null
            // stream orders the free after the kernels that used it.
            unsafe {
                (self.hip.set_device)(self.ordinal);
                (self.hip.free)(self.ptr as Ptr);
            }
        }
    }
}
