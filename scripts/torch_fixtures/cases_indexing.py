"""Indexing: slices (any step, negative via index_select since PyTorch has none), ints, None,
ellipsis, integer-tensor indices (advanced indexing), gather, scatter, scatter_reduce,
masked_fill and writing into a slice (index_put)."""

import torch

from case import Case


def sl(x, dim, start, stop, step):
    """x[start:stop:step] along dim with Python semantics (negative steps too)."""
    idx = list(range(x.shape[dim]))[slice(start, stop, step)]
    return x.index_select(dim, torch.tensor(idx, dtype=torch.long))


def put(x, idx, v):
    """x[idx] = v on a copy, differentiable in both."""
    y = x.clone()
    y[idx] = v
    return y


L = "int64"
FI = ["float32", "int64"]
FFI = ["float32", "float32", "int64"]

CASES = [
    # ---------------------------------------------------------------- basic slicing
    Case("slice_range", [(6, 3)], lambda x: x[1:4]),
    Case("slice_step", [(7, 6)], lambda x: x[::2, 1:5:2]),
    Case("slice_step_uneven", [(8,)], lambda x: x[1::3]),
    Case("slice_neg_bounds", [(5, 4)], lambda x: x[-3:-1, :-2]),
    Case("slice_reverse", [(5, 3)], lambda x: sl(x, 0, None, None, -1)),
    Case("slice_neg_step2", [(7, 2)], lambda x: sl(x, 0, None, None, -2)),
    Case("slice_neg_step_bounds", [(8, 3)], lambda x: sl(x, 0, 6, 1, -2)),
    Case("slice_neg_step_both", [(5, 6)], lambda x: sl(sl(x, 0, -1, None, -3), 1, 4, -7, -1)),
    Case("slice_out_of_range", [(4, 2)], lambda x: x[2:10]),
    Case("slice_empty", [(4, 2)], lambda x: x[3:1]),
    Case("slice_past_end_empty", [(4, 2)], lambda x: x[5:]),
    Case("int_index", [(3, 4)], lambda x: x[1]),
    Case("int_index_neg", [(3, 4, 2)], lambda x: x[-1, 2]),
    Case("int_index_to_0d", [(3, 4)], lambda x: x[2, -1]),
    Case("newaxis", [(3, 4)], lambda x: x[None, 1:, None]),
    Case("ellipsis_last", [(2, 3, 4)], lambda x: x[..., 1]),
    Case("ellipsis_middle", [(2, 3, 4)], lambda x: x[1, ..., None]),
    Case("ellipsis_only", [(2, 3)], lambda x: x[...]),
    Case("combined_python_example", [(6, 4, 2, 5)], lambda x: sl(x[1:5:2], 1, None, None, -1)[:, :, None, ..., 3]),
    Case("slice_0d_newaxis", [()], lambda x: x[None]),
    Case("slice_noncontig", [(4, 5)], lambda x: x.t()[1:4:2, ::3]),
    # ---------------------------------------------------------------- tensor indices
    Case("tensor_index_dim0", [(5, 3), (4,)], lambda x, i: x[i], dtypes=FI, vals=[None, [4, 0, 2, 0]]),
    Case("tensor_index_dim1", [(3, 5), (2,)], lambda x, i: x[:, i], dtypes=FI, vals=[None, [3, 1]]),
    Case("tensor_index_negative", [(5,), (3,)], lambda x, i: x[i], dtypes=FI, vals=[None, [-1, -5, 2]]),
    Case("tensor_index_2d_index", [(4, 3), (2, 2)], lambda x, i: x[i], dtypes=FI, vals=[None, [[0, 1], [3, 3]]]),
    Case("tensor_index_two", [(4, 5), (3,), (3,)], lambda x, i, j: x[i, j],
         dtypes=["float32", L, L], vals=[None, [0, 3, 1], [4, 0, 2]]),
    Case("tensor_index_broadcast", [(4, 5), (2, 1), (3,)], lambda x, i, j: x[i, j],
         dtypes=["float32", L, L], vals=[None, [[1], [3]], [0, 2, 4]]),
    Case("tensor_index_adjacent_middle", [(2, 4, 5, 3), (2,), (2,)], lambda x, i, j: x[:, i, j],
         dtypes=["float32", L, L], vals=[None, [3, 0], [1, 4]]),
    Case("tensor_index_non_adjacent", [(4, 3, 5), (2,), (2,)], lambda x, i, j: x[i, :, j],
         dtypes=["float32", L, L], vals=[None, [3, 0], [1, 4]]),
    Case("tensor_index_with_int", [(3, 4, 5), (2,)], lambda x, i: x[0, :, i], dtypes=FI, vals=[None, [4, 1]]),
    Case("tensor_index_with_slice", [(6, 5), (3,)], lambda x, i: x[1:5:2, i], dtypes=FI, vals=[None, [0, 4, 4]]),
    Case("tensor_index_0d", [(4, 3), ()], lambda x, i: x[i], dtypes=FI, vals=[None, [2]]),
    Case("tensor_index_int32", [(5, 2), (3,)], lambda x, i: x[i], dtypes=["float32", "int32"], vals=[None, [1, 1, 4]]),
    Case("tensor_index_int_data", [(5,), (3,)], lambda x, i: x[i], dtypes=["int32", L], vals=[None, [1, 4, 0]],
         low=-9, high=9),
    # ---------------------------------------------------------------- gather / scatter
    Case("gather_dim0", [(3, 4), (2, 4)], lambda x, i: torch.gather(x, 0, i), dtypes=FI,
         vals=[None, [[0, 2, 1, 2], [1, 0, 0, 2]]]),
    Case("gather_dim1", [(3, 4), (3, 2)], lambda x, i: torch.gather(x, 1, i), dtypes=FI,
         vals=[None, [[3, 0], [1, 1], [2, 0]]]),
    Case("gather_smaller_index", [(4, 5, 2), (2, 3, 1)], lambda x, i: torch.gather(x, 1, i), dtypes=FI,
         vals=[None, [[[4], [0], [2]], [[1], [1], [3]]]]),
    Case("gather_neg_dim", [(2, 3), (2, 5)], lambda x, i: torch.gather(x, -1, i), dtypes=FI,
         vals=[None, [[0, 2, 1, 2, 2], [1, 0, 0, 2, 1]]]),
    Case("scatter_dim0", [(3, 4), (2, 4), (2, 4)], lambda x, s, i: x.scatter(0, i, s), dtypes=FFI,
         vals=[None, None, [[0, 2, 1, 2], [1, 0, 2, 0]]]),
    Case("scatter_dim1", [(2, 5), (2, 2), (2, 2)], lambda x, s, i: x.scatter(1, i, s), dtypes=FFI,
         vals=[None, None, [[4, 0], [1, 3]]]),
    Case("scatter_add", [(3, 3), (2, 3), (2, 3)], lambda x, s, i: x.scatter_add(0, i, s), dtypes=FFI,
         vals=[None, None, [[0, 2, 2], [0, 2, 1]]]),
    Case("scatter_reduce_sum", [(4,), (6,), (6,)], lambda x, s, i: x.scatter_reduce(0, i, s, "sum"), dtypes=FFI,
         vals=[None, None, [0, 1, 0, 3, 3, 3]]),
    Case("scatter_reduce_sum_exclude", [(4,), (6,), (6,)],
         lambda x, s, i: x.scatter_reduce(0, i, s, "sum", include_self=False), dtypes=FFI,
         vals=[None, None, [0, 1, 0, 3, 3, 3]]),
    Case("scatter_reduce_mean", [(2, 4), (2, 3), (2, 3)], lambda x, s, i: x.scatter_reduce(1, i, s, "mean"),
         dtypes=FFI, vals=[None, None, [[0, 0, 2], [3, 1, 3]]]),
    Case("scatter_reduce_mean_exclude", [(2, 4), (2, 3), (2, 3)],
         lambda x, s, i: x.scatter_reduce(1, i, s, "mean", include_self=False), dtypes=FFI,
         vals=[None, None, [[0, 0, 2], [3, 1, 3]]]),
    Case("scatter_reduce_amax", [(5,), (4,), (4,)], lambda x, s, i: x.scatter_reduce(0, i, s, "amax"), dtypes=FFI,
         vals=[None, None, [1, 1, 4, 0]]),
    Case("scatter_reduce_amin_exclude", [(5,), (4,), (4,)],
         lambda x, s, i: x.scatter_reduce(0, i, s, "amin", include_self=False), dtypes=FFI,
         vals=[None, None, [1, 1, 4, 0]]),
    Case("scatter_reduce_prod", [(4,), (5,), (5,)], lambda x, s, i: x.scatter_reduce(0, i, s, "prod"), dtypes=FFI,
         vals=[None, None, [2, 2, 0, 3, 2]]),
    # ---------------------------------------------------------------- masks and writes
    Case("masked_fill_scalar", [(3, 4), (3, 4)], lambda x, m: x.masked_fill(m, -1.5), dtypes=["float32", "bool"]),
    Case("masked_fill_broadcast", [(3, 4), (4,)], lambda x, m: x.masked_fill(m, 2.0), dtypes=["float32", "bool"]),
    Case("masked_fill_int", [(2, 3), (2, 3)], lambda x, m: x.masked_fill(m, 7), dtypes=["int32", "bool"],
         low=-5, high=5),
    Case("where_mask", [(2, 3), (2, 3), (2, 3)], lambda m, a, b: torch.where(m, a, b),
         dtypes=["bool", "float32", "float32"]),
    Case("index_put_slice", [(4, 5), (2, 5)], lambda x, v: put(x, (slice(1, 3),), v)),
    Case("index_put_step_scalar", [(6, 3)], lambda x: put(x, (slice(None, None, 2), 1), 5.0)),
    Case("index_put_broadcast_value", [(3, 4), (4,)], lambda x, v: put(x, (slice(0, 2),), v)),
    Case("index_put_int", [(3, 4), (4,)], lambda x, v: put(x, (1,), v)),
    Case("index_put_tensor_index", [(5, 3), (2, 3), (2,)], lambda x, v, i: put(x, (i,), v),
         dtypes=FFI, vals=[None, None, [3, 0]]),
    Case("index_put_tensor_and_slice", [(4, 5), (2, 2), (2,)], lambda x, v, i: put(x, (slice(1, 3), i), v),
         dtypes=FFI, vals=[None, None, [4, 1]]),
    Case("index_put_neg_step", [(5, 2), (3, 2)],
         lambda x, v: put(x, (torch.tensor([4, 2, 0]),), v)),
]
