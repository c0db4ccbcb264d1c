//! Host memory: aligned, zero-initialized allocations used by the CPU and INTERP devices.
//!
//! Freed allocations are kept (up to `CACHE_BYTES`) and handed out again for the same size,
//! zeroed: a fresh multi-megabyte allocation costs a page fault per 4 KiB on first touch,
//! which is a good part of a millisecond kernel's time (tinygrad's allocator caches too).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::collections::HashMap;
use std::sync::Mutex;

/// Freed allocations by size (addresses), and their total bytes.
struct FreeList {
    by_size: HashMap<usize, Vec<usize>>,
    bytes: usize,
}

static FREE: Mutex<Option<FreeList>> = Mutex::new(None);

/// Most bytes kept for reuse.
const CACHE_BYTES: usize = 1 << 30;

/// A cached allocation of exactly `bytes`, if there is one.
fn take_cached(bytes: usize) -> Option<*mut u8> {
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    let list = free.as_mut()?;
    let ptr = list.by_size.get_mut(&bytes)?.pop()?;
    list.bytes -= bytes;
    Some(ptr as *mut u8)
}

/// Keeps a freed allocation for reuse; `false` when the cache is full.
fn give_back(ptr: *mut u8, bytes: usize) -> bool {
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    let list = free.get_or_insert_with(|| FreeList { by_size: HashMap::new(), bytes: 0 });
    if list.bytes + bytes > CACHE_BYTES {
        return false;
    }
    list.bytes += bytes;
    list.by_size.entry(bytes).or_default().push(ptr as usize);
    true
}

/// Frees every cached allocation (before reporting that memory ran out).
fn drop_cache() {
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(list) = free.as_mut() {
        for (bytes, ptrs) in list.by_size.drain() {
            for p in ptrs {
                // SAFETY: every cached pointer came from `alloc_zeroed` with this size and
                // ALIGN, and was removed from its HostMemory (nothing else refers to it).
                unsafe { dealloc(p as *mut u8, Layout::from_size_align_unchecked(bytes, ALIGN)) }
            }
        }
        list.bytes = 0;
    }
}

/// Serializes every access to the contents of host memory in the process: kernel launches on
/// the CPU and INTERP devices and the copies in and out take it, so no two of them touch host
/// buffers at once, whichever threads they run on.
pub(crate) fn host_execution_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// An aligned host allocation. Its contents are only read or written under
/// `host_execution_lock`: by kernels (through the raw pointer, during a launch) and by
/// `copy_from`/`copy_to`.
pub struct HostMemory {
    ptr: *mut u8,
    bytes: usize,
}

// SAFETY: HostMemory owns its allocation exclusively (like a Box<[u8]>), and every access to
// the bytes happens under `host_execution_lock`, so moving it between threads is sound.
unsafe impl Send for HostMemory {}
// SAFETY: shared references only hand out the raw pointer (used under the lock by launches)
// and the copies, which take the lock themselves.
unsafe impl Sync for HostMemory {}

const ALIGN: usize = 64;

impl HostMemory {
    pub fn new(bytes: usize) -> Option<HostMemory> {
        if bytes == 0 {
            return Some(HostMemory { ptr: std::ptr::null_mut(), bytes: 0 });
        }
        let layout = Layout::from_size_align(bytes, ALIGN).ok()?;
        if let Some(ptr) = take_cached(bytes) {
            // SAFETY: a cached allocation of exactly `bytes` bytes, owned by nobody else.
            unsafe { std::ptr::write_bytes(ptr, 0, bytes) };
            return Some(HostMemory { ptr, bytes });
        }
        // SAFETY: layout has non-zero size (checked above).
        let mut ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            drop_cache();
            // SAFETY: as above.
            ptr = unsafe { alloc_zeroed(layout) };
        }
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
    /// The start of the allocation, for kernel launches (which hold `host_execution_lock`).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
    /// Copies `src` (exactly `len()` bytes) in.
    pub fn copy_from(&self, src: &[u8]) {
        assert_eq!(src.len(), self.bytes, "copy into host memory: {} bytes into {}", src.len(), self.bytes);
        if self.bytes == 0 {
            return;
        }
        let _lock = host_execution_lock();
        // SAFETY: ptr is a live allocation of `bytes` bytes that `src` (a separate slice) does
        // not overlap; no kernel or other copy touches it while the lock is held.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr, self.bytes) }
    }
    /// Copies the contents out to `dst` (exactly `len()` bytes).
    pub fn copy_to(&self, dst: &mut [u8]) {
        assert_eq!(dst.len(), self.bytes, "copy out of host memory: {} bytes into {}", self.bytes, dst.len());
        if self.bytes == 0 {
            return;
        }
        let _lock = host_execution_lock();
        // SAFETY: as in `copy_from`; the allocation is initialized (zeroed when made).
        unsafe { std::ptr::copy_nonoverlapping(self.ptr, dst.as_mut_ptr(), self.bytes) }
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        if self.bytes > 0 && !give_back(self.ptr, self.bytes) {
            // SAFETY: allocated in `new` with exactly this layout.
            unsafe { dealloc(self.ptr, Layout::from_size_align_unchecked(self.bytes, ALIGN)) }
        }
    }
}
