"""Reductions (sum, max, min, mean, prod over all, one, several and negative axes, with and
without keepdim, on non-contiguous, size-1, empty and integer inputs) and basic linear algebra
(matmul/dot: 2-D, batched, broadcast, vectors).

ferrograd follows tinygrad where PyTorch differs: max/min are amax/amin (the gradient is split
equally among ties), and integer sums and products stay 32-bit (int8/int16/int32/bool -> int32,
uint8/uint16/uint32 -> uint32) where PyTorch gives int64. The Rust closures are in
tests/torch/reduce.rs.
"""

import math

import torch

from case import Case

I32, U32 = torch.int32, torch.uint32
INF, NAN = math.inf, math.nan
F16_TOL = dict(atol=1e-3, rtol=1e-2, grad_atol=1e-3, grad_rtol=1e-2)
NAN_ROWS = [[1.0, NAN, 2.0], [NAN, 1.0, 2.0], [3.0, 1.0, 2.0]]
TIES = [[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 2.0, 2.0], [-5.0, 0.0, -5.0, 4.0]]

CASES = [
    # ---------------------------------------------------------------- sum
    Case("sum_all", [(3, 4)], lambda x: x.sum()),
    Case("sum_axis0", [(3, 4)], lambda x: x.sum(0)),
    Case("sum_axis1", [(3, 4)], lambda x: x.sum(1)),
    Case("sum_axis_negative", [(2, 3, 4)], lambda x: x.sum(-1)),
    Case("sum_keepdim", [(2, 3, 4)], lambda x: x.sum(1, keepdim=True)),
    Case("sum_axes_02", [(2, 3, 4)], lambda x: x.sum((0, 2))),
    Case("sum_axes_keepdim", [(2, 3, 4)], lambda x: x.sum((0, -1), keepdim=True)),
    Case("sum_0d", [()], lambda x: x.sum()),
    Case("sum_size1_axis", [(3, 1, 4)], lambda x: x.sum(1)),
    Case("sum_1elem", [(1,)], lambda x: x.sum(0)),
    Case("sum_transposed", [(3, 4)], lambda x: x.t().sum(1)),
    Case("sum_permuted_axes", [(2, 3, 4)], lambda x: x.permute(2, 0, 1).sum((1, 2))),
    Case("sum_flipped", [(3, 4)], lambda x: x.flip(1).sum(0) * torch.arange(4.0)),
    Case("sum_expanded", [(3, 1)], lambda x: x.expand(3, 5).sum(0)),
    Case("sum_padded", [(2, 3)], lambda x: torch.nn.functional.pad(x, (1, 2)).sum(1)),
    Case("sum_empty_axis", [(0, 3)], lambda x: x.sum(0)),
    Case("sum_empty_all", [(0,)], lambda x: x.sum()),
    Case("sum_empty_inner_axis", [(3, 4, 0)], lambda x: x.sum(-1)),
    Case("sum_long_axis", [(2, 300)], lambda x: x.sum(1), atol=1e-4),
    Case("sum_int", [(3, 4)], lambda x: x.sum(1).to(I32), dtype="int32", low=-100, high=100),
    Case("sum_int8_widens", [(2, 8)], lambda x: x.sum(1).to(I32), dtype="int8", low=100, high=127),
    Case("sum_uint8_widens", [(10,)], lambda x: x.sum().to(U32), dtype="uint8", low=200, high=255),
    Case("sum_bool", [(3, 5)], lambda x: x.sum(0).to(I32), dtype="bool"),
    Case("sum_int64", [(4,)], lambda x: x.sum(), dtype="int64", vals=[[2**40, 2**41, -3, 7]]),
    Case("sum_f16", [(4, 8)], lambda x: x.sum(1), dtype="float16", **F16_TOL),
    Case("sum_f64", [(3, 5)], lambda x: x.sum(0), dtype="float64", atol=1e-12, rtol=1e-12),
    # ---------------------------------------------------------------- max (amax)
    Case("max_all", [(3, 4)], lambda x: x.amax()),
    Case("max_axis0", [(3, 4)], lambda x: x.amax(0)),
    Case("max_axis_negative", [(2, 3, 4)], lambda x: x.amax(-1)),
    Case("max_keepdim", [(2, 3, 4)], lambda x: x.amax(1, keepdim=True)),
    Case("max_axes", [(2, 3, 4)], lambda x: x.amax((0, 2))),
    Case("max_ties", [(3, 4)], lambda x: x.amax(1), vals=[TIES]),
    Case("max_ties_all", [(3, 4)], lambda x: x.amax(), vals=[TIES]),
    Case("max_transposed", [(3, 4)], lambda x: x.t().amax(1)),
    Case("max_negative_values", [(2, 5)], lambda x: x.amax(1), low=-10.0, high=-1.0),
    Case("max_with_inf", [(2, 3)], lambda x: x.amax(1), vals=[[[1.0, float("-inf"), 2.0], [float("-inf")] * 3]]),
    Case("max_0d", [()], lambda x: x.amax()),
    Case("max_int", [(3, 4)], lambda x: x.amax(0), dtype="int32", low=-100, high=100),
    Case("max_uint8", [(3, 4)], lambda x: x.amax(1), dtype="uint8", low=0, high=255),
    Case("max_bool", [(3, 4)], lambda x: x.amax(1), dtype="bool"),
    # ---------------------------------------------------------------- min (amin)
    Case("min_all", [(3, 4)], lambda x: x.amin()),
    Case("min_axis1", [(3, 4)], lambda x: x.amin(1)),
    Case("min_keepdim_negative", [(2, 3, 4)], lambda x: x.amin(-2, keepdim=True)),
    Case("min_axes", [(2, 3, 4)], lambda x: x.amin((1, 2))),
    Case("min_ties", [(3, 4)], lambda x: x.amin(1), vals=[TIES]),
    Case("min_flipped", [(3, 4)], lambda x: x.flip(0).amin(0) * torch.arange(1.0, 5.0)),
    Case("min_int", [(3, 4)], lambda x: x.amin(1), dtype="int32", low=-100, high=100),
    Case("min_uint8", [(3, 4)], lambda x: x.amin(0), dtype="uint8", low=0, high=255),
    Case("min_int8_extremes", [(4,)], lambda x: x.amin(), dtype="int8", vals=[[-128, 127, 0, -1]]),
    Case("min_int32_extremes", [(3,)], lambda x: x.amin(), dtype="int32", vals=[[-(2**31), 5, 2**31 - 1]]),
    Case("min_bool", [(3, 4)], lambda x: x.amin(1), dtype="bool"),
    # ---------------------------------------------------------------- mean
    Case("mean_all", [(3, 4)], lambda x: x.mean()),
    Case("mean_axis0", [(3, 4)], lambda x: x.mean(0)),
    Case("mean_keepdim", [(2, 3, 4)], lambda x: x.mean(-1, keepdim=True)),
    Case("mean_axes", [(2, 3, 4)], lambda x: x.mean((0, 2))),
    Case("mean_permuted", [(2, 3, 4)], lambda x: x.permute(1, 2, 0).mean(1)),
    Case("mean_int", [(3, 4)], lambda x: x.float().mean(1), dtype="int32", low=-100, high=100),
    Case("mean_empty", [(0, 3)], lambda x: x.mean(0)),
    # ---------------------------------------------------------------- prod
    Case("prod_all", [(2, 3)], lambda x: x.prod(), low=0.5, high=1.5),
    Case("prod_axis1", [(3, 4)], lambda x: x.prod(1)),
    Case("prod_keepdim", [(2, 3, 2)], lambda x: x.prod(0, keepdim=True)),
    Case("prod_with_zero", [(2, 3)], lambda x: x.prod(1), vals=[[[1.5, 0.0, 2.0], [0.0, 3.0, 0.0]]]),
    Case("prod_int", [(3, 4)], lambda x: x.prod(1).to(I32), dtype="int32", low=-5, high=5),
    Case("prod_transposed", [(3, 2)], lambda x: x.t().prod(1)),
    # ---------------------------------------------------------------- edge values, 4-D, larger shapes
    Case("max_with_nan", [(3, 3)], lambda x: x.amax(1), vals=[NAN_ROWS], grad=False),
    Case("min_with_nan", [(3, 3)], lambda x: x.amin(1), vals=[NAN_ROWS], grad=False),
    Case("sum_with_inf_nan", [(3, 2)], lambda x: x.sum(1), vals=[[[INF, 1.0], [INF, -INF], [NAN, 2.0]]]),
    Case("prod_negatives", [(2, 4)], lambda x: x.prod(1), low=-2.0, high=-0.5),
    Case("prod_0d", [()], lambda x: x.prod()),
    Case("prod_empty_axis", [(0, 3)], lambda x: x.prod(0)),
    Case("max_size1_axis", [(3, 1)], lambda x: x.amax(1)),
    Case("max_int64_large", [(4,)], lambda x: x.amax(), dtype="int64", vals=[[-(2**62), 2**61 + 3, 5, 2**61]]),
    Case("min_int64_large", [(4,)], lambda x: x.amin(), dtype="int64", vals=[[-(2**62), 2**61 + 3, 5, 2**61]]),
    Case("min_uint8_extremes", [(4,)], lambda x: x.amin(), dtype="uint8", vals=[[255, 0, 7, 128]]),
    Case("sum_uint8_keepdim", [(2, 5)], lambda x: x.sum(1, keepdim=True).to(U32), dtype="uint8", low=0, high=255),
    Case("sum_bool_all", [(4, 5)], lambda x: x.sum().to(I32), dtype="bool"),
    Case("sum_4d_middle_axes", [(2, 3, 4, 2)], lambda x: x.sum((1, 2))),
    Case("max_4d_outer_axes", [(2, 3, 2, 4)], lambda x: x.amax((0, 3), keepdim=True)),
    Case("mean_4d_negative_axes", [(2, 2, 3, 2)], lambda x: x.mean((-1, -3))),
    Case("sum_expanded_permuted", [(3, 1)], lambda x: x.expand(3, 4).t().sum(0)),
    Case("mean_f16", [(4, 6)], lambda x: x.mean(1), dtype="float16", **F16_TOL),
    Case("max_bf16", [(3, 5)], lambda x: x.amax(0), dtype="bfloat16", atol=1e-2, rtol=2e-2, grad_atol=1e-2,
         grad_rtol=2e-2),
    Case("sum_large", [(16, 130)], lambda x: x.sum(1), atol=1e-4),
    Case("sum_large_axis0", [(130, 16)], lambda x: x.sum(0), atol=1e-4),
    Case("max_large", [(17, 90)], lambda x: x.amax(1)),
    Case("sum_large_transposed", [(20, 70)], lambda x: x.t().sum(0) * x.sum(0).mean(), atol=1e-4),
    # ---------------------------------------------------------------- composites
    Case("softmax", [(3, 5)], lambda x: (x - x.amax(1, keepdim=True)).exp()
         / (x - x.amax(1, keepdim=True)).exp().sum(1, keepdim=True), low=-4.0, high=4.0),
    Case("logsumexp", [(3, 5)], lambda x: torch.logsumexp(x, 1), low=-4.0, high=4.0),
    Case("variance", [(4, 5)], lambda x: ((x - x.mean(0, keepdim=True)) ** 2).mean(0)),
    Case("layernorm_like", [(3, 6)], lambda x: (x - x.mean(1, keepdim=True))
         / (((x - x.mean(1, keepdim=True)) ** 2).mean(1, keepdim=True) + 1e-5).sqrt(), rtol=1e-3, grad_rtol=5e-3),
    Case("sum_of_max", [(2, 3, 4)], lambda x: x.amax(2).sum(0)),
    Case("reduce_then_broadcast", [(3, 4)], lambda x: x * x.sum(0) - x.amax(1, keepdim=True)),
    Case("two_reductions_same_input", [(3, 4)], lambda x: x.sum(0) + x.amax(0) * x.amin(0)),
    # ---------------------------------------------------------------- linalg_basic: matmul / dot
    Case("matmul_2d", [(3, 4), (4, 5)], lambda a, b: a @ b),
    Case("matmul_square", [(4, 4), (4, 4)], lambda a, b: a @ b),
    Case("matmul_outer_k1", [(3, 1), (1, 4)], lambda a, b: a @ b),
    Case("matmul_inner_1x1", [(1, 4), (4, 1)], lambda a, b: a @ b),
    Case("matmul_vec_mat", [(4,), (4, 3)], lambda a, b: a @ b),
    Case("matmul_mat_vec", [(3, 4), (4,)], lambda a, b: a @ b),
    Case("dot_vec_vec", [(5,), (5,)], lambda a, b: a.dot(b)),
    Case("matmul_batched", [(2, 3, 4), (2, 4, 5)], lambda a, b: a @ b),
    Case("matmul_broadcast_rhs", [(2, 3, 4), (4, 5)], lambda a, b: a @ b),
    Case("matmul_broadcast_lhs", [(3, 4), (2, 4, 5)], lambda a, b: a @ b),
    Case("matmul_broadcast_batches", [(2, 1, 3, 4), (5, 4, 2)], lambda a, b: a @ b),
    Case("matmul_batched_vec", [(2, 3, 4), (4,)], lambda a, b: a @ b),
    Case("matmul_transposed_inputs", [(4, 3), (5, 4)], lambda a, b: a.t() @ b.t()),
    Case("matmul_empty_k", [(3, 0), (0, 4)], lambda a, b: a @ b),
    Case("matmul_chain", [(2, 3), (3, 4), (4, 2)], lambda a, b, c: (a @ b).relu() @ c),
    Case("matmul_int", [(3, 4), (4, 2)], lambda a, b: a @ b, dtype="int32", low=-10, high=10),
    Case("matmul_f16", [(3, 8), (8, 2)], lambda a, b: a @ b, dtype="float16", **F16_TOL),
    Case("matmul_f64", [(3, 4), (4, 5)], lambda a, b: a @ b, dtype="float64", atol=1e-12, rtol=1e-12,
         grad_atol=1e-12, grad_rtol=1e-12),
    Case("matmul_large", [(17, 33), (33, 19)], lambda a, b: a @ b, atol=1e-5, grad_atol=1e-4),
    Case("matmul_long_k", [(2, 300), (300, 3)], lambda a, b: a @ b, atol=1e-4, grad_atol=1e-4),
    Case("matmul_4d_broadcast_transposed", [(2, 1, 4, 3), (3, 5, 4)],
         lambda a, b: a.transpose(-1, -2) @ b.transpose(-1, -2)),
    Case("linear_layer", [(4, 3), (2, 3), (2,)], lambda x, w, b: x @ w.t() + b),
]
