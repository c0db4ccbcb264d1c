//! Convolutions, pooling and interpolate; fixture made by `scripts/torch_fixtures/cases_conv.py`
//! (same order).

use super::CaseFn;
use ferrograd::tensor::{ConvOpts, InterpMode, PoolOpts};

fn c() -> ConvOpts {
    ConvOpts::default()
}
fn p() -> PoolOpts {
    PoolOpts::default()
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // ---------------------------------------------------------------- conv2d
        ("conv2d_basic", |x| x[0].conv2d(&x[1], None, &c())),
        ("conv2d_bias", |x| x[0].conv2d(&x[1], Some(&x[2]), &c())),
        ("conv2d_stride2", |x| x[0].conv2d(&x[1], None, &c().stride(2))),
        ("conv2d_pad1", |x| x[0].conv2d(&x[1], None, &c().padding(1))),
        ("conv2d_pad_per_dim", |x| x[0].conv2d(&x[1], None, &c().padding([1, 2]))),
        ("conv2d_pad_sides", |x| x[0].conv2d(&x[1], None, &c().padding([(1, 0), (2, 1)]))),
        ("conv2d_dilation2", |x| x[0].conv2d(&x[1], None, &c().dilation(2))),
        ("conv2d_groups2", |x| x[0].conv2d(&x[1], Some(&x[2]), &c().groups(2))),
        ("conv2d_depthwise", |x| x[0].conv2d(&x[1], None, &c().groups(3).padding(1))),
        ("conv2d_depthwise_mult", |x| x[0].conv2d(&x[1], None, &c().groups(2))),
        ("conv2d_all_options", |x| {
            x[0].conv2d(&x[1], Some(&x[2]), &c().stride([2, 1]).padding([1, 2]).dilation([2, 1]).groups(2))
        }),
        ("conv2d_rect_kernel_stride", |x| x[0].conv2d(&x[1], None, &c().stride([2, 1]))),
        ("conv2d_1x1", |x| x[0].conv2d(&x[1], Some(&x[2]), &c())),
        ("conv2d_stride_gt_kernel", |x| x[0].conv2d(&x[1], None, &c().stride(3))),
        ("conv2d_k3_s2_p1", |x| x[0].conv2d(&x[1], Some(&x[2]), &c().stride(2).padding(1))),
        ("conv2d_kernel_equals_input", |x| x[0].conv2d(&x[1], None, &c())),
        ("conv2d_unbatched", |x| x[0].conv2d(&x[1], None, &c().padding(1))),
        ("conv2d_noncontig_input", |x| x[0].transpose(2, 3).conv2d(&x[1], None, &c())),
        ("conv2d_dilation_stride", |x| x[0].conv2d(&x[1], None, &c().stride(2).dilation(3))),
        ("conv2d_big_stride_dilated", |x| x[0].conv2d(&x[1], None, &c().stride(5).dilation(2))),
        ("conv2d_relu_chain", |x| x[0].conv2d(&x[1], None, &c().padding(1)).relu().conv2d(&x[2], None, &c())),
        ("conv2d_empty_batch", |x| x[0].conv2d(&x[1], None, &c())),
        // ---------------------------------------------------------------- conv1d / conv3d
        ("conv1d_basic", |x| x[0].conv1d(&x[1], Some(&x[2]), &c())),
        ("conv1d_all_options", |x| x[0].conv1d(&x[1], None, &c().stride(2).padding(2).dilation(2).groups(2))),
        ("conv1d_k1_stride", |x| x[0].conv1d(&x[1], None, &c().stride(2))),
        ("conv3d_basic", |x| x[0].conv3d(&x[1], Some(&x[2]), &c())),
        ("conv3d_stride_pad", |x| x[0].conv3d(&x[1], None, &c().stride([2, 1, 2]).padding([1, 0, 1]))),
        // ---------------------------------------------------------------- conv_transpose
        ("conv_transpose2d_basic", |x| x[0].conv_transpose2d(&x[1], None, &c())),
        ("conv_transpose2d_bias", |x| x[0].conv_transpose2d(&x[1], Some(&x[2]), &c())),
        ("conv_transpose2d_stride2", |x| x[0].conv_transpose2d(&x[1], None, &c().stride(2))),
        ("conv_transpose2d_stride2_pad1_outpad1", |x| {
            x[0].conv_transpose2d(&x[1], None, &c().stride(2).padding(1).output_padding(1))
        }),
        ("conv_transpose2d_groups2", |x| x[0].conv_transpose2d(&x[1], Some(&x[2]), &c().groups(2).stride(2))),
        ("conv_transpose2d_dilation2", |x| x[0].conv_transpose2d(&x[1], None, &c().dilation(2).padding(1))),
        ("conv_transpose2d_rect", |x| {
            x[0].conv_transpose2d(&x[1], None, &c().stride([2, 1]).padding([1, 0]).output_padding([1, 0]))
        }),
        ("conv_transpose2d_pad_gt_kernel", |x| x[0].conv_transpose2d(&x[1], None, &c().padding(2).stride(2))),
        ("conv_transpose2d_all_options", |x| {
            let o = c().stride([2, 3]).padding([1, 1]).output_padding([1, 2]).groups(2).dilation([1, 2]);
            x[0].conv_transpose2d(&x[1], Some(&x[2]), &o)
        }),
        ("conv_transpose1d_basic", |x| x[0].conv_transpose1d(&x[1], Some(&x[2]), &c())),
        ("conv_transpose1d_stride3_outpad2", |x| x[0].conv_transpose1d(&x[1], None, &c().stride(3).output_padding(2))),
        // ---------------------------------------------------------------- max_pool2d
        ("max_pool2d_k2", |x| x[0].max_pool2d(2, &p())),
        ("max_pool2d_k3_s2", |x| x[0].max_pool2d(3, &p().stride(2))),
        ("max_pool2d_k3_s2_p1", |x| x[0].max_pool2d(3, &p().stride(2).padding(1))),
        ("max_pool2d_k2_s1", |x| x[0].max_pool2d(2, &p().stride(1))),
        ("max_pool2d_dilation2", |x| x[0].max_pool2d(3, &p().stride(1).dilation(2))),
        ("max_pool2d_ceil", |x| x[0].max_pool2d(2, &p().ceil_mode(true))),
        ("max_pool2d_ceil_pad", |x| x[0].max_pool2d(3, &p().stride(2).padding(1).ceil_mode(true))),
        ("max_pool2d_ceil_edge", |x| x[0].max_pool2d(3, &p().stride(3).padding(1).ceil_mode(true))),
        ("max_pool2d_rect", |x| x[0].max_pool2d([2, 3], &p().stride([1, 2]))),
        ("max_pool2d_unbatched", |x| x[0].max_pool2d(2, &p())),
        ("max_pool2d_dilation_pad_ceil", |x| x[0].max_pool2d(2, &p().stride(3).padding(1).dilation(2).ceil_mode(true))),
        ("max_pool2d_all_negative", |x| x[0].max_pool2d(3, &p().stride(1).padding(1))),
        // ---------------------------------------------------------------- avg_pool2d
        ("avg_pool2d_k2", |x| x[0].avg_pool2d(2, &p())),
        ("avg_pool2d_k3_s2_p1", |x| x[0].avg_pool2d(3, &p().stride(2).padding(1))),
        ("avg_pool2d_exclude_pad", |x| x[0].avg_pool2d(3, &p().stride(2).padding(1).count_include_pad(false))),
        ("avg_pool2d_ceil", |x| x[0].avg_pool2d(2, &p().ceil_mode(true))),
        ("avg_pool2d_ceil_pad_include", |x| x[0].avg_pool2d(3, &p().stride(2).padding(1).ceil_mode(true))),
        ("avg_pool2d_ceil_pad_exclude", |x| {
            x[0].avg_pool2d(3, &p().stride(2).padding(1).ceil_mode(true).count_include_pad(false))
        }),
        ("avg_pool2d_rect_stride", |x| x[0].avg_pool2d([3, 2], &p().stride([1, 2]))),
        ("avg_pool2d_unbatched", |x| x[0].avg_pool2d(2, &p().stride(1))),
        // ---------------------------------------------------------------- interpolate
        ("interp_nearest_up", |x| x[0].interpolate(&[6, 6], InterpMode::Nearest, false)),
        ("interp_nearest_down", |x| x[0].interpolate(&[3, 2], InterpMode::Nearest, false)),
        ("interp_nearest_odd", |x| x[0].interpolate(&[7, 5], InterpMode::Nearest, false)),
        ("interp_nearest_exact", |x| x[0].interpolate(&[7, 3], InterpMode::NearestExact, false)),
        ("interp_linear_1d", |x| x[0].interpolate(&[8], InterpMode::Linear, false)),
        ("interp_linear_1d_align", |x| x[0].interpolate(&[8], InterpMode::Linear, true)),
        ("interp_bilinear_up", |x| x[0].interpolate(&[5, 7], InterpMode::Linear, false)),
        ("interp_bilinear_down", |x| x[0].interpolate(&[3, 2], InterpMode::Linear, false)),
        ("interp_bilinear_align", |x| x[0].interpolate(&[5, 6], InterpMode::Linear, true)),
        ("interp_bilinear_align_to1", |x| x[0].interpolate(&[1, 3], InterpMode::Linear, true)),
        ("interp_bilinear_from1", |x| x[0].interpolate(&[3, 5], InterpMode::Linear, false)),
        ("interp_trilinear", |x| x[0].interpolate(&[3, 4, 3], InterpMode::Linear, false)),
    ]
}
