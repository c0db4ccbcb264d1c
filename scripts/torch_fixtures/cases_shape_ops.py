"""Shape ops: cat, stack, split, chunk, repeat, repeat_interleave, tile, pad modes, roll,
tril/triu, unflatten, meshgrid."""

import torch
import torch.nn.functional as F

from case import Case


def weighted(pieces, dim):
    """Every piece scaled by its position, joined again: checks each piece and its gradient."""
    return torch.cat([p * (i + 1) for i, p in enumerate(pieces)], dim)


CASES = [
    # ---------------------------------------------------------------- cat / stack
    Case("cat_dim0", [(2, 3), (4, 3)], lambda a, b: torch.cat([a, b], 0)),
    Case("cat_dim1", [(2, 3), (2, 1)], lambda a, b: torch.cat([a, b], 1)),
    Case("cat_neg_dim", [(2, 2, 3), (2, 2, 2)], lambda a, b: torch.cat([a, b], -1)),
    Case("cat_three", [(1, 3), (2, 3), (3, 3)], lambda a, b, c: torch.cat([a, b, c], 0)),
    Case("cat_with_empty", [(2, 3), (0, 3), (1, 3)], lambda a, b, c: torch.cat([a, b, c], 0)),
    Case("cat_legacy_empty_1d", [(2, 3), (0,)], lambda a, b: torch.cat([a, b], 1)),
    Case("cat_self", [(2, 2)], lambda a: torch.cat([a, a * 2], 0)),
    Case("cat_noncontig", [(3, 2), (2, 2)], lambda a, b: torch.cat([a.t(), b], 1)),
    Case("cat_promote_int_float", [(2, 2), (2, 2)], lambda a, b: torch.cat([a, b], 0),
         dtypes=["int32", "float32"], low=-5, high=5),
    Case("cat_bool", [(2, 2), (1, 2)], lambda a, b: torch.cat([a, b], 0), dtypes=["bool", "bool"]),
    Case("cat_1d", [(3,), (2,)], lambda a, b: torch.cat([a, b])),
    Case("stack_dim0", [(2, 3), (2, 3)], lambda a, b: torch.stack([a, b], 0)),
    Case("stack_dim_last", [(2, 3), (2, 3), (2, 3)], lambda a, b, c: torch.stack([a, b, c], -1)),
    Case("stack_middle", [(2, 3), (2, 3)], lambda a, b: torch.stack([a, b], 1)),
    Case("stack_0d", [(), ()], lambda a, b: torch.stack([a, b])),
    # ---------------------------------------------------------------- split / chunk
    Case("split_size", [(3, 5)], lambda x: weighted(x.split(2, 1), 1)),
    Case("split_sizes", [(6, 2)], lambda x: weighted(x.split([1, 3, 2], 0), 0)),
    Case("split_larger_than_dim", [(3, 2)], lambda x: weighted(x.split(5, 0), 0)),
    Case("chunk_3_of_7", [(7, 2)], lambda x: weighted(x.chunk(3, 0), 0)),
    Case("chunk_uneven_fewer", [(2, 6)], lambda x: torch.stack(list(x.chunk(4, 1)), 0)),
    Case("chunk_second_piece", [(2, 5)], lambda x: x.chunk(2, -1)[1]),
    # ---------------------------------------------------------------- repeat / tile
    Case("repeat_2d", [(2, 3)], lambda x: x.repeat(2, 3)),
    Case("repeat_new_dims", [(2, 3)], lambda x: x.repeat(2, 1, 2)),
    Case("repeat_ones", [(1, 3)], lambda x: x.repeat(3, 1)),
    Case("repeat_1d", [(3,)], lambda x: x.repeat(4)),
    Case("repeat_interleave_dim1", [(2, 3)], lambda x: x.repeat_interleave(2, dim=1)),
    Case("repeat_interleave_dim0", [(3, 2)], lambda x: x.repeat_interleave(3, dim=0)),
    Case("repeat_interleave_flat", [(2, 2)], lambda x: x.repeat_interleave(2)),
    Case("tile_short_reps", [(2, 3)], lambda x: x.tile((2,))),
    Case("tile_long_reps", [(2, 3)], lambda x: x.tile((2, 1, 2))),
    # ---------------------------------------------------------------- pad modes
    Case("pad_constant_value", [(2, 3)], lambda x: F.pad(x, (1, 2, 0, 1), value=1.5)),
    Case("pad_constant_zero", [(1, 2, 3)], lambda x: F.pad(x, (2, 1))),
    Case("pad_constant_negative", [(3, 5)], lambda x: F.pad(x, (-1, 2, 1, -2), value=-1.0)),
    Case("pad_reflect_1d", [(1, 2, 5)], lambda x: F.pad(x, (2, 3), mode="reflect")),
    Case("pad_reflect_2d", [(1, 1, 4, 5)], lambda x: F.pad(x, (1, 2, 3, 1), mode="reflect")),
    Case("pad_replicate_2d", [(1, 2, 3, 3)], lambda x: F.pad(x, (2, 1, 0, 2), mode="replicate")),
    Case("pad_replicate_1d", [(2, 1, 3)], lambda x: F.pad(x, (3, 0), mode="replicate")),
    Case("pad_circular_2d", [(1, 1, 3, 4)], lambda x: F.pad(x, (1, 2, 2, 1), mode="circular")),
    Case("pad_circular_full", [(1, 1, 3)], lambda x: F.pad(x, (3, 3), mode="circular")),
    Case("pad_int_constant", [(2, 2)], lambda x: F.pad(x, (1, 1), value=7), dtype="int32", low=-5, high=5),
    # ---------------------------------------------------------------- roll
    Case("roll_dim0", [(5, 2)], lambda x: torch.roll(x, 2, 0)),
    Case("roll_negative", [(2, 5)], lambda x: torch.roll(x, -1, 1)),
    Case("roll_two_dims", [(3, 4)], lambda x: torch.roll(x, (1, -3), (0, 1))),
    Case("roll_flat", [(3, 4)], lambda x: torch.roll(x, 5)),
    Case("roll_more_than_size", [(4,)], lambda x: torch.roll(x, 9, 0)),
    Case("roll_zero", [(3,)], lambda x: torch.roll(x, 3, 0)),
    # ---------------------------------------------------------------- tril / triu
    Case("tril", [(4, 4)], lambda x: torch.tril(x)),
    Case("triu", [(3, 5)], lambda x: torch.triu(x)),
    Case("tril_neg_diag", [(4, 3)], lambda x: torch.tril(x, -1)),
    Case("triu_diag2", [(3, 5)], lambda x: torch.triu(x, 2)),
    Case("triu_big_diag", [(3, 3)], lambda x: torch.triu(x, 5)),
    Case("tril_batched", [(2, 3, 3)], lambda x: torch.tril(x, 1)),
    Case("triu_int", [(3, 3)], lambda x: torch.triu(x), dtype="int32", low=-5, high=5),
    # ---------------------------------------------------------------- unflatten / meshgrid / misc
    Case("unflatten", [(2, 12)], lambda x: x.unflatten(1, (3, 4))),
    Case("unflatten_infer", [(6, 2)], lambda x: x.unflatten(0, (-1, 2))),
    Case("meshgrid_ij", [(3,), (4,)], lambda a, b: torch.stack(torch.meshgrid(a, b, indexing="ij"))),
    Case("meshgrid_xy", [(3,), (4,)], lambda a, b: torch.stack(torch.meshgrid(a, b, indexing="xy"))),
    Case("meshgrid_xy_three", [(2,), (3,), (2,)],
         lambda a, b, c: torch.stack(torch.meshgrid(a, b, c, indexing="xy"))),
    Case("meshgrid_products", [(3,), (2,)], lambda a, b: (lambda g: g[0] * g[1])(torch.meshgrid(a, b, indexing="ij"))),
    Case("cat_after_pad_reflect", [(1, 3), (1, 5)],
         lambda a, b: torch.cat([F.pad(a.unsqueeze(0), (1, 1), mode="reflect").squeeze(0), b], 1)),
]
