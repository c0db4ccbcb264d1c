"""The arguments and edge semantics PyTorch users expect: dtype arguments of creation ops and
reductions, axes and keepdim chosen at run time, functional norms, gelu's `approximate`, scalars
on the left, axis 0/-1 on 0-d tensors, negative padding in every pad mode, pow at infinite bases
and zero exponents, interpolate on integers, and zero (not missing) gradients.

The Rust closures are in tests/torch/args.rs, in the same order.
"""

import math

import torch
import torch.nn.functional as F

from case import Case

INF, NAN = math.inf, math.nan
I32, I64, F64, F16 = torch.int32, torch.int64, torch.float64, torch.float16

CASES = [
    # ---------------------------------------------------------------- creation with a dtype
    Case("arange_int32", [], lambda: torch.arange(2, 20, 3, dtype=I32)),
    Case("arange_int64_negative_step", [], lambda: torch.arange(10, -7, -4, dtype=I64)),
    Case("arange_float64", [], lambda: torch.arange(0.5, 3.0, 0.25, dtype=F64)),
    Case("arange_int_fractional_step", [], lambda: torch.arange(0, 5, 1.5, dtype=I64)),
    Case("linspace_int", [], lambda: torch.linspace(0, 10, 5, dtype=I64)),
    Case("linspace_float16", [], lambda: torch.linspace(-1, 1, 9, dtype=F16)),
    Case("eye_rect", [], lambda: torch.eye(3, 5)),
    Case("eye_int", [], lambda: torch.eye(4, 2, dtype=I32)),
    Case("full_int", [], lambda: torch.full((2, 3), 7, dtype=I32)),
    Case("zeros_f64", [], lambda: torch.zeros((2, 2), dtype=F64)),
    Case("ones_like_int", [(2, 3)], lambda a: torch.ones_like(a, dtype=I64)),
    Case("full_like_f16", [(2, 3)], lambda a: torch.full_like(a, 2.5, dtype=F16)),
    # ---------------------------------------------------------------- reductions with dtype / keepdim
    Case("sum_dtype_f64", [(3, 4)], lambda a: a.sum(1, dtype=F64), atol=1e-6),
    Case("sum_dtype_int_of_bool", [(3, 4)], lambda a: a.sum(0, dtype=I64), dtype="bool"),
    Case("sum_dtype_keepdim", [(3, 4)], lambda a: a.sum(1, keepdim=True, dtype=I32), dtype="int32", low=-5, high=5),
    Case("prod_dtype", [(3, 4)], lambda a: a.prod(1, dtype=I64), dtype="int32", low=1, high=4),
    Case("mean_dtype", [(3, 4)], lambda a: a.mean(0, dtype=F64), dtype="int32", low=-5, high=5),
    Case("cumsum_dtype", [(3, 4)], lambda a: a.cumsum(1, dtype=F64)),
    Case("cumsum_dtype_int", [(6,)], lambda a: a.cumsum(0, dtype=I32), dtype="int32", low=-5, high=5),
    Case("sum_runtime_all_keepdim", [(2, 3, 4)], lambda a: a.sum((0, 1, 2), keepdim=True)),
    Case("sum_runtime_axes", [(2, 3, 4)], lambda a: a.sum((0, 2), keepdim=False)),
    Case("max_runtime_keepdim", [(2, 3, 4)], lambda a: a.amax((1,), keepdim=True)),
    Case("mean_runtime_keepdim", [(2, 3, 4)], lambda a: a.mean((-1, 0), keepdim=True)),
    # ---------------------------------------------------------------- functional norms
    Case("layer_norm", [(2, 3, 4), (3, 4), (3, 4)], lambda x, w, b: F.layer_norm(x, (3, 4), w, b, eps=1e-5)),
    Case("layer_norm_no_affine", [(2, 5)], lambda x: F.layer_norm(x, (5,))),
    Case("group_norm", [(2, 4, 3), (4,), (4,)], lambda x, w, b: F.group_norm(x, 2, w, b)),
    Case("instance_norm", [(2, 3, 5), (3,), (3,)], lambda x, w, b: F.instance_norm(x, weight=w, bias=b)),
    Case("batch_norm_train", [(4, 3, 2), (3,), (3,)],
         lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)),
    Case("batch_norm_eval", [(4, 3, 2), (3,), (3,), (3,), (3,)],
         lambda x, m, v, w, b: F.batch_norm(x, m, v.abs() + 0.5, w, b, training=False),
         grad=False),
    Case("rms_norm", [(2, 3, 4), (4,)], lambda x, w: F.rms_norm(x, (4,), w)),
    Case("rms_norm_two_axes", [(2, 3, 4)], lambda x: F.rms_norm(x, (3, 4), eps=1e-6)),
    # ---------------------------------------------------------------- gelu, scalars on the left
    Case("gelu_none", [(3, 4)], lambda a: F.gelu(a, approximate="none"), low=-4.0, high=4.0),
    Case("gelu_tanh", [(3, 4)], lambda a: F.gelu(a, approximate="tanh"), low=-4.0, high=4.0),
    Case("rpow", [(3, 4)], lambda a: 2.0 ** a),
    Case("rpow_tensor_base", [(3, 4)], lambda a: 0.5 ** a * 3.0),
    Case("rmod_float", [(3, 4)], lambda a: 7.0 % a, low=0.5, high=3.0, grad=False),
    Case("rmod_int", [(8,)], lambda a: 17 % a, dtype="int32", low=1, high=6),
    Case("rsub_rdiv", [(3, 4)], lambda a: (1.0 - a) / (2.0 / (a.abs() + 1.0))),
    # ---------------------------------------------------------------- 0-d tensors take axis 0 / -1
    Case("sum_0d_axis0", [()], lambda a: a.sum(0) * 2.0),
    Case("sum_0d_axis_neg1_keepdim", [()], lambda a: a.sum(-1, keepdim=True) * 3.0),
    Case("max_0d_axis0", [()], lambda a: a.amax(0)),
    Case("logsumexp_0d", [()], lambda a: a.logsumexp(0)),
    Case("squeeze_0d", [()], lambda a: a.squeeze(0) + 1.0),
    Case("mean_0d_axis", [()], lambda a: a.mean(-1)),
    # ---------------------------------------------------------------- negative padding
    Case("pad_reflect_crop", [(1, 2, 6)], lambda x: F.pad(x, (-1, 2), mode="reflect")),
    Case("pad_replicate_crop", [(1, 2, 6)], lambda x: F.pad(x, (2, -3), mode="replicate")),
    Case("pad_circular_crop", [(1, 2, 6)], lambda x: F.pad(x, (-1, 2), mode="circular")),
    Case("pad_reflect_crop_2d", [(1, 1, 5, 6)], lambda x: F.pad(x, (1, -2, -1, 2), mode="reflect")),
    # Reflection is about the edges of the uncropped input: a pad as wide as the cropped axis.
    Case("pad_reflect_crop_wide", [(1, 2, 6)], lambda x: F.pad(x, (-2, 5), mode="reflect")),
    Case("pad_reflect_crop_wide_left", [(1, 2, 6)], lambda x: F.pad(x, (4, -3), mode="reflect")),
    Case("pad_reflect_crop_both_axes", [(3, 3, 3, 3)], lambda x: F.pad(x, (-1, 2, 2, -1), mode="reflect")),
    Case("pad_replicate_crop_wide", [(1, 2, 6)], lambda x: F.pad(x, (4, -5), mode="replicate")),
    Case("pad_circular_crop_left", [(1, 2, 6)], lambda x: F.pad(x, (2, -1), mode="circular")),
    Case("conv2d_negative_padding", [(1, 2, 6, 5), (3, 2, 3, 3)],
         lambda x, w: F.conv2d(x[:, :, 1:-1, :], w, padding=(0, 1))),
    Case("conv2d_mixed_padding", [(2, 2, 6, 6), (3, 2, 3, 2)],
         lambda x, w: F.conv2d(F.pad(x, (0, -1, -1, 2)), w, stride=(2, 1))),
    # ---------------------------------------------------------------- pow at special points
    Case("pow_inf_bases", [(5,), (5,)], lambda a, b: torch.pow(a, b), grad=False,
         vals=[[-INF, -INF, INF, INF, -INF], [0.3, 0.0, 0.0, -0.5, 3.0]]),
    Case("pow_zero_exponent_grad", [(4,)], lambda a: a ** 0.0, vals=[[0.0, -2.0, 3.0, 0.5]]),
    Case("pow_inf_exponent", [(4,), (4,)], lambda a, b: torch.pow(a, b), grad=False,
         vals=[[0.5, 2.0, -0.5, 1.0], [INF, INF, -INF, INF]]),
    # ---------------------------------------------------------------- interpolate keeps int dtypes
    Case("interp_nearest_uint8", [(1, 1, 6)], lambda a: F.interpolate(a, size=4, mode="nearest"),
         dtype="uint8", low=0, high=200),
    Case("interp_nearest_uint8_2d", [(1, 1, 3, 3)], lambda a: F.interpolate(a, size=(5, 4), mode="nearest"),
         dtype="uint8", low=0, high=250),
    # uint8 bilinear: PyTorch's two fixed-point passes (width, then height), byte for byte.
    Case("interp_bilinear_uint8_up", [(1, 3, 4, 5)], lambda a: F.interpolate(a, size=(10, 10), mode="bilinear"),
         dtype="uint8", low=0, high=256),
    Case("interp_bilinear_uint8_down", [(2, 2, 9, 13)], lambda a: F.interpolate(a, size=(4, 6), mode="bilinear"),
         dtype="uint8", low=0, high=256),
    Case("interp_bilinear_uint8_align", [(1, 2, 4, 7)],
         lambda a: F.interpolate(a, size=(9, 4), mode="bilinear", align_corners=True), dtype="uint8", low=0, high=256),
    Case("interp_bilinear_uint8_width_only", [(1, 1, 3, 4)], lambda a: F.interpolate(a, size=(3, 11), mode="bilinear"),
         dtype="uint8", low=0, high=256),
    Case("interp_bilinear_uint8_from1", [(1, 1, 1, 2)], lambda a: F.interpolate(a, size=(3, 5), mode="bilinear"),
         dtype="uint8", low=0, high=256),
    # ---------------------------------------------------------------- zero gradients
    Case("grad_sign", [(3, 4)], lambda a: a.sign() * 2.0),
    Case("grad_round", [(3, 4)], lambda a: a.round()),
    Case("grad_floor_ceil", [(3, 4)], lambda a: a.floor() + a.ceil()),
    Case("grad_comparison", [(3, 4), (3, 4)], lambda a, b: (a < b).float() + (a == b).float()),
    Case("grad_pow_zero", [(3, 4)], lambda a: a.pow(0)),
]
