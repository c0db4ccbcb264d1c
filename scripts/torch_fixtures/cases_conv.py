"""Convolutions (1-3 d, stride/padding/dilation/groups), transposed convolutions, pooling
(max/avg with padding, dilation, ceil_mode, count_include_pad) and interpolate."""

import torch.nn.functional as F

from case import Case

G = dict(grad_atol=1e-4, grad_rtol=1e-3)


def pad_sides(x, w, pads, **kw):
    """conv2d with per-side padding ((top, bottom), (left, right)) via F.pad."""
    (t, b), (l, r) = pads
    return F.conv2d(F.pad(x, (l, r, t, b)), w, **kw)


CASES = [
    # ---------------------------------------------------------------- conv2d
    Case("conv2d_basic", [(1, 1, 5, 5), (1, 1, 3, 3)], lambda x, w: F.conv2d(x, w)),
    Case("conv2d_bias", [(2, 3, 6, 6), (4, 3, 3, 3), (4,)], lambda x, w, b: F.conv2d(x, w, b)),
    Case("conv2d_stride2", [(1, 2, 7, 7), (3, 2, 3, 3)], lambda x, w: F.conv2d(x, w, stride=2)),
    Case("conv2d_pad1", [(1, 2, 5, 5), (2, 2, 3, 3)], lambda x, w: F.conv2d(x, w, padding=1)),
    Case("conv2d_pad_per_dim", [(1, 1, 4, 5), (2, 1, 3, 3)], lambda x, w: F.conv2d(x, w, padding=(1, 2))),
    Case("conv2d_pad_sides", [(1, 2, 5, 4), (2, 2, 3, 2)], lambda x, w: pad_sides(x, w, ((1, 0), (2, 1)))),
    Case("conv2d_dilation2", [(1, 2, 7, 7), (2, 2, 3, 3)], lambda x, w: F.conv2d(x, w, dilation=2)),
    Case("conv2d_groups2", [(1, 4, 5, 5), (6, 2, 3, 3), (6,)], lambda x, w, b: F.conv2d(x, w, b, groups=2)),
    Case("conv2d_depthwise", [(2, 3, 5, 5), (3, 1, 3, 3)], lambda x, w: F.conv2d(x, w, groups=3, padding=1)),
    Case("conv2d_depthwise_mult", [(1, 2, 4, 4), (4, 1, 2, 2)], lambda x, w: F.conv2d(x, w, groups=2)),
    Case("conv2d_all_options", [(2, 4, 8, 7), (4, 2, 3, 2), (4,)],
         lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)),
    Case("conv2d_rect_kernel_stride", [(1, 2, 6, 7), (3, 2, 2, 3)], lambda x, w: F.conv2d(x, w, stride=(2, 1))),
    Case("conv2d_1x1", [(2, 3, 4, 4), (5, 3, 1, 1), (5,)], lambda x, w, b: F.conv2d(x, w, b)),
    Case("conv2d_stride_gt_kernel", [(1, 2, 7, 8), (2, 2, 1, 2)], lambda x, w: F.conv2d(x, w, stride=3)),
    Case("conv2d_k3_s2_p1", [(2, 2, 6, 6), (3, 2, 3, 3), (3,)], lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1)),
    Case("conv2d_kernel_equals_input", [(2, 2, 3, 3), (4, 2, 3, 3)], lambda x, w: F.conv2d(x, w)),
    Case("conv2d_unbatched", [(3, 5, 5), (2, 3, 3, 3)], lambda x, w: F.conv2d(x, w, padding=1)),
    Case("conv2d_noncontig_input", [(1, 2, 6, 5), (2, 2, 3, 3)], lambda x, w: F.conv2d(x.transpose(2, 3), w)),
    Case("conv2d_dilation_stride", [(1, 1, 9, 9), (2, 1, 3, 3)], lambda x, w: F.conv2d(x, w, stride=2, dilation=3)),
    Case("conv2d_big_stride_dilated", [(1, 1, 6, 6), (1, 1, 2, 2)], lambda x, w: F.conv2d(x, w, stride=5, dilation=2)),
    Case("conv2d_relu_chain", [(1, 2, 6, 6), (3, 2, 3, 3), (3, 3, 3, 3)],
         lambda x, w1, w2: F.conv2d(F.conv2d(x, w1, padding=1).relu(), w2)),
    Case("conv2d_empty_batch", [(0, 2, 4, 4), (3, 2, 3, 3)], lambda x, w: F.conv2d(x, w)),
    # ---------------------------------------------------------------- conv1d / conv3d
    Case("conv1d_basic", [(2, 3, 8), (4, 3, 3), (4,)], lambda x, w, b: F.conv1d(x, w, b)),
    Case("conv1d_all_options", [(1, 4, 11), (6, 2, 3)],
         lambda x, w: F.conv1d(x, w, stride=2, padding=2, dilation=2, groups=2)),
    Case("conv1d_k1_stride", [(2, 2, 7), (3, 2, 1)], lambda x, w: F.conv1d(x, w, stride=2)),
    Case("conv3d_basic", [(1, 2, 4, 4, 4), (2, 2, 2, 2, 2), (2,)], lambda x, w, b: F.conv3d(x, w, b)),
    Case("conv3d_stride_pad", [(1, 1, 5, 4, 5), (2, 1, 3, 2, 3)],
         lambda x, w: F.conv3d(x, w, stride=(2, 1, 2), padding=(1, 0, 1))),
    # ---------------------------------------------------------------- conv_transpose
    Case("conv_transpose2d_basic", [(1, 2, 3, 3), (2, 3, 3, 3)], lambda x, w: F.conv_transpose2d(x, w)),
    Case("conv_transpose2d_bias", [(2, 2, 3, 4), (2, 3, 2, 2), (3,)], lambda x, w, b: F.conv_transpose2d(x, w, b)),
    Case("conv_transpose2d_stride2", [(1, 2, 3, 3), (2, 2, 3, 3)], lambda x, w: F.conv_transpose2d(x, w, stride=2)),
    Case("conv_transpose2d_stride2_pad1_outpad1", [(1, 2, 3, 3), (2, 3, 3, 3)],
         lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)),
    Case("conv_transpose2d_groups2", [(1, 4, 3, 3), (4, 3, 2, 2), (6,)],
         lambda x, w, b: F.conv_transpose2d(x, w, b, groups=2, stride=2)),
    Case("conv_transpose2d_dilation2", [(1, 2, 3, 3), (2, 2, 3, 3)],
         lambda x, w: F.conv_transpose2d(x, w, dilation=2, padding=1)),
    Case("conv_transpose2d_rect", [(1, 2, 3, 4), (2, 2, 3, 2)],
         lambda x, w: F.conv_transpose2d(x, w, stride=(2, 1), padding=(1, 0), output_padding=(1, 0))),
    Case("conv_transpose2d_pad_gt_kernel", [(1, 1, 5, 5), (1, 2, 2, 2)],
         lambda x, w: F.conv_transpose2d(x, w, padding=2, stride=2)),
    Case("conv_transpose2d_all_options", [(2, 4, 3, 3), (4, 1, 3, 2), (2,)],
         lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 3), padding=(1, 1), output_padding=(1, 2),
                                            groups=2, dilation=(1, 2))),
    Case("conv_transpose1d_basic", [(2, 3, 5), (3, 2, 3), (2,)], lambda x, w, b: F.conv_transpose1d(x, w, b)),
    Case("conv_transpose1d_stride3_outpad2", [(1, 2, 4), (2, 2, 3)],
         lambda x, w: F.conv_transpose1d(x, w, stride=3, output_padding=2)),
    # ---------------------------------------------------------------- max_pool2d
    Case("max_pool2d_k2", [(1, 2, 4, 4)], lambda x: F.max_pool2d(x, 2)),
    Case("max_pool2d_k3_s2", [(2, 1, 7, 7)], lambda x: F.max_pool2d(x, 3, stride=2)),
    Case("max_pool2d_k3_s2_p1", [(1, 2, 6, 6)], lambda x: F.max_pool2d(x, 3, stride=2, padding=1)),
    Case("max_pool2d_k2_s1", [(1, 1, 5, 4)], lambda x: F.max_pool2d(x, 2, stride=1)),
    Case("max_pool2d_dilation2", [(1, 1, 7, 7)], lambda x: F.max_pool2d(x, 3, stride=1, dilation=2)),
    Case("max_pool2d_ceil", [(1, 1, 5, 5)], lambda x: F.max_pool2d(x, 2, ceil_mode=True)),
    Case("max_pool2d_ceil_pad", [(1, 2, 6, 6)], lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)),
    Case("max_pool2d_ceil_edge", [(1, 1, 6, 5)], lambda x: F.max_pool2d(x, 3, stride=3, padding=1, ceil_mode=True)),
    Case("max_pool2d_rect", [(1, 1, 5, 7)], lambda x: F.max_pool2d(x, (2, 3), stride=(1, 2))),
    Case("max_pool2d_unbatched", [(2, 4, 4)], lambda x: F.max_pool2d(x, 2)),
    Case("max_pool2d_dilation_pad_ceil", [(1, 1, 8, 8)],
         lambda x: F.max_pool2d(x, 2, stride=3, padding=1, dilation=2, ceil_mode=True)),
    Case("max_pool2d_all_negative", [(1, 1, 4, 4)], lambda x: F.max_pool2d(x, 3, stride=1, padding=1),
         low=-3.0, high=-1.0),
    # ---------------------------------------------------------------- avg_pool2d
    Case("avg_pool2d_k2", [(1, 2, 4, 4)], lambda x: F.avg_pool2d(x, 2)),
    Case("avg_pool2d_k3_s2_p1", [(1, 1, 6, 6)], lambda x: F.avg_pool2d(x, 3, stride=2, padding=1)),
    Case("avg_pool2d_exclude_pad", [(1, 1, 6, 6)],
         lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)),
    Case("avg_pool2d_ceil", [(1, 1, 5, 5)], lambda x: F.avg_pool2d(x, 2, ceil_mode=True)),
    Case("avg_pool2d_ceil_pad_include", [(1, 2, 5, 6)],
         lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True)),
    Case("avg_pool2d_ceil_pad_exclude", [(1, 2, 5, 6)],
         lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    Case("avg_pool2d_rect_stride", [(2, 1, 6, 5)], lambda x: F.avg_pool2d(x, (3, 2), stride=(1, 2))),
    Case("avg_pool2d_unbatched", [(1, 4, 6)], lambda x: F.avg_pool2d(x, 2, stride=1)),
    # ---------------------------------------------------------------- interpolate
    Case("interp_nearest_up", [(1, 1, 3, 3)], lambda x: F.interpolate(x, size=(6, 6), mode="nearest")),
    Case("interp_nearest_down", [(1, 2, 5, 5)], lambda x: F.interpolate(x, size=(3, 2), mode="nearest")),
    Case("interp_nearest_odd", [(1, 1, 3, 4)], lambda x: F.interpolate(x, size=(7, 5), mode="nearest")),
    Case("interp_nearest_exact", [(1, 1, 3, 4)], lambda x: F.interpolate(x, size=(7, 3), mode="nearest-exact")),
    Case("interp_linear_1d", [(1, 2, 5)], lambda x: F.interpolate(x, size=8, mode="linear")),
    Case("interp_linear_1d_align", [(1, 2, 5)], lambda x: F.interpolate(x, size=8, mode="linear", align_corners=True)),
    Case("interp_bilinear_up", [(1, 1, 3, 3)], lambda x: F.interpolate(x, size=(5, 7), mode="bilinear")),
    Case("interp_bilinear_down", [(2, 1, 5, 6)], lambda x: F.interpolate(x, size=(3, 2), mode="bilinear")),
    Case("interp_bilinear_align", [(1, 2, 3, 4)],
         lambda x: F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=True)),
    Case("interp_bilinear_align_to1", [(1, 1, 3, 4)],
         lambda x: F.interpolate(x, size=(1, 3), mode="bilinear", align_corners=True)),
    Case("interp_bilinear_from1", [(1, 1, 1, 3)], lambda x: F.interpolate(x, size=(3, 5), mode="bilinear")),
    Case("interp_trilinear", [(1, 1, 2, 3, 2)], lambda x: F.interpolate(x, size=(3, 4, 3), mode="trilinear")),
]
