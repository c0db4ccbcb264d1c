//! The C-style renderer. One walk over the linear program prints C; a `CDialect` supplies the
//! few things that differ between C, OpenCL C, CUDA C, HIP, Metal and Adreno's OpenCL C (kernel prefix, buffer qualifiers,
//! index builtins, barrier, type names, math function names, the argument-passing entry).
//!
//! Single-use ALU results are inlined into their user; everything else gets a named variable
//! (`alu3`, `val0`, `acc1`, `ridx2`), so the source stays readable at DEBUG=4.
//!
//! The parts: `dialect` (what a dialect supplies), one file per dialect (`c`, `opencl`,
//! `cuda`, `hip`, `metal`, `qcom`), `prelude` (the 16-bit float and saturating-cast helpers they share), `literal`
//! (constants and casts), `vector` (GCC/Clang vector types), `render` (the walk itself).

#[macro_use]
mod prelude;
mod c;
mod cuda;
mod dialect;
mod hip;
mod literal;
mod metal;
mod opencl;
mod qcom;
mod render;
mod vector;

pub use c::{c_dialect, c_type};
pub use cuda::cuda_dialect;
pub use dialect::CDialect;
pub use hip::hip_dialect;
pub use literal::c_const;
pub use metal::{metal_dialect, metal_lacks, metal_renderer, metal_target};
pub use opencl::{opencl_dialect, opencl_type};
pub use qcom::qcom_dialect;
pub use render::CStyleRenderer;
