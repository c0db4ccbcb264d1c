"""unfold, diag, diagonal with an offset, max_pool2d with indices, max_unpool2d, masked_select
and nonzero: values, int64 indices and gradients.

The Rust closures are in tests/torch/select.rs, in the same order.
"""

import torch
import torch.nn.functional as F

from case import Case



def unpool(*args, **kw):
    # max_unpool2d scatters (no deterministic kernel in PyTorch; its indices never collide here).
    torch.use_deterministic_algorithms(False)
    try:
        return F.max_unpool2d(*args, **kw)
    finally:
        torch.use_deterministic_algorithms(True)


CASES = [
    Case("unfold", [(3, 8)], lambda a: a.unfold(1, 3, 2)),
    Case("unfold_overlap", [(7,)], lambda a: a.unfold(0, 4, 1) * torch.arange(4.0)),
    Case("unfold_axis0", [(6, 2, 3)], lambda a: a.unfold(0, 2, 3)),
    Case("unfold_middle", [(2, 9, 3)], lambda a: a.unfold(1, 3, 3) * 2.0),
    Case("unfold_whole", [(4, 5)], lambda a: a.unfold(1, 5, 1)),
    Case("diag_vector", [(4,)], lambda a: torch.diag(a)),
    Case("diag_vector_above", [(3,)], lambda a: torch.diag(a, 2) * 3.0),
    Case("diag_vector_below", [(3,)], lambda a: torch.diag(a, -1)),
    Case("diag_matrix", [(4, 4)], lambda a: torch.diag(a)),
    Case("diag_matrix_offset", [(3, 5)], lambda a: torch.diag(a, 1)),
    Case("diag_matrix_below", [(5, 3)], lambda a: torch.diag(a, -2)),
    Case("diag_int", [(3,)], lambda a: torch.diag(a, 1), dtype="int32", low=-5, high=5),
    Case("diagonal_nonsquare", [(3, 5)], lambda a: torch.diagonal(a, 0)),
    Case("diagonal_offset_batched", [(2, 4, 5)], lambda a: torch.diagonal(a, 1, 1, 2)),
    Case("diagonal_negative_offset", [(2, 4, 5)], lambda a: torch.diagonal(a, -2, 1, 2) * 2.0),
    Case("diagonal_axes_02", [(4, 2, 3)], lambda a: torch.diagonal(a, 1, 0, 2)),
    Case("diagonal_past_end", [(3, 3)], lambda a: torch.diagonal(a, 5)),
    Case("max_pool2d_values", [(2, 3, 6, 6)], lambda a: F.max_pool2d(a, 2, return_indices=True)[0]),
    Case("max_pool2d_indices", [(2, 3, 6, 6)], lambda a: F.max_pool2d(a, 2, return_indices=True)[1]),
    Case("max_pool2d_indices_strided_padded", [(1, 2, 7, 7)],
         lambda a: F.max_pool2d(a, 3, stride=2, padding=1, return_indices=True)[1]),
    Case("max_pool2d_indices_ties", [(1, 1, 4, 4)], lambda a: F.max_pool2d(a, 2, return_indices=True)[1],
         vals=[[1.0, 1.0, 2.0, 0.0, 1.0, 1.0, 2.0, 2.0, 0.0, 0.0, 3.0, 1.0, 0.0, 0.0, 1.0, 3.0]]),
    Case("max_unpool2d", [(1, 2, 6, 6)],
         lambda a: unpool(*F.max_pool2d(a, 2, return_indices=True), 2)),
    Case("max_unpool2d_strided", [(1, 2, 7, 7)],
         lambda a: unpool(*F.max_pool2d(a, 3, stride=2, padding=1, return_indices=True), 3, stride=2, padding=1,
                           output_size=(7, 7))),
    Case("max_unpool2d_per_axis", [(1, 2, 7, 5)],
         lambda a: unpool(*F.max_pool2d(a, (3, 2), stride=(2, 1), padding=(1, 0), return_indices=True), (3, 2),
                           stride=(2, 1), padding=(1, 0))),
    Case("masked_select", [(3, 4), (3, 4)], lambda a, m: torch.masked_select(a, m), dtype=["float32", "bool"]),
    Case("masked_select_broadcast", [(3, 4), (4,)], lambda a, m: torch.masked_select(a, m) * 2.0,
         dtype=["float32", "bool"]),
    Case("masked_select_none", [(2, 3)], lambda a: torch.masked_select(a, a > 100.0)),
    Case("nonzero", [(3, 4)], lambda a: torch.nonzero(a), dtype="int32", low=-1, high=2),
    Case("nonzero_3d", [(2, 2, 3)], lambda a: torch.nonzero(a > 0.5)),
    Case("nonzero_bool", [(5,)], lambda a: torch.nonzero(a), dtype="bool"),
]
