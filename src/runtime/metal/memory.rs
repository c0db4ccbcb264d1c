//! Device memory of the Metal device.

use objc2::rc::Retained;
use objc2::runtime::ProtocolObject;
use objc2_metal::MTLBuffer;

/// A shared-memory buffer (`None` for an empty one: Metal has no zero-length buffers).
pub struct MetalMemory {
    pub(super) buffer: Option<Retained<ProtocolObject<dyn MTLBuffer>>>,
}

// SAFETY: MTLBuffer objects may be used from any thread (Apple's Metal documentation lists
// buffers among the thread-safe objects); the contents are only written by `copy_in` after the
// queue is idle, under the device's queue lock.
unsafe impl Send for MetalMemory {}
// SAFETY: as above.
unsafe impl Sync for MetalMemory {}
