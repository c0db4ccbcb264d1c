//! `Buffer`: a device allocation of `size` elements of one dtype, allocated on first use.
//!
//! A buffer may be made for a device that has not been opened (and data given to it before):
//! the device opens, the memory is allocated and the data copied in when the buffer is first
//! used, so an unknown or unavailable device is an `Err` from that use (a realize, a read), not
//! a panic where the tensor was created.

use super::backend::{Backend, DeviceMemory};
use crate::error::Result;
use crate::uop::{BufferObj, DType};
use std::any::Any;
use std::sync::{Arc, Mutex, OnceLock};

pub struct Buffer {
    /// Canonical device name.
    name: String,
    device: OnceLock<Arc<dyn Backend>>,
    dtype: DType,
    size: usize,
    mem: OnceLock<DeviceMemory>,
    /// Bytes to copy in once the memory exists; taken under this lock, which also makes the
    /// first allocation happen once.
    pending: Mutex<Option<Vec<u8>>>,
    /// Stands for the argument of a function being transformed (`vmap`, `grad`, …): it has no
    /// values, and every use that needs memory is an error saying so.
    placeholder: bool,
}

impl Buffer {
    /// A buffer on an open device.
    pub fn new(device: Arc<dyn Backend>, dtype: DType, size: usize) -> Arc<Buffer> {
        let name = device.name().to_string();
        let cell = OnceLock::new();
        let _ = cell.set(device);
        Arc::new(Buffer {
            name,
            device: cell,
            dtype,
            size,
            mem: OnceLock::new(),
            pending: Mutex::new(None),
            placeholder: false,
        })
    }

    /// A buffer on the device called `device`, opened on first use.
    pub fn on(device: &str, dtype: DType, size: usize) -> Arc<Buffer> {
        Arc::new(Buffer {
            name: super::registry::canonical_name(device),
            device: OnceLock::new(),
            dtype,
            size,
            mem: OnceLock::new(),
            pending: Mutex::new(None),
            placeholder: false,
        })
    }

    /// A buffer that only stands for a function's argument while a transform traces the
    /// function (see `tensor::trace`): it never gets memory.
    pub fn placeholder(device: &str, dtype: DType, size: usize) -> Arc<Buffer> {
        let mut b = Buffer::on(device, dtype, size);
        Arc::get_mut(&mut b).expect("a new buffer has one owner").placeholder = true;
        b
    }

    pub fn is_placeholder(&self) -> bool {
        self.placeholder
    }

    /// A buffer on `device` holding `data` (copied in on first use).
    pub fn with_data(device: &str, dtype: DType, data: Vec<u8>) -> Arc<Buffer> {
        assert_eq!(data.len() % dtype.itemsize().max(1), 0, "Buffer::with_data: {} bytes of {dtype:?}", data.len());
        let b = Buffer::on(device, dtype, data.len() / dtype.itemsize().max(1));
        *b.pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(data);
        b
    }

    /// The device, opened now if it was not yet.
    pub fn device_obj(&self) -> Result<&Arc<dyn Backend>> {
        if let Some(d) = self.device.get() {
            return Ok(d);
        }
        let d = super::registry::get_device(&self.name)?;
        Ok(self.device.get_or_init(|| d))
    }

    pub fn nbytes(&self) -> usize {
        // Saturating: a size no allocation can hold fails in `alloc` as out of memory.
        self.size.saturating_mul(self.dtype.itemsize())
    }
    pub fn is_allocated(&self) -> bool {
        self.mem.get().is_some()
    }

    /// The device memory, allocating it (and copying in data given earlier) on first use.
    pub fn memory(&self) -> Result<&DeviceMemory> {
        if let Some(m) = self.mem.get() {
            return Ok(m);
        }
        if self.placeholder {
            return Err(crate::error::Error::Other(format!(
                "a function under vmap/grad/jvp read the values of its argument ({:?}, {} elements): inside a \
                 transformed function, tensors are traced, not computed; build the result from tensor ops \
                 without realize/to_vec/item or data-dependent ops (nonzero, masked_select)",
                self.dtype, self.size
            )));
        }
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = self.mem.get() {
            return Ok(m);
        }
        let device = self.device_obj()?;
        let m = device.alloc(self.nbytes())?;
        if let Some(data) = pending.as_ref() {
            device.copy_in(&m, data)?;
        }
        *pending = None;
        Ok(self.mem.get_or_init(|| m))
    }

    /// Copies host bytes in (`data.len()` must equal `nbytes()`).
    pub fn copy_in(&self, data: &[u8]) -> Result<()> {
        assert_eq!(data.len(), self.nbytes(), "copy_in: {} bytes into a buffer of {}", data.len(), self.nbytes());
        let m = self.memory()?;
        self.device_obj()?.copy_in(m, data)
    }

    /// Copies the contents out to the host.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.nbytes()];
        let m = self.memory()?;
        self.device_obj()?.copy_out(m, &mut out)?;
        Ok(out)
    }
}

impl BufferObj for Buffer {
    fn device(&self) -> &str {
        &self.name
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
