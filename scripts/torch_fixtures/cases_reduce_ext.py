"""Reductions built on sum and max: var/std (correction, keepdim, several axes, constant
inputs whose std gradient PyTorch defines as 0), any/all, argmax/argmin (first index among ties,
NaN counts as the extreme, int64 result), logsumexp, softmax/log_softmax (large, infinite and
16-bit inputs), cumsum/cumprod (zeros and negatives, int -> int64) and cummax/cummin (values
and indices: latest index among ties, NaN propagates).

The Rust closures are in tests/torch/reduce_ext.rs, in the same order.
"""

import math

import torch

from case import Case

INF, NAN = math.inf, math.nan
F16_TOL = dict(atol=1e-3, rtol=4e-3, grad_atol=1e-3, grad_rtol=1e-2)
TIES = [[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 2.0, 2.0], [-5.0, 0.0, -5.0, 4.0]]
NAN_ROWS = [[1.0, NAN, 3.0, NAN], [-INF, -INF, -INF, -INF], [INF, 2.0, INF, 1.0]]
CUM_TIES = [[1.0, 1.0, 3.0, NAN, 2.0, NAN, 5.0], [2.0, -1.0, 2.0, 2.0, 0.5, 7.0, 7.0]]

CASES = [
    # ---------------------------------------------------------------- var / std
    Case("var_all", [(3, 4)], lambda x: x.var()),
    Case("var_axis", [(3, 4)], lambda x: x.var(1)),
    Case("var_keepdim", [(2, 3, 4)], lambda x: x.var(0, keepdim=True)),
    Case("var_axes", [(2, 3, 4)], lambda x: x.var((0, 2))),
    Case("var_population", [(3, 5)], lambda x: x.var(1, correction=0)),
    Case("var_correction2", [(3, 5)], lambda x: x.var(-1, correction=2)),
    Case("var_single_element", [(3, 1)], lambda x: x.var(1), grad=False),
    Case("var_transposed", [(3, 4)], lambda x: x.t().var(0)),
    Case("std_all", [(3, 4)], lambda x: x.std()),
    Case("std_axes_keepdim", [(2, 3, 4)], lambda x: x.std((1, 2), keepdim=True)),
    Case("std_population", [(4, 3)], lambda x: x.std(0, correction=0)),
    Case("std_constant_rows", [(2, 3)], lambda x: x.std(1), vals=[[[1.0, 1.0, 1.0], [0.5, -2.0, 0.0]]]),
    Case("var_mean", [(3, 4)], lambda x: torch.var_mean(x, 1)[0] * 2.0 + torch.var_mean(x, 1)[1]),
    Case("std_mean_keepdim", [(3, 4)], lambda x: torch.std_mean(x, 0, keepdim=True)[0] - torch.std_mean(
        x, 0, keepdim=True)[1] * 3.0),
    Case("var_f16", [(4, 8)], lambda x: x.var(1), dtype="float16", **F16_TOL),
    # ---------------------------------------------------------------- any / all
    Case("any_axis", [(3, 4)], lambda x: x.any(1), vals=[[[0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [2, 3, 4, 5]]]),
    Case("all_axis", [(3, 4)], lambda x: x.all(0), vals=[[[0.0, 1.0, 1.0, 2.0], [1.0, 1.0, NAN, 2.0], [3, 3, 1, 5]]]),
    Case("any_all_bool", [(4, 5)], lambda x: x.any(0).logical_xor(x.all(1).sum() > 0), dtype="bool"),
    Case("any_keepdim_int", [(3, 4)], lambda x: x.any(1, keepdim=True), dtype="int32", low=-1, high=1),
    Case("all_full", [(2, 3)], lambda x: x.all(), dtype="int32", low=1, high=5),
    Case("any_empty", [(0, 3)], lambda x: x.any()),
    Case("all_empty_axis", [(2, 0)], lambda x: x.all(1)),
    # ---------------------------------------------------------------- argmax / argmin
    Case("argmax_axis", [(4, 6)], lambda x: x.argmax(1)),
    Case("argmax_flat", [(3, 5)], lambda x: x.argmax()),
    Case("argmax_ties", [(3, 4)], lambda x: x.argmax(1), vals=[TIES]),
    Case("argmax_nan_inf", [(3, 4)], lambda x: x.argmax(1), vals=[NAN_ROWS]),
    Case("argmax_keepdim", [(2, 3, 4)], lambda x: x.argmax(0, keepdim=True)),
    Case("argmax_int8", [(6,)], lambda x: x.argmax(), dtype="int8", vals=[[-128, 127, 5, 127, -128, 0]]),
    Case("argmax_transposed", [(4, 3)], lambda x: x.t().argmax(-1)),
    Case("argmin_axis", [(4, 6)], lambda x: x.argmin(0)),
    Case("argmin_ties", [(3, 4)], lambda x: x.argmin(1), vals=[TIES]),
    Case("argmin_nan_inf", [(3, 4)], lambda x: x.argmin(1), vals=[NAN_ROWS]),
    Case("argmin_int_extremes", [(6,)], lambda x: x.argmin(), dtype="int32",
         vals=[[5, -2147483648, 0, -2147483648, 2147483647, 3]]),
    Case("argmin_uint8", [(2, 5)], lambda x: x.argmin(1), dtype="uint8", vals=[[[9, 0, 3, 0, 255], [255, 254, 7, 7, 8]]]),
    Case("argmax_size1", [(3, 1)], lambda x: x.argmax(1)),
    # ---------------------------------------------------------------- logsumexp / softmax
    Case("logsumexp", [(3, 5)], lambda x: torch.logsumexp(x, 1)),
    Case("logsumexp_axes_keepdim", [(2, 3, 4)], lambda x: torch.logsumexp(x, (0, 2), keepdim=True)),
    Case("logsumexp_large", [(2, 3)], lambda x: torch.logsumexp(x, 1),
         vals=[[[1000.0, 1000.0, 999.0], [-1000.0, -1001.0, -1000.5]]]),
    Case("logsumexp_inf", [(3, 3)], lambda x: torch.logsumexp(x, 1),
         vals=[[[-INF, -INF, -INF], [INF, 1.0, 2.0], [-INF, 0.0, 1.0]]], grad=False),
    Case("logsumexp_empty_axis", [(3, 0)], lambda x: torch.logsumexp(x, 1)),
    Case("softmax_last", [(3, 5)], lambda x: torch.softmax(x, -1) * torch.arange(5.0)),
    Case("softmax_axis0", [(4, 3)], lambda x: torch.softmax(x, 0) * torch.arange(3.0)),
    Case("softmax_large", [(2, 4)], lambda x: torch.softmax(x, 1) * torch.arange(4.0),
         vals=[[[1000.0, 999.0, 1001.0, 0.0], [-500.0, -500.0, -499.0, -1e4]]]),
    Case("softmax_neg_inf", [(2, 3)], lambda x: torch.softmax(x, 1) * torch.arange(3.0),
         vals=[[[-INF, 0.0, 1.0], [2.0, -INF, -INF]]]),
    Case("softmax_3d_middle", [(2, 3, 4)], lambda x: torch.softmax(x, 1) * x),
    Case("softmax_transposed", [(3, 4)], lambda x: torch.softmax(x.t(), 1) * torch.arange(3.0)),
    Case("softmax_0d", [()], lambda x: torch.softmax(x, 0) * x),
    Case("softmax_f16", [(3, 8)], lambda x: torch.softmax(x, -1) * torch.arange(8.0).half(), dtype="float16",
         **F16_TOL),
    Case("log_softmax", [(3, 5)], lambda x: torch.log_softmax(x, -1) * torch.arange(5.0)),
    Case("log_softmax_large", [(2, 3)], lambda x: torch.log_softmax(x, 1) * torch.arange(3.0),
         vals=[[[1000.0, 0.0, -1000.0], [50.0, 50.0, 50.0]]]),
    Case("log_softmax_axis0", [(3, 2, 2)], lambda x: torch.log_softmax(x, 0) * x),
    # ---------------------------------------------------------------- cumulative
    Case("cumsum", [(3, 5)], lambda x: x.cumsum(1)),
    Case("cumsum_axis0", [(4, 3)], lambda x: x.cumsum(0) * torch.arange(3.0)),
    Case("cumsum_3d_middle", [(2, 4, 3)], lambda x: x.cumsum(1) * x),
    Case("cumsum_long", [(2, 100)], lambda x: x.cumsum(-1) * torch.linspace(-1, 1, 100), atol=1e-4),
    Case("cumsum_blocked", [(1, 700)], lambda x: x.cumsum(1) * torch.linspace(-1, 1, 700), atol=1e-3),
    Case("cumsum_blocked_int", [(1, 600)], lambda x: x.cumsum(1), dtype="int32", low=-1000, high=1000),
    Case("cumsum_int", [(2, 6)], lambda x: x.cumsum(1), dtype="int32", low=-100, high=100),
    Case("cumsum_bool", [(7,)], lambda x: x.cumsum(0), dtype="bool"),
    Case("cumsum_0d", [()], lambda x: x.cumsum(0) * 3.0),
    Case("cumsum_empty", [(0, 3)], lambda x: x.cumsum(0)),
    Case("cumsum_size1", [(3, 1)], lambda x: x.cumsum(1)),
    Case("cumsum_transposed", [(3, 4)], lambda x: x.t().cumsum(1) * torch.arange(3.0)),
    Case("cumprod", [(3, 5)], lambda x: x.cumprod(1), low=0.5, high=1.5),
    Case("cumprod_zeros_negatives", [(2, 5)], lambda x: x.cumprod(1) * torch.arange(1.0, 6.0),
         vals=[[[2.0, -1.5, 0.0, 3.0, -2.0], [0.0, 0.0, 4.0, -1.0, 0.5]]]),
    Case("cumprod_axis0", [(4, 3)], lambda x: x.cumprod(0), low=-2.0, high=2.0),
    Case("cumprod_int", [(2, 5)], lambda x: x.cumprod(1), dtype="int32", low=-4, high=4),
    Case("cummax_values", [(2, 7)], lambda x: torch.cummax(x, 1).values * torch.arange(1.0, 8.0), vals=[CUM_TIES]),
    Case("cummax_indices", [(2, 7)], lambda x: torch.cummax(x, 1).indices, vals=[CUM_TIES]),
    Case("cummax_random", [(3, 6)], lambda x: torch.cummax(x, 0).values * x),
    Case("cummin_values", [(2, 7)], lambda x: torch.cummin(x, 1).values * torch.arange(1.0, 8.0), vals=[CUM_TIES]),
    Case("cummin_indices", [(2, 7)], lambda x: torch.cummin(x, 1).indices, vals=[CUM_TIES]),
    Case("cummax_int", [(2, 6)], lambda x: torch.cummax(x, 1).values * 10 + torch.cummax(x, 1).indices,
         dtype="int32", low=-5, high=5),
]
