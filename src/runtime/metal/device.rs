//! The Metal device: the GPU, its command queue, shared-memory buffers, the compile cache.

use super::memory::MetalMemory;
use super::program::{MetalProgram, Pipeline, Queue};
use crate::error::{Error, Result};
use crate::helpers::{debug_level, stable_hash_hex};
use crate::renderer::cstyle::{metal_dialect, metal_lacks, metal_target, CStyleRenderer};
use crate::renderer::{ProgramSpec, Renderer};
use crate::runtime::backend::{Backend, DeviceMemory, Program};
use crate::runtime::compile_cache::{CompileCache, Todo};
use objc2::rc::Retained;
use objc2::runtime::ProtocolObject;
use objc2_foundation::NSString;
use objc2_metal::{
    MTLBuffer as _, MTLCompileOptions, MTLCreateSystemDefaultDevice, MTLDevice, MTLLibrary, MTLResourceOptions,
};
use std::sync::Arc;

/// The Metal device handle.
struct Gpu(Retained<ProtocolObject<dyn MTLDevice>>);
// SAFETY: MTLDevice is thread-safe (Metal's documentation: devices, queues, pipelines and
// buffers may be shared between threads; command buffers and encoders are not, and are made and
// used inside one call).
unsafe impl Send for Gpu {}
// SAFETY: as above.
unsafe impl Sync for Gpu {}

pub struct MetalDevice {
    name: String,
    gpu: Gpu,
    queue: Arc<Queue>,
    renderer: CStyleRenderer,
    cache: CompileCache<Pipeline>,
}

/// Opens `METAL` (the registry's opener).
pub fn open(name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(MetalDevice::open(name)?))
}

impl MetalDevice {
    pub fn open(name: &str) -> Result<MetalDevice> {
        let unavailable = |reason: &str| Error::DeviceUnavailable { device: name.to_string(), reason: reason.into() };
        let gpu = MTLCreateSystemDefaultDevice().ok_or_else(|| unavailable("this Mac has no Metal GPU"))?;
        let queue = gpu.newCommandQueue().ok_or_else(|| unavailable("making a Metal command queue failed"))?;
        if debug_level() >= 1 {
            eprintln!("{name}: {}", gpu.name());
        }
        Ok(MetalDevice {
            name: name.to_string(),
            gpu: Gpu(gpu),
            queue: Arc::new(Queue::new(queue)),
            renderer: CStyleRenderer::new(metal_dialect(), metal_target(name)),
            cache: CompileCache::default(),
        })
    }

    fn other(&self, message: String) -> Error {
        Error::Other(format!("{}: {message}", self.name))
    }

    /// Compiles one kernel from source (fast math off) into a compute pipeline.
    fn build(&self, spec: &ProgramSpec) -> Result<Arc<Pipeline>> {
        let fail = |message: String| Error::Compile { device: self.name.clone(), kernel: spec.name.clone(), message };
        if let Some(u) = spec.uops.iter().find(|u| metal_lacks(u.dtype().base())) {
            return Err(fail(format!(
                "Metal has no 64-bit floats: {:?} of dtype {:?} cannot run here",
                u.op(),
                u.dtype()
            )));
        }
        let options = MTLCompileOptions::new();
        // `mathMode` replaces this from macOS 15 on; the old switch works on every version.
        #[allow(deprecated)]
        options.setFastMathEnabled(false);
        let with_source = |m: String| if debug_level() >= 1 { format!("{m}\nsource:\n{}", spec.src) } else { m };
        let library = self
            .gpu
            .0
            .newLibraryWithSource_options_error(&NSString::from_str(&spec.src), Some(&options))
            .map_err(|e| fail(with_source(e.localizedDescription().to_string())))?;
        let function = library
            .newFunctionWithName(&NSString::from_str(&spec.name))
            .ok_or_else(|| fail(format!("no kernel `{}` in the compiled library", spec.name)))?;
        let state = self
            .gpu
            .0
            .newComputePipelineStateWithFunction_error(&function)
            .map_err(|e| fail(e.localizedDescription().to_string()))?;
        Ok(Arc::new(Pipeline::new(state)))
    }
}

impl Backend for MetalDevice {
    fn compiler_identity(&self) -> Option<String> {
        Some(format!("Metal on {} without fast math", self.gpu.0.name()))
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        if bytes == 0 {
            return Ok(DeviceMemory { bytes, inner: Box::new(MetalMemory { buffer: None }) });
        }
        if bytes as u64 > self.gpu.0.maxBufferLength() as u64 {
            return Err(Error::OutOfMemory { device: self.name.clone(), bytes });
        }
        // Shared storage is zero-filled by Metal, like the CPU's memory.
        let buffer = self
            .gpu
            .0
            .newBufferWithLength_options(bytes, MTLResourceOptions::StorageModeShared)
            .ok_or(Error::OutOfMemory { device: self.name.clone(), bytes })?;
        Ok(DeviceMemory { bytes, inner: Box::new(MetalMemory { buffer: Some(buffer) }) })
    }

    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()> {
        if src.len() != dst.bytes {
            return Err(self.other(format!("copy_in of {} bytes into a buffer of {}", src.len(), dst.bytes)));
        }
        let Some(buffer) = &dst.downcast::<MetalMemory>().buffer else { return Ok(()) };
        // Kernels before this copy may still read the buffer: wait for them.
        self.queue.finish().map_err(|e| self.other(e))?;
        // SAFETY: the buffer is shared memory of `dst.bytes == src.len()` bytes (length checked at
        // allocation), no kernel is using it (the queue is idle), and `src` does not overlap it.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), buffer.contents().as_ptr() as *mut u8, src.len()) };
        Ok(())
    }

    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()> {
        if dst.len() != src.bytes {
            return Err(self.other(format!("copy_out of a {}-byte buffer into {} bytes", src.bytes, dst.len())));
        }
        let Some(buffer) = &src.downcast::<MetalMemory>().buffer else { return Ok(()) };
        self.queue.finish().map_err(|e| self.other(e))?;
        // SAFETY: as in copy_in; the kernels writing the buffer have completed.
        unsafe { std::ptr::copy_nonoverlapping(buffer.contents().as_ptr() as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }

    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        let keys: Vec<String> = specs.iter().map(|s| stable_hash_hex(&[b"metal", s.src.as_bytes()])).collect();
        let build = |group: &[Todo]| group.iter().map(|(_, spec)| self.build(spec)).collect();
        let pipelines = self.cache.get_or_build(&keys, specs, |_, _| None, build)?;
        pipelines
            .into_iter()
            .zip(specs)
            .map(|(p, spec)| Ok(Arc::new(MetalProgram::new(&self.name, &self.queue, spec, p)?) as Arc<dyn Program>))
            .collect()
    }

    fn synchronize(&self) -> Result<()> {
        self.queue.finish().map_err(|e| self.other(e))
    }
}
