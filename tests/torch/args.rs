//! Arguments and edge semantics PyTorch users expect; fixture made by
//! `scripts/torch_fixtures/cases_args.py` (same order).

use super::CaseFn;
use ferrograd::tensor::{ConvOpts, InterpMode, PadMode};
use ferrograd::{DType, Tensor};

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // ---------------------------------------------------------------- creation with a dtype
        ("arange_int32", |_| Tensor::arange_dtype(2.0, 20.0, 3.0, DType::I32)),
        ("arange_int64_negative_step", |_| Tensor::arange_dtype(10.0, -7.0, -4.0, DType::I64)),
        ("arange_float64", |_| Tensor::arange_dtype(0.5, 3.0, 0.25, DType::F64)),
        ("arange_int_fractional_step", |_| Tensor::arange_dtype(0.0, 5.0, 1.5, DType::I64)),
        ("linspace_int", |_| Tensor::linspace_dtype(0.0, 10.0, 5, DType::I64)),
        ("linspace_float16", |_| Tensor::linspace_dtype(-1.0, 1.0, 9, DType::F16)),
        ("eye_rect", |_| Tensor::eye_dtype(3, 5, DType::F32)),
        ("eye_int", |_| Tensor::eye_dtype(4, 2, DType::I32)),
        ("full_int", |_| Tensor::full_as([2, 3], 7.0, DType::I32)),
        ("zeros_f64", |_| Tensor::zeros_dtype([2, 2], DType::F64)),
        ("ones_like_int", |x| x[0].ones_like_dtype(DType::I64)),
        ("full_like_f16", |x| x[0].full_like_dtype(2.5, DType::F16)),
        // ---------------------------------------------------------------- reductions with dtype / keepdim
        ("sum_dtype_f64", |x| x[0].sum_as(DType::F64, 1, false)),
        ("sum_dtype_int_of_bool", |x| x[0].sum_as(DType::I64, 0, false)),
        ("sum_dtype_keepdim", |x| x[0].sum_as(DType::I32, 1, true)),
        ("prod_dtype", |x| x[0].prod_as(DType::I64, 1, false)),
        ("mean_dtype", |x| x[0].mean_as(DType::F64, 0, false)),
        ("cumsum_dtype", |x| x[0].cumsum_as(1, DType::F64)),
        ("cumsum_dtype_int", |x| x[0].cumsum_as(0, DType::I32)),
        ("sum_runtime_all_keepdim", |x| x[0].sum_with(None::<Vec<isize>>, true)),
        ("sum_runtime_axes", |x| x[0].sum_with(Some(vec![0, 2]), false)),
        ("max_runtime_keepdim", |x| x[0].max_with(vec![1], true)),
        ("mean_runtime_keepdim", |x| x[0].mean_with([-1, 0], true)),
        // ---------------------------------------------------------------- functional norms
        ("layer_norm", |x| x[0].layer_norm(&[3, 4], Some(&x[1]), Some(&x[2]), 1e-5)),
        ("layer_norm_no_affine", |x| x[0].layer_norm(&[5], None, None, 1e-5)),
        ("group_norm", |x| x[0].group_norm(2, Some(&x[1]), Some(&x[2]), 1e-5)),
        ("instance_norm", |x| x[0].instance_norm(Some(&x[1]), Some(&x[2]), 1e-5)),
        ("batch_norm_train", |x| x[0].batch_norm(None, None, Some(&x[1]), Some(&x[2]), true, 0.1, 1e-5)),
        ("batch_norm_eval", |x| {
            let var = x[2].abs() + 0.5;
            x[0].batch_norm(Some(&x[1]), Some(&var), Some(&x[3]), Some(&x[4]), false, 0.1, 1e-5)
        }),
        ("rms_norm", |x| x[0].rms_norm(&[4], Some(&x[1]), None)),
        ("rms_norm_two_axes", |x| x[0].rms_norm(&[3, 4], None, Some(1e-6))),
        // ---------------------------------------------------------------- gelu, scalars on the left
        ("gelu_none", |x| x[0].gelu_approximate("none")),
        ("gelu_tanh", |x| x[0].gelu_approximate("tanh")),
        ("rpow", |x| x[0].rpow(2.0)),
        ("rpow_tensor_base", |x| x[0].rpow(0.5) * 3.0),
        ("rmod_float", |x| 7.0 % &x[0]),
        ("rmod_int", |x| 17 % &x[0]),
        ("rsub_rdiv", |x| (1.0 - &x[0]) / (2.0 / (x[0].abs() + 1.0))),
        // ---------------------------------------------------------------- 0-d tensors take axis 0 / -1
        ("sum_0d_axis0", |x| x[0].sum_with(0, false) * 2.0),
        ("sum_0d_axis_neg1_keepdim", |x| x[0].sum_with(-1, true) * 3.0),
        ("max_0d_axis0", |x| x[0].max_with(0, false)),
        ("logsumexp_0d", |x| x[0].logsumexp(0)),
        ("squeeze_0d", |x| x[0].squeeze(0) + 1.0),
        ("mean_0d_axis", |x| x[0].mean_with(-1, false)),
        // ---------------------------------------------------------------- negative padding
        ("pad_reflect_crop", |x| x[0].pad_mode(&[(-1, 2)], PadMode::Reflect)),
        ("pad_replicate_crop", |x| x[0].pad_mode(&[(2, -3)], PadMode::Replicate)),
        ("pad_circular_crop", |x| x[0].pad_mode(&[(-1, 2)], PadMode::Circular)),
        ("pad_reflect_crop_2d", |x| x[0].pad_mode(&[(-1, 2), (1, -2)], PadMode::Reflect)),
        ("pad_reflect_crop_wide", |x| x[0].pad_mode(&[(-2, 5)], PadMode::Reflect)),
        ("pad_reflect_crop_wide_left", |x| x[0].pad_mode(&[(4, -3)], PadMode::Reflect)),
        ("pad_reflect_crop_both_axes", |x| x[0].pad_mode(&[(2, -1), (-1, 2)], PadMode::Reflect)),
        ("pad_replicate_crop_wide", |x| x[0].pad_mode(&[(4, -5)], PadMode::Replicate)),
        ("pad_circular_crop_left", |x| x[0].pad_mode(&[(2, -1)], PadMode::Circular)),
        ("conv2d_negative_padding", |x| {
            x[0].conv2d(&x[1], None, &ConvOpts::default().padding_signed(&[(-1, -1), (1, 1)]))
        }),
        ("conv2d_mixed_padding", |x| {
            x[0].conv2d(&x[1], None, &ConvOpts::default().stride([2, 1]).padding_signed(&[(-1, 2), (0, -1)]))
        }),
        // ---------------------------------------------------------------- pow at special points
        ("pow_inf_bases", |x| x[0].pow(&x[1])),
        ("pow_zero_exponent_grad", |x| x[0].pow(0.0)),
        ("pow_inf_exponent", |x| x[0].pow(&x[1])),
        // ---------------------------------------------------------------- interpolate keeps int dtypes
        ("interp_nearest_uint8", |x| x[0].interpolate(&[4], InterpMode::Nearest, false)),
        ("interp_nearest_uint8_2d", |x| x[0].interpolate(&[5, 4], InterpMode::Nearest, false)),
        ("interp_bilinear_uint8_up", |x| x[0].interpolate(&[10, 10], InterpMode::Linear, false)),
        ("interp_bilinear_uint8_down", |x| x[0].interpolate(&[4, 6], InterpMode::Linear, false)),
        ("interp_bilinear_uint8_align", |x| x[0].interpolate(&[9, 4], InterpMode::Linear, true)),
        ("interp_bilinear_uint8_width_only", |x| x[0].interpolate(&[3, 11], InterpMode::Linear, false)),
        ("interp_bilinear_uint8_from1", |x| x[0].interpolate(&[3, 5], InterpMode::Linear, false)),
        // ---------------------------------------------------------------- zero gradients
        ("grad_sign", |x| x[0].sign() * 2.0),
        ("grad_round", |x| x[0].round()),
        ("grad_floor_ceil", |x| x[0].floor() + x[0].ceil()),
        ("grad_comparison", |x| x[0].lt(&x[1]).cast(DType::F32) + x[0].eq(&x[1]).cast(DType::F32)),
        ("grad_pow_zero", |x| x[0].pow(0)),
    ]
}
