//! Device memory of the CUDA device.

use cudarc::driver::{result as drv, sys, CudaContext};
use std::sync::Arc;
/// A device allocation. `ptr` is 0 for an empty buffer.
pub struct CudaMemory {
    pub(super) ptr: sys::CUdeviceptr,
    pub(super) ctx: Arc<CudaContext>,
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        if self.ptr != 0 && self.ctx.bind_to_thread().is_ok() {
            // SAFETY: `ptr` came from cuMemAlloc in this context and is freed only here; the
            // legacy default stream orders the free after the kernels that used it.
            let _ = unsafe { drv::free_sync(self.ptr) };
        }
    }
}
