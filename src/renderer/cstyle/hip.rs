//! The HIP dialect (AMD GPUs, compiled by hiprtc or clang's amdgcn-amd-amdhsa target).

use super::cuda::cuda_dialect;
use super::dialect::CDialect;

/// HIP C++ is CUDA C++ as far as generated kernels go: the same `extern "C" __global__`
/// kernels, `blockIdx`/`blockDim`/`threadIdx`, `__shared__`, `__syncthreads()`, math functions
/// (which HIP maps to AMD's ocml), `__int_as_float` and device `memcpy`; hiprtc includes the HIP
/// headers itself. What differs is the launch bound: the kernels are compiled for up to 1024
/// threads per block (the most any AMD GPU takes, and what the device allows), said explicitly
/// rather than left to the compiler's default (256 in older ROCm). FMA contraction is turned off
/// by the compile options (`-ffp-contract=off`), not in the source.
pub fn hip_dialect() -> CDialect {
    CDialect { kernel_prefix: "extern \"C\" __global__ __launch_bounds__(1024) ", ..cuda_dialect() }
}
