//! Renderers: linear program UOps → source text in a dialect (C, OpenCL C, CUDA C, ...).

mod block_text;
pub mod cstyle;
pub(crate) mod program;
pub mod ptx;
pub mod wgsl;

pub use program::ProgramSpec;

use crate::uop::UOp;

/// What the code generator needs to know about a target.
#[derive(Clone, Debug)]
pub struct Target {
    /// Device name (for kernel names and caches).
    pub device: String,
    /// Work groups with local indices, local memory and barriers (GPU-style launch).
    pub has_local: bool,
    /// A CPU thread pool that THREAD axes can use.
    pub has_threads: bool,
    /// How many threads a THREAD axis should use.
    pub threads: usize,
    /// Native f16/bf16 arithmetic; otherwise they compute in f32.
    pub native_half: bool,
    pub supports_f64: bool,
    /// f64 `EXP2`/`LOG2`/`SIN` in the target's language; otherwise a lowering rule computes
    /// them with f64 arithmetic (`codegen/transcendental.rs`).
    pub f64_transcendentals: bool,
    /// Largest global size per dimension (GPU).
    pub global_max: [usize; 3],
    /// Largest local size per dimension and in total (GPU).
    pub local_max: [usize; 3],
    pub local_max_total: usize,
    /// Width in bytes of the SIMD registers that the innermost UPCAST axis is rendered for, as
    /// explicit vectors (0: no explicit vectors; the axis is unrolled into scalars).
    pub simd_bytes: usize,
    /// How many of those SIMD registers the instruction set names (16 on AVX2, 32 on AVX-512
    /// and NEON): register tiles are sized to fit in them. 0 where they are not modelled (GPUs).
    pub vector_registers: usize,
}

impl Target {
    /// A GPU with the limits CUDA guarantees (1024 threads per block, 64 in z; 2^31-1 blocks in
    /// x, 65535 in y and z); devices refine them from what they report.
    pub fn gpu(device: &str) -> Target {
        Target {
            has_local: true,
            has_threads: false,
            threads: 1,
            native_half: false,
            supports_f64: true,
            global_max: [i32::MAX as usize, 65535, 65535],
            local_max: [1024, 1024, 64],
            local_max_total: 1024,
            simd_bytes: 0,
            vector_registers: 0,
            ..Target::cpu(device)
        }
    }

    pub fn cpu(device: &str) -> Target {
        Target {
            device: device.to_string(),
            has_local: false,
            has_threads: true,
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            native_half: false,
            supports_f64: true,
            f64_transcendentals: true,
            global_max: [usize::MAX; 3],
            local_max: [1; 3],
            local_max_total: 1,
            simd_bytes: host_simd_bytes(),
            vector_registers: host_vector_registers(),
        }
    }
}

/// The widest SIMD registers of this CPU (the C compiler targets it with `-march=native`).
fn host_simd_bytes() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 64;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return 32;
        }
    }
    16
}

/// How many SIMD registers the host's instruction set names: AVX-512 doubles x86-64's 16,
/// AArch64 has 32 NEON registers.
fn host_vector_registers() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 32;
        }
    }
    if cfg!(target_arch = "aarch64") {
        32
    } else {
        16
    }
}

/// Prints a linearized program in one dialect.
pub trait Renderer: Send + Sync {
    fn target(&self) -> &Target;
    /// Source text of the kernel `name` from its linear program.
    fn render(&self, name: &str, uops: &[UOp]) -> String;
}
