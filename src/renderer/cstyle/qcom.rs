//! The QCOM dialect: OpenCL C as Qualcomm's Adreno GPUs take it.

use super::dialect::CDialect;
use super::opencl::opencl_dialect;

/// OpenCL C for Adreno (what tinygrad's QCOM device renders): the OpenCL dialect, with f16
/// values converted by OpenCL's own `half` built-ins (`vload_half`, `vstore_half_rte`: core
/// OpenCL 1.2, no `cl_khr_fp16` needed, one hardware conversion each on Adreno) instead of the
/// integer arithmetic the other dialects use; f16 stays stored as 16-bit patterns and computed in
/// f32, so results are bit-identical. Adreno has no f64 (the device reports it: kernels using
/// it fail to build, naming `double`). Work-group rules are the device's: at most
/// `CL_KERNEL_WORK_GROUP_SIZE` threads for each built kernel, checked before its launch.
pub fn qcom_dialect() -> CDialect {
    CDialect { prelude: QCOM_PRELUDE, ..opencl_dialect() }
}

const QCOM_PRELUDE: &str = concat!(
    opencl_header!(),
    r#"/* f16 and bf16 are stored as 16-bit integers and computed in float; f16 converts by OpenCL's half built-ins. */
FG_FN float __h2f(ushort h) { return vload_half(0, (const half*)&h); }
FG_FN ushort __f2h(float f) { ushort h; vstore_half_rte(f, 0, (half*)&h); return h; }
"#,
    bf16_prelude!()
);
