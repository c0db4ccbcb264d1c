//! Host memory: aligned, zero-initialized allocations used by the CPU and INTERP devices.
//!
//! Freed allocations are kept (up to `CACHE_BYTES`) and handed out again for the same size,
//! zeroed: a fresh multi-megabyte allocation costs a page fault per 4 KiB on first touch,
//! which is a good part of a millisecond kernel's time (tinygrad's allocator caches too). An
//! allocation that `RELEASE_AFTER` realizes went by without reusing is released at the end of
//! the last of them (`realize_finished`), so a steady loop (a few realizes per step) keeps its
//! working set while the memory of a workload that is over goes back to the system.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A freed allocation kept for reuse: its address and how many realizes had finished then.
struct Cached {
    addr: usize,
    freed_after: u64,
}

/// Freed allocations by size, their total bytes, and the oldest `freed_after` among them.
struct FreeList {
    by_size: HashMap<usize, Vec<Cached>>,
    bytes: usize,
    oldest: u64,
}

static FREE: Mutex<Option<FreeList>> = Mutex::new(None);

/// Realizes finished so far (the free list's clock).
static REALIZES: AtomicU64 = AtomicU64::new(0);

/// Most bytes kept for reuse.
const CACHE_BYTES: usize = 1 << 30;

/// Realizes a cached allocation may go unused before it is released.
const RELEASE_AFTER: u64 = 4;

/// A cached allocation of exactly `bytes`, if there is one.
fn take_cached(bytes: usize) -> Option<*mut u8> {
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    let list = free.as_mut()?;
    let cached = list.by_size.get_mut(&bytes)?.pop()?;
    list.bytes -= bytes;
    Some(cached.addr as *mut u8)
}

/// Keeps a freed allocation for reuse; `false` when the cache is full.
fn give_back(ptr: *mut u8, bytes: usize) -> bool {
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    let now = REALIZES.load(Ordering::Relaxed);
    let list = free.get_or_insert_with(|| FreeList { by_size: HashMap::new(), bytes: 0, oldest: now });
    if list.bytes + bytes > CACHE_BYTES {
        return false;
    }
    if list.bytes == 0 {
        list.oldest = now;
    }
    list.bytes += bytes;
    list.by_size.entry(bytes).or_default().push(Cached { addr: ptr as usize, freed_after: now });
    true
}

/// Called at the end of every realize: releases the cached allocations that the last
/// `RELEASE_AFTER` realizes did not reuse.
pub(crate) fn realize_finished() {
    let done = REALIZES.fetch_add(1, Ordering::Relaxed) + 1;
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(list) = free.as_mut() else { return };
    if list.bytes == 0 || list.oldest + RELEASE_AFTER > done {
        return;
    }
    let mut oldest = done;
    for (&bytes, entries) in list.by_size.iter_mut() {
        entries.retain(|c| {
            if c.freed_after + RELEASE_AFTER > done {
                oldest = oldest.min(c.freed_after);
                return true;
            }
            // SAFETY: every cached pointer came from `alloc_zeroed` with this size and ALIGN
            // and was removed from its HostMemory (nothing else refers to it); `retain` drops
            // it from the list, so it is freed once.
            unsafe { dealloc(c.addr as *mut u8, Layout::from_size_align_unchecked(bytes, ALIGN)) };
            list.bytes -= bytes;
            false
        });
    }
    list.by_size.retain(|_, entries| !entries.is_empty());
    list.oldest = oldest;
}

/// Frees every cached allocation (before reporting that memory ran out).
fn drop_cache() {
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(list) = free.as_mut() {
        for (bytes, entries) in list.by_size.drain() {
            for c in entries {
                // SAFETY: every cached pointer came from `alloc_zeroed` with this size and
                // ALIGN, and was removed from its HostMemory (nothing else refers to it).
                unsafe { dealloc(c.addr as *mut u8, Layout::from_size_align_unchecked(bytes, ALIGN)) }
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
