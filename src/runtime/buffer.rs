//! `Buffer`: a device allocation of `size` elements of one dtype, allocated on first use.

use super::device::{Device, DeviceMemory};
use crate::error::Result;
use crate::uop::{BufferObj, DType};
use std::any::Any;
use std::sync::{Arc, OnceLock};

pub struct Buffer {
    device: Arc<dyn Device>,
    dtype: DType,
    size: usize,
    mem: OnceLock<DeviceMemory>,
}

impl Buffer {
    pub fn new(device: Arc<dyn Device>, dtype: DType, size: usize) -> Arc<Buffer> {
        Arc::new(Buffer { device, dtype, size, mem: OnceLock::new() })
    }
    pub fn device_obj(&self) -> &Arc<dyn Device> {
        &self.device
    }
    pub fn nbytes(&self) -> usize {
        // Saturating: a size no allocation can hold fails in `alloc` as out of memory.
        self.size.saturating_mul(self.dtype.itemsize())
    }
    pub fn is_allocated(&self) -> bool {
        self.mem.get().is_some()
    }
    /// The device memory, allocating it on first use.
    pub fn memory(&self) -> Result<&DeviceMemory> {
        if let Some(m) = self.mem.get() {
            return Ok(m);
        }
        let m = self.device.alloc(self.nbytes())?;
        Ok(self.mem.get_or_init(|| m))
    }
    /// Copies host bytes in (`data.len()` must equal `nbytes()`).
    pub fn copy_in(&self, data: &[u8]) -> Result<()> {
        assert_eq!(data.len(), self.nbytes(), "copy_in: {} bytes into a buffer of {}", data.len(), self.nbytes());
        let m = self.memory()?;
        self.device.copy_in(m, data)
    }
    /// Copies the contents out to the host.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.nbytes()];
        let m = self.memory()?;
        self.device.copy_out(m, &mut out)?;
        Ok(out)
    }
}

impl BufferObj for Buffer {
    fn device(&self) -> &str {
        self.device.name()
    }
    fn size(&self) -> usize {
        self.size
    }
    fn dtype(&self) -> DType {
        self.dtype
    }
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// The runtime `Buffer` behind a BUFFER node's handle.
pub fn buffer_of(handle: &crate::uop::BufferHandle) -> Arc<Buffer> {
    handle.0.clone().as_any_arc().downcast::<Buffer>().expect("BUFFER handle of a foreign type")
}
