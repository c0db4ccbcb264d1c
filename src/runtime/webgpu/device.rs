//! The WebGPU device: adapter and device discovery, memory, pipelines through the compile cache.

use super::exact_spirv::exact_spirv;
use super::program::{padded, Built, Shared, WebGpuMemory, WebGpuProgram, MAX_GROUPS_PER_DIM};
use crate::error::{Error, Result};
use crate::helpers::{debug_level, stable_hash_hex};
use crate::renderer::wgsl::{unsupported, WgslRenderer};
use crate::renderer::{ProgramSpec, Renderer, Target};
use crate::runtime::backend::{Backend, DeviceMemory, Program};
use crate::runtime::compile_cache::{CompileCache, Todo};
use crate::uop::Ops;
use std::sync::{Arc, Mutex};

const INSTALL_HINT: &str = "install a Vulkan driver: on Debian/Ubuntu `apt-get install mesa-vulkan-drivers \
                            libvulkan1` gives lavapipe (a CPU Vulkan device), or your GPU vendor's driver; \
                            `vulkaninfo --summary` lists what Vulkan sees";

pub struct WebGpuDevice {
    shared: Arc<Shared>,
    renderer: WgslRenderer,
    int64: bool,
    f64: bool,
    /// Kernels reach the driver as SPIR-V with exact float operations (`exact_spirv.rs`):
    /// on Vulkan, where wgpu passes SPIR-V through.
    exact_floats: bool,
    /// Largest buffer one binding may cover.
    max_binding: u64,
    identity: String,
    cache: CompileCache<Built>,
    /// wgpu keeps one stack of error scopes per device: a scope is pushed and popped under this
    /// lock, so builds on compiler threads and allocations do not interleave their scopes.
    scopes: Mutex<()>,
}

/// Opens `WEBGPU` (the registry's opener).
pub fn open(name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(WebGpuDevice::open(name)?))
}

