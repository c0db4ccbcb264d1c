//! A Metal compute pipeline and its launch on the device's command queue.

use super::memory::MetalMemory;
use crate::error::{Error, Result};
use crate::renderer::ProgramSpec;
use crate::runtime::backend::{DeviceMemory, Program};
use crate::runtime::gpu_launch::{grid_and_block, value_slots, var_bytes, Limits};
use objc2::rc::Retained;
use objc2::runtime::ProtocolObject;
use objc2_metal::{
    MTLCommandBuffer, MTLCommandBufferStatus, MTLCommandEncoder, MTLCommandQueue, MTLComputeCommandEncoder,
    MTLComputePipelineState, MTLSize,
};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

/// The command queue and the last command buffer committed to it (waited for before copies).
pub struct Queue {
    queue: Retained<ProtocolObject<dyn MTLCommandQueue>>,
    last: Mutex<Option<Retained<ProtocolObject<dyn MTLCommandBuffer>>>>,
}

// SAFETY: MTLCommandQueue is thread-safe (Metal's documentation); the last command buffer is
// only touched under the mutex, and only to wait for it or read its status.
unsafe impl Send for Queue {}
// SAFETY: as above.
unsafe impl Sync for Queue {}

impl Queue {
    pub(super) fn new(queue: Retained<ProtocolObject<dyn MTLCommandQueue>>) -> Queue {
        Queue { queue, last: Mutex::new(None) }
    }

    /// Waits for everything committed so far; the error is a kernel's failure.
    pub(super) fn finish(&self) -> std::result::Result<(), String> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner()).take();
        match last {
            Some(cb) => completed(&cb),
            None => Ok(()),
        }
    }
}

/// Waits for `cb`; an error (a kernel fault, a timeout) is Metal's description of it.
fn completed(cb: &ProtocolObject<dyn MTLCommandBuffer>) -> std::result::Result<(), String> {
    cb.waitUntilCompleted();
    if cb.status() == MTLCommandBufferStatus::Error {
        let why = cb.error().map(|e| e.localizedDescription().to_string()).unwrap_or_default();
        return Err(format!("a kernel failed: {why}"));
    }
    Ok(())
}

/// A compiled kernel: its pipeline state and the most threads a threadgroup of it can have.
pub struct Pipeline {
    state: Retained<ProtocolObject<dyn MTLComputePipelineState>>,
}

// SAFETY: pipeline states are immutable and thread-safe (Metal's documentation).
unsafe impl Send for Pipeline {}
// SAFETY: as above.
unsafe impl Sync for Pipeline {}

impl Pipeline {
    pub(super) fn new(state: Retained<ProtocolObject<dyn MTLComputePipelineState>>) -> Pipeline {
        Pipeline { state }
    }
}

pub struct MetalProgram {
    device: String,
    name: String,
    queue: Arc<Queue>,
    pipeline: Arc<Pipeline>,
    grid: [u32; 3],
    block: [u32; 3],
    buffer_params: Vec<usize>,
    var_bytes: Vec<usize>,
}

impl MetalProgram {
    pub(super) fn new(
        device: &str,
        queue: &Arc<Queue>,
        spec: &ProgramSpec,
        pipeline: Arc<Pipeline>,
    ) -> Result<MetalProgram> {
        // The pipeline's own limit (registers can lower it below 1024) bounds the threadgroup.
        let threads = pipeline.state.maxTotalThreadsPerThreadgroup().min(1024) as u32;
        let limits = Limits { block: [threads; 3], block_total: threads, grid: [i32::MAX as u32, 65535, 65535] };
        let (grid, block) = grid_and_block(device, spec, limits)?;
        Ok(MetalProgram {
            device: device.to_string(),
            name: spec.name.clone(),
            queue: queue.clone(),
            pipeline,
            grid,
            block,
            buffer_params: spec.buffer_params(),
            var_bytes: var_bytes(spec),
        })
    }

    fn fail(&self, message: String) -> Error {
        Error::Launch { device: self.device.clone(), kernel: self.name.clone(), message }
    }
}

impl Program for MetalProgram {
    fn launch(&self, bufs: &[&DeviceMemory], vals: &[i64], wait: bool) -> Result<f64> {
        let needed = self.buffer_params.last().map_or(0, |&k| k + 1);
        if bufs.len() < needed || vals.len() != self.var_bytes.len() {
            return Err(self.fail(format!(
                "{} buffers and {} values given, the kernel takes {needed} and {}",
                bufs.len(),
                vals.len(),
                self.var_bytes.len()
            )));
        }
        if self.grid.contains(&0) {
            return Ok(0.0);
        }
        let mut last = self.queue.last.lock().unwrap_or_else(|e| e.into_inner());
        let cb = self.queue.queue.commandBuffer().ok_or_else(|| self.fail("no command buffer".into()))?;
        let enc = cb.computeCommandEncoder().ok_or_else(|| self.fail("no compute encoder".into()))?;
        enc.setComputePipelineState(&self.pipeline.state);
        for (k, &b) in self.buffer_params.iter().enumerate() {
            let buffer = bufs[b].downcast::<MetalMemory>().buffer.as_deref();
            // SAFETY: index k is the kernel's `[[buffer(k)]]` parameter for this buffer (the
            // renderer numbers parameters in this order); the command buffer retains the buffer
            // until it completes; the kernel stays inside the sizes the scheduler gave it.
            unsafe { enc.setBuffer_offset_atIndex(buffer, 0, k) };
        }
        let slots = value_slots(vals, &self.var_bytes);
        for (j, (slot, &n)) in slots.iter().zip(&self.var_bytes).enumerate() {
            // SAFETY: `slot` holds the value's `n` bytes at its front and is copied by setBytes
            // before it returns; the index follows the buffers, as the renderer numbers them.
            unsafe { enc.setBytes_length_atIndex(NonNull::from(slot).cast(), n, self.buffer_params.len() + j) };
        }
        let size = |v: [u32; 3]| MTLSize { width: v[0] as usize, height: v[1] as usize, depth: v[2] as usize };
        enc.dispatchThreadgroups_threadsPerThreadgroup(size(self.grid), size(self.block));
        enc.endEncoding();
        cb.commit();
        if !wait {
            *last = Some(cb);
            return Ok(0.0);
        }
        *last = None;
        completed(&cb).map_err(|e| self.fail(e))?;
        Ok((cb.GPUEndTime() - cb.GPUStartTime()).max(0.0))
    }
}
