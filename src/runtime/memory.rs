//! Host memory: aligned, zero-initialized allocations used by the CPU and INTERP devices.

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// An aligned host allocation. Kernels access it through raw pointers; the engine runs the
/// kernels of a device one after another, so there are no concurrent writers.
pub struct HostMemory {
    ptr: *mut u8,
    bytes: usize,
}

// SAFETY: HostMemory owns its allocation exclusively (like a Box<[u8]>); all reads and writes
// go through the engine, which never runs two kernels on the same device at once.
unsafe impl Send for HostMemory {}
// SAFETY: see Send; shared references only hand out the raw pointer.
unsafe impl Sync for HostMemory {}

const ALIGN: usize = 64;

impl HostMemory {
    pub fn new(bytes: usize) -> Option<HostMemory> {
        if bytes == 0 {
            return Some(HostMemory { ptr: std::ptr::null_mut(), bytes: 0 });
        }
        let layout = Layout::from_size_align(bytes, ALIGN).ok()?;
        // SAFETY: layout has non-zero size (checked above).
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            None
        } else {
            Some(HostMemory { ptr, bytes })
        }
    }
    pub fn len(&self) -> usize {
        self.bytes
    }
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
    /// The bytes, for copying out.
    pub fn as_slice(&self) -> &[u8] {
        if self.bytes == 0 {
            return &[];
        }
        // SAFETY: ptr is a live allocation of `bytes` bytes, initialized (zeroed at alloc).
        unsafe { std::slice::from_raw_parts(self.ptr, self.bytes) }
    }
    /// The bytes, for copying in. `&self` because buffers are shared handles; the engine
    /// guarantees no kernel runs on this memory meanwhile.
    #[allow(clippy::mut_from_ref)]
    pub fn as_mut_slice(&self) -> &mut [u8] {
        if self.bytes == 0 {
            return &mut [];
        }
        // SAFETY: as above; exclusive access is guaranteed by the engine's sequential use.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.bytes) }
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        if self.bytes > 0 {
            // SAFETY: allocated in `new` with exactly this layout.
            unsafe { dealloc(self.ptr, Layout::from_size_align_unchecked(self.bytes, ALIGN)) }
        }
    }
}