impl WebGpuDevice {
    pub fn open(name: &str) -> Result<WebGpuDevice> {
        let unavailable = |reason: String| Error::DeviceUnavailable { device: name.to_string(), reason };
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::PRIMARY,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| unavailable(format!("wgpu found no adapter ({e}); {INSTALL_HINT}")))?;
        let info = adapter.get_info();
        let mut wanted = wgpu::Features::SHADER_INT64 | wgpu::Features::SHADER_F64;
        if info.backend == wgpu::Backend::Vulkan {
            wanted |= wgpu::Features::PASSTHROUGH_SHADERS;
        }
        let features = adapter.features() & wanted;
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("ferrograd"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| unavailable(format!("creating a device on {} failed: {e}", info.name)))?;
        let int64 = features.contains(wgpu::Features::SHADER_INT64);
        let f64 = features.contains(wgpu::Features::SHADER_F64);
        let exact_floats = features.contains(wgpu::Features::PASSTHROUGH_SHADERS);
        let local =
            (limits.max_compute_workgroup_size_x as usize).min(limits.max_compute_invocations_per_workgroup as usize);
        let target = Target {
            has_local: true,
            has_threads: false,
            threads: 1,
            supports_f64: f64,
            // SPIR-V's GLSL.std.450 transcendentals are 32-bit only.
            f64_transcendentals: false,
            // Groups are dispatched over two dimensions; indices are i32 in the shader.
            global_max: [i32::MAX as usize; 3],
            local_max: [
                local,
                limits.max_compute_workgroup_size_y as usize,
                limits.max_compute_workgroup_size_z as usize,
            ],
            local_max_total: limits.max_compute_invocations_per_workgroup as usize,
            simd_bytes: 0,
            vector_registers: 0,
            ..Target::cpu(name)
        };
        let floats =
            if exact_floats { "exact floats (SPIR-V NoContraction)" } else { "floats as the driver compiles them" };
        let identity =
            format!("WebGPU {} ({:?}, {} {}), {floats}", info.name, info.backend, info.driver, info.driver_info);
        if debug_level() >= 1 {
            eprintln!("{name}: {identity}, int64 {int64}, f64 {f64}");
        }
        // A validation error outside an error scope would panic in wgpu's default handler; every
        // call that can fail runs in a scope, so reaching this is a bug worth a clear message.
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| eprintln!("WEBGPU: uncaptured error: {e}")));
        Ok(WebGpuDevice {
            shared: Arc::new(Shared { name: name.to_string(), device, queue }),
            renderer: WgslRenderer { target },
            int64,
            f64,
            exact_floats,
            max_binding: limits.max_storage_buffer_binding_size as u64,
            identity,
            cache: CompileCache::default(),
            scopes: Mutex::new(()),
        })
    }

    /// Launch geometry of a spec: work-group size and number of groups.
    fn geometry(spec: &ProgramSpec) -> (usize, usize) {
        let local = spec.local_size.map_or(1, |l| l[0]).max(1);
        (local, spec.global_size[0].div_ceil(local).max(1))
    }

    fn key(spec: &ProgramSpec) -> String {
        let (local, groups) = Self::geometry(spec);
        stable_hash_hex(&[spec.src.as_bytes(), &local.to_le_bytes(), &groups.to_le_bytes()])
    }

    /// Validates and builds one kernel's pipeline; a WGSL error names the kernel and, at DEBUG>=1,
    /// shows the source.
    fn build(&self, spec: &ProgramSpec) -> Result<Arc<Built>> {
        let fail = |message: String| Error::Compile {
            device: self.shared.name.clone(),
            kernel: spec.name.clone(),
            message: if debug_level() >= 1 { format!("{message}\nsource:\n{}", spec.src) } else { message },
        };
        if let Some(why) = unsupported(&spec.uops, self.int64, self.f64) {
            return Err(fail(why));
        }
        let (local, groups) = Self::geometry(spec);
        if groups > MAX_GROUPS_PER_DIM * MAX_GROUPS_PER_DIM {
            return Err(fail(format!("{groups} work groups are more than WebGPU can dispatch")));
        }
        let device = &self.shared.device;
        let written: Vec<usize> = spec
            .uops
            .iter()
            .filter(|u| u.op() == Ops::STORE && u.src()[0].op() == Ops::INDEX)
            .filter(|u| u.src()[0].src()[0].op() == Ops::DEFINE_GLOBAL)
            .map(|u| u.src()[0].src()[0].arg_int() as usize)
            .collect();
        let buffer_entry = |binding: usize, read_only: bool| wgpu::BindGroupLayoutEntry {
            binding: binding as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let params = spec.buffer_params();
        let mut entries: Vec<wgpu::BindGroupLayoutEntry> =
            params.iter().enumerate().map(|(k, i)| buffer_entry(k, !written.contains(i))).collect();
        if spec.uops.iter().any(|u| u.op() == Ops::DEFINE_VAR) {
            entries.push(buffer_entry(params.len(), true));
        }
        let _scopes = self.scopes.lock().unwrap_or_else(|e| e.into_inner());
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let constants = [("fg_local", local as f64), ("fg_groups", groups as f64)];
        let (module, constants): (_, &[(&str, f64)]) = if self.exact_floats {
            let spirv = exact_spirv(&spec.src, &spec.name, &constants).map_err(fail)?;
            let desc = wgpu::ShaderModuleDescriptorPassthrough {
                label: Some(&spec.name),
                entry_points: vec![wgpu::PassthroughShaderEntryPoint {
                    name: spec.name.as_str().into(),
                    workgroup_size: (local as u32, 1, 1),
                }]
                .into(),
                spirv: Some(spirv.into()),
                ..Default::default()
            };
            // SAFETY: the SPIR-V is naga's translation of WGSL that naga validated just now, with
            // the checks wgpu's own translation has (restricted indexing, guarded division,
            // bounded loops); the only change is `NoContraction` decorations, which constrain
            // how the driver may compile float operations and nothing else. Its bindings are
            // the WGSL's, matching `layout` below, and its overrides are already applied.
            (unsafe { device.create_shader_module_passthrough(desc) }, &[])
        } else {
            let source = wgpu::ShaderSource::Wgsl(spec.src.as_str().into());
            (device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(&spec.name), source }), &constants)
        };
        let layout =
            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: None, entries: &entries });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&spec.name),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some(&spec.name),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants,
                zero_initialize_workgroup_memory: false,
            },
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(fail(format!("wgpu rejected the kernel: {e}")));
        }
        Ok(Arc::new(Built { pipeline, layout }))
    }

    fn memory<'a>(&self, m: &'a DeviceMemory) -> Result<&'a WebGpuMemory> {
        m.inner
            .downcast_ref::<WebGpuMemory>()
            .ok_or_else(|| Error::Other(format!("{}: memory of another device", self.shared.name)))
    }

    fn size_err(&self, what: &str, have: usize, want: usize) -> Error {
        Error::Other(format!("{}: {what} {have} bytes, the buffer holds {want}", self.shared.name))
    }
}

