"""sort, argsort and topk: values (with gradients scattered back through the permutation) and
int64 indices, ascending and descending, along any axis, with ties (stable order), NaN and
infinities, ints and bools.

The Rust closures are in tests/torch/sort.rs, in the same order.
"""

import math

import torch

from case import Case

INF, NAN = math.inf, math.nan
TIES = [[2.0, 1.0, 2.0, 0.0, 1.0, 2.0, -1.0, 0.0]]
SPECIAL = [[1.0, NAN, -INF, 0.0, INF, -2.0, NAN, -0.5]]


def sort(a, dim=-1, descending=False):
    return torch.sort(a, dim=dim, descending=descending, stable=True)


CASES = [
    Case("sort_values", [(3, 6)], lambda a: sort(a).values),
    Case("sort_indices", [(3, 6)], lambda a: sort(a).indices),
    Case("sort_desc_values", [(3, 6)], lambda a: sort(a, descending=True).values * 2.0),
    Case("sort_desc_indices", [(3, 6)], lambda a: sort(a, descending=True).indices),
    Case("sort_axis0", [(5, 3)], lambda a: sort(a, dim=0).values),
    Case("sort_axis0_indices", [(5, 3)], lambda a: sort(a, dim=0).indices),
    Case("sort_3d_middle", [(2, 4, 3)], lambda a: sort(a, dim=1, descending=True).values),
    Case("sort_ties_stable", [(8,)], lambda a: sort(a).indices, vals=TIES),
    Case("sort_ties_stable_desc", [(8,)], lambda a: sort(a, descending=True).indices, vals=TIES),
    Case("sort_ties_values_grad", [(8,)], lambda a: sort(a).values * torch.arange(8.0), vals=TIES),
    Case("sort_special", [(8,)], lambda a: sort(a).values, vals=SPECIAL, grad=False),
    Case("sort_special_indices", [(8,)], lambda a: sort(a).indices, vals=SPECIAL),
    Case("sort_special_desc_indices", [(8,)], lambda a: sort(a, descending=True).indices, vals=SPECIAL),
    Case("sort_int", [(10,)], lambda a: sort(a).values, dtype="int32", low=-5, high=5),
    Case("sort_int_indices", [(10,)], lambda a: sort(a, descending=True).indices, dtype="int32", low=-5, high=5),
    Case("sort_bool", [(6,)], lambda a: sort(a).values, dtype="bool"),
    Case("sort_0d", [()], lambda a: sort(a, dim=0).values * 3.0),
    Case("sort_long_row", [(2, 300)], lambda a: sort(a, dim=1).values * torch.arange(300.0)),
    Case("argsort", [(4, 5)], lambda a: torch.argsort(a, dim=1, stable=True)),
    Case("argsort_desc_axis0", [(4, 5)], lambda a: torch.argsort(a, dim=0, descending=True, stable=True)),
    Case("topk_values", [(3, 8)], lambda a: torch.topk(a, 3).values),
    Case("topk_indices", [(3, 8)], lambda a: torch.topk(a, 3).indices),
    Case("topk_smallest", [(3, 8)], lambda a: torch.topk(a, 2, largest=False).values * 5.0),
    Case("topk_smallest_indices", [(3, 8)], lambda a: torch.topk(a, 2, largest=False).indices),
    Case("topk_axis0", [(6, 4)], lambda a: torch.topk(a, 4, dim=0).values),
    Case("topk_all", [(7,)], lambda a: torch.topk(a, 7).values * torch.arange(7.0)),
    Case("topk_f16", [(3, 8)], lambda a: torch.topk(a, 3).values, dtype="float16",
         atol=1e-3, rtol=1e-2, grad_atol=1e-3, grad_rtol=1e-2),
]
