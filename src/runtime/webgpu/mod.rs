//! WebGPU (`DEV=WEBGPU`, feature `webgpu`): kernels rendered as WGSL (`renderer/wgsl`), compiled
//! by wgpu (naga) into compute pipelines and run on the adapter wgpu finds — Vulkan, Metal or
//! DX12 natively; in CI Mesa's lavapipe, a software Vulkan driver. A machine without an adapter
//! gets `Error::DeviceUnavailable` saying what to install.
//!
//! 64-bit integers and f64 are used where the adapter has wgpu's native `SHADER_INT64` /
//! `SHADER_F64` (lavapipe has both; browsers have neither): elsewhere a kernel needing them is
//! an `Error::Compile` naming the op and dtype. 8/16-bit dtypes and bool are packed into 32-bit
//! words in memory (stores by atomics), as the host stores them.
//!
//! On Vulkan the WGSL is compiled to SPIR-V here with every float operation marked exact
//! (`exact_spirv`), so the driver cannot rewrite `x - x` to 0 or fold NaN comparisons; other
//! backends compile the WGSL as wgpu does.
//!
//! The parts: `program` (memory, pipelines, launch), `exact_spirv` and `device` (the `Backend`).

mod device;
mod exact_spirv;
mod program;

pub use device::{open, WebGpuDevice};