impl Backend for WebGpuDevice {
    fn compiler_identity(&self) -> Option<String> {
        Some(self.identity.clone())
    }

    fn name(&self) -> &str {
        &self.shared.name
    }

    fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        let size = padded(bytes);
        if size > self.max_binding {
            return Err(Error::OutOfMemory { device: self.shared.name.clone(), bytes });
        }
        let device = &self.shared.device;
        let _scopes = self.scopes.lock().unwrap_or_else(|e| e.into_inner());
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        if pollster::block_on(scope.pop()).is_some() {
            return Err(Error::OutOfMemory { device: self.shared.name.clone(), bytes });
        }
        Ok(DeviceMemory { bytes, inner: Box::new(WebGpuMemory { buf }) })
    }

    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()> {
        let mem = self.memory(dst)?;
        if src.len() != dst.bytes {
            return Err(self.size_err("copying in", src.len(), dst.bytes));
        }
        if src.is_empty() {
            return Ok(());
        }
        // wgpu copies whole words: the tail of the last word is zeros.
        let tail = padded(src.len()) as usize - src.len();
        if tail == 0 {
            self.shared.queue.write_buffer(&mem.buf, 0, src);
        } else {
            let mut words = src.to_vec();
            words.resize(src.len() + tail, 0);
            self.shared.queue.write_buffer(&mem.buf, 0, &words);
        }
        Ok(())
    }

    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()> {
        let mem = self.memory(src)?;
        if dst.len() != src.bytes {
            return Err(self.size_err("copying out", dst.len(), src.bytes));
        }
        if dst.is_empty() {
            return Ok(());
        }
        let device = &self.shared.device;
        let size = padded(dst.len());
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("fg_read"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.copy_buffer_to_buffer(&mem.buf, 0, &staging, 0, size);
        self.shared.submit(encoder, false)?;
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        let fail = |what: String| Error::Other(format!("{}: reading device memory failed: {what}", self.shared.name));
        device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| fail(e.to_string()))?;
        rx.recv().map_err(|e| fail(e.to_string()))?.map_err(|e| fail(e.to_string()))?;
        {
            let view = staging.get_mapped_range(..).map_err(|e| fail(e.to_string()))?;
            dst.copy_from_slice(&view[..dst.len()]);
        }
        staging.unmap();
        Ok(())
    }

    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }

    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        let keys: Vec<String> = specs.iter().map(|s| Self::key(s)).collect();
        let build = |group: &[Todo]| group.iter().map(|(_, spec)| self.build(spec)).collect();
        let built = self.cache.get_or_build(&keys, specs, |_, _| None, build)?;
        Ok(built
            .into_iter()
            .zip(specs)
            .map(|(built, spec)| {
                Arc::new(WebGpuProgram {
                    name: spec.name.clone(),
                    shared: self.shared.clone(),
                    built,
                    bufs: spec.buffer_params(),
                    n_vars: spec.uops.iter().filter(|u| u.op() == Ops::DEFINE_VAR).count(),
                    groups: Self::geometry(spec).1,
                }) as Arc<dyn Program>
            })
            .collect())
    }

    fn synchronize(&self) -> Result<()> {
        self.shared
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| Error::Other(format!("{}: waiting for the device failed: {e}", self.shared.name)))
    }
}
