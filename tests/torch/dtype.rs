//! Dtype semantics; fixture made by `scripts/torch_fixtures/cases_dtype.py` (same order).

use super::CaseFn;
use ferrograd::{DType, Tensor};

fn where_max(a: &Tensor, b: &Tensor) -> Tensor {
    a.gt(b).where_(a, b * 2.0).max_axis(1)
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // ---------------------------------------------------------------- 16-bit floats, primitives
        ("f16_add_exact", |x| &x[0] + &x[1]),
        ("f16_mul_exact", |x| &x[0] * &x[1]),
        ("f16_sub_broadcast_exact", |x| &x[0] - &x[1]),
        ("f16_div", |x| &x[0] / &x[1]),
        ("f16_sqrt_exact", |x| x[0].sqrt()),
        ("f16_overflow_to_inf", |x| &x[0] * &x[1] + &x[0]),
        ("f16_subnormal", |x| &x[0] * &x[1]),
        ("bf16_add_mul_exact", |x| &x[0] * &x[1] + &x[1]),
        ("bf16_large_exact", |x| &x[0] * &x[1]),
        // ---------------------------------------------------------------- 16-bit floats, composites
        ("f16_exp", |x| x[0].exp()),
        ("f16_log", |x| x[0].log()),
        ("f16_sigmoid", |x| x[0].sigmoid()),
        ("f16_tanh", |x| x[0].tanh()),
        ("f16_cos", |x| x[0].cos()),
        ("bf16_exp_log", |x| x[0].exp() + x[0].log()),
        ("f16_sum", |x| x[0].sum_axis(1)),
        ("f16_mean_keepdim", |x| x[0].mean_keepdim(0)),
        ("f16_softmax", |x| x[0].softmax(-1)),
        ("f16_max_where", |x| where_max(&x[0], &x[1])),
        // ---------------------------------------------------------------- casts
        ("cast_f32_to_f16_rounding", |x| x[0].cast(DType::F16)),
        ("cast_f32_to_bf16_rounding", |x| x[0].cast(DType::BF16)),
        ("cast_f16_to_int_truncates", |x| x[0].cast(DType::I32)),
        ("cast_int_to_f16", |x| x[0].cast(DType::F16)),
        ("cast_f64_to_f32", |x| x[0].cast(DType::F32)),
        ("cast_i64_to_f32", |x| x[0].cast(DType::F32)),
        ("cast_bool_to_f16_grad_chain", |x| x[0].cast(DType::F16) * &x[1]),
        // ---------------------------------------------------------------- promotion
        ("promote_f16_bf16_to_f32", |x| &x[0] * &x[1] + &x[0]),
        ("promote_u8_i8_to_i16", |x| &x[0] * &x[1]),
        ("promote_bool_f16", |x| &x[0] + &x[1]),
        ("promote_i64_f16", |x| &x[0] * &x[1]),
        ("promote_f16_scalar_stays_f16", |x| &x[0] * 2.5 + 1),
        // ---------------------------------------------------------------- integer arithmetic
        ("int32_mul_wraps", |x| &x[0] * &x[1]),
        ("uint8_neg_wraps", |x| -&x[0]),
        ("int16_add_wraps", |x| &x[0] + &x[1]),
        ("floor_divide_int8", |x| x[0].floor_divide(&x[1])),
        ("remainder_int8", |x| &x[0] % &x[1]),
        ("floor_divide_int16_scalar", |x| x[0].floor_divide(-3)),
        ("remainder_int64_large", |x| &x[0] % &x[1]),
        ("floor_divide_int64_large", |x| x[0].floor_divide(&x[1])),
        ("remainder_int16", |x| &x[0] % &x[1]),
        ("floor_divide_uint32", |x| x[0].floor_divide(&x[1])),
        ("floor_divide_mixed_int_widths", |x| x[0].floor_divide(&x[1])),
        // ---------------------------------------------------------------- float64
        ("f64_arith_exact", |x| (&x[0] * &x[1] + &x[0]) / &x[1] - &x[1]),
        ("f64_exp_log_sqrt", |x| x[0].exp().log().sqrt() + x[0].sigmoid()),
    ]
}
