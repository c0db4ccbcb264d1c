//! WebGPU memory, compute pipelines and their launch.

use crate::error::{Error, Result};
use crate::runtime::backend::{DeviceMemory, Program};
use std::sync::Arc;

/// Most work groups per dispatch dimension (WebGPU's minimum limit, which every adapter has).
pub(super) const MAX_GROUPS_PER_DIM: usize = 65_535;

/// What the device and its programs share (the queue runs submissions in order).
pub(super) struct Shared {
    pub(super) name: String,
    pub(super) device: wgpu::Device,
    pub(super) queue: wgpu::Queue,
}

impl Shared {
    /// Submits `encoder` and, when `wait`, blocks until the device has finished it.
    pub(super) fn submit(&self, encoder: wgpu::CommandEncoder, wait: bool) -> Result<()> {
        let index = self.queue.submit([encoder.finish()]);
        if wait {
            self.device
                .poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None })
                .map_err(|e| Error::Other(format!("{}: waiting for the device failed: {e}", self.name)))?;
        }
        Ok(())
    }
}

/// One allocation: a storage buffer of the requested bytes rounded up to whole 32-bit words
/// (at least one), since WGSL reads memory in words and wgpu copies in multiples of 4 bytes.
pub struct WebGpuMemory {
    pub(super) buf: wgpu::Buffer,
}

/// Bytes a buffer of `bytes` occupies on the device.
pub(super) fn padded(bytes: usize) -> u64 {
    (bytes.max(1).div_ceil(4) * 4) as u64
}

/// A compute pipeline and the layout of its bindings.
pub(super) struct Built {
    pub(super) pipeline: wgpu::ComputePipeline,
    pub(super) layout: wgpu::BindGroupLayout,
}

/// A kernel with its launch geometry.
pub struct WebGpuProgram {
    pub(super) name: String,
    pub(super) shared: Arc<Shared>,
    pub(super) built: Arc<Built>,
    /// The schedule's buffer numbers bound at bindings 0, 1, …
    pub(super) bufs: Vec<usize>,
    pub(super) n_vars: usize,
    pub(super) groups: usize,
}

impl WebGpuProgram {
    fn launch_err(&self, message: String) -> Error {
        Error::Launch { device: self.shared.name.clone(), kernel: self.name.clone(), message }
    }
}

impl Program for WebGpuProgram {
    fn launch(&self, bufs: &[&DeviceMemory], vals: &[i64], wait: bool) -> Result<f64> {
        if vals.len() != self.n_vars {
            return Err(self.launch_err(format!(
                "{} symbolic values given, the kernel takes {}",
                vals.len(),
                self.n_vars
            )));
        }
        let mut mems: Vec<&wgpu::Buffer> = Vec::with_capacity(self.bufs.len());
        for &i in &self.bufs {
            let m = bufs.get(i).ok_or_else(|| self.launch_err(format!("buffer {i} missing ({} given)", bufs.len())))?;
            let m = m
                .inner
                .downcast_ref::<WebGpuMemory>()
                .ok_or_else(|| self.launch_err(format!("buffer {i} is not WebGPU memory of {}", self.shared.name)))?;
            mems.push(&m.buf);
        }
        // WebGPU binds a buffer once per dispatch when it is written: the schedule never gives
        // one kernel the same buffer twice, but a wrong caller gets an error, not a validation
        // panic.
        for (k, a) in mems.iter().enumerate() {
            if mems[..k].iter().any(|b| b == a) {
                return Err(self.launch_err(format!("buffer {} is bound twice", self.bufs[k])));
            }
        }
        let device = &self.shared.device;
        let vars_buf = (self.n_vars > 0).then(|| {
            let words: Vec<u8> = vals.iter().flat_map(|&v| (v as i32).to_le_bytes()).collect();
            let b = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("fg_vars"),
                size: words.len() as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.shared.queue.write_buffer(&b, 0, &words);
            b
        });
        let mut entries: Vec<wgpu::BindGroupEntry> = mems
            .iter()
            .enumerate()
            .map(|(k, b)| wgpu::BindGroupEntry { binding: k as u32, resource: b.as_entire_binding() })
            .collect();
        if let Some(v) = &vars_buf {
            entries.push(wgpu::BindGroupEntry { binding: mems.len() as u32, resource: v.as_entire_binding() });
        }
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &self.built.layout,
            entries: &entries,
        });
        let start = std::time::Instant::now();
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass =
                encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
            pass.set_pipeline(&self.built.pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            let x = self.groups.min(MAX_GROUPS_PER_DIM);
            pass.dispatch_workgroups(x as u32, self.groups.div_ceil(x) as u32, 1);
        }
        self.shared.submit(encoder, wait)?;
        Ok(if wait { start.elapsed().as_secs_f64() } else { 0.0 })
    }
}
