"""Movement ops: reshape, permute, expand, pad, shrink (slicing), flip, transpose, t, squeeze,
unsqueeze, flatten, contiguous and chains of them.

Most cases multiply the moved tensor by a second input `w` of the output's shape, so the
gradient of `sum()` is `w` moved back, which checks where each gradient element lands (the
gradient of a plain `sum()` would be all ones). The Rust closures are in tests/torch/movement.rs.
"""

import torch
import torch.nn.functional as F

from case import Case


def mv(name, shape, out_shape, op, **kw):
    """`op(x) * w` with `w` of the output's shape."""
    return Case(name, [shape, out_shape], lambda x, w: op(x) * w, **kw)


def pad(x, pads):
    """ferrograd's `pad(&[(before, after), ...])`, first axis first."""
    flat = []
    for before, after in reversed(pads):
        flat += [before, after]
    return F.pad(x, flat)


CASES = [
    # ---------------------------------------------------------------- reshape
    mv("reshape", (2, 6), (3, 4), lambda x: x.reshape(3, 4)),
    mv("reshape_infer", (2, 3, 4), (4, 6), lambda x: x.reshape(4, -1)),
    mv("reshape_split_axes", (24,), (2, 3, 4), lambda x: x.reshape(2, 3, 4)),
    mv("reshape_to_0d", (1, 1), (), lambda x: x.reshape(())),
    mv("reshape_from_0d", (), (1, 1, 1), lambda x: x.reshape(1, 1, 1)),
    mv("reshape_add_size1", (3, 4), (3, 1, 4, 1), lambda x: x.reshape(3, 1, 4, 1)),
    mv("reshape_of_permuted", (3, 4), (12,), lambda x: x.permute(1, 0).reshape(-1)),
    mv("reshape_of_flipped", (2, 3, 2), (3, 4), lambda x: x.flip(1).reshape(3, 4)),
    Case("reshape_empty", [(0, 3)], lambda x: x.reshape(3, 0)),
    Case("reshape_int", [(2, 6)], lambda x: x.reshape(4, 3), dtype="int32", low=-100, high=100),
    # ---------------------------------------------------------------- permute / transpose / t
    mv("permute_3d", (2, 3, 4), (4, 2, 3), lambda x: x.permute(2, 0, 1)),
    mv("permute_swap_first", (2, 3, 4), (3, 2, 4), lambda x: x.permute(1, 0, 2)),
    mv("permute_4d", (2, 1, 3, 2), (2, 1, 2, 3), lambda x: x.permute(3, 1, 0, 2)),
    mv("permute_negative_axes", (2, 3, 4), (4, 3, 2), lambda x: x.permute(-1, -2, -3)),
    mv("permute_identity", (2, 3), (2, 3), lambda x: x.permute(0, 1)),
    mv("permute_twice", (2, 3, 4), (3, 4, 2), lambda x: x.permute(2, 0, 1).permute(2, 0, 1)),
    mv("transpose", (2, 3), (3, 2), lambda x: x.transpose(0, 1)),
    mv("transpose_outer", (2, 3, 4), (4, 3, 2), lambda x: x.transpose(0, 2)),
    mv("transpose_negative", (2, 3, 4), (2, 4, 3), lambda x: x.transpose(-1, -2)),
    mv("t", (3, 5), (5, 3), lambda x: x.t()),
    mv("t_batched", (2, 3, 5), (2, 5, 3), lambda x: x.transpose(-2, -1)),
    Case("permute_bool", [(2, 3, 2)], lambda x: x.permute(1, 2, 0), dtype="bool"),
    # ---------------------------------------------------------------- expand
    mv("expand_row", (1, 3), (4, 3), lambda x: x.expand(4, 3)),
    mv("expand_col", (3, 1), (3, 5), lambda x: x.expand(3, 5)),
    mv("expand_new_axes", (3, 1), (2, 3, 4), lambda x: x.expand(2, 3, 4)),
    mv("expand_keep_axis", (1, 4), (3, 4), lambda x: x.expand(3, -1)),
    mv("expand_0d", (), (2, 3), lambda x: x.expand(2, 3)),
    mv("expand_middle", (2, 1, 3), (2, 4, 3), lambda x: x.expand(2, 4, 3)),
    mv("expand_then_reshape", (3, 1), (12,), lambda x: x.expand(3, 4).reshape(12)),
    mv("expand_of_permuted", (1, 3), (3, 2), lambda x: x.permute(1, 0).expand(3, 2)),
    mv("expand_to_empty", (1, 3), (0, 3), lambda x: x.expand(0, 3)),
    Case("expand_int", [(1, 3)], lambda x: x.expand(2, 3), dtype="int32", low=-100, high=100),
    # ---------------------------------------------------------------- pad
    mv("pad_2d", (3, 3), (6, 4), lambda x: pad(x, [(1, 2), (0, 1)])),
    mv("pad_1d", (4,), (7,), lambda x: pad(x, [(2, 1)])),
    mv("pad_3d_one_axis", (2, 3, 2), (2, 3, 5), lambda x: pad(x, [(0, 0), (0, 0), (3, 0)])),
    mv("pad_of_flipped", (2, 3), (4, 4), lambda x: pad(x.flip(1), [(1, 1), (0, 1)])),
    mv("pad_of_permuted", (2, 3), (5, 2), lambda x: pad(x.t(), [(2, 0), (0, 0)])),
    mv("pad_size1", (1, 1), (3, 2), lambda x: pad(x, [(1, 1), (1, 0)])),
    mv("pad_empty", (0, 2), (2, 2), lambda x: pad(x, [(1, 1), (0, 0)])),
    Case("pad_int", [(2, 2)], lambda x: pad(x, [(1, 0), (0, 2)]), dtype="int32", low=-100, high=100),
    # ---------------------------------------------------------------- shrink (slicing)
    mv("shrink_2d", (4, 5), (2, 2), lambda x: x[1:3, 0:2]),
    mv("shrink_one_axis", (3, 6), (3, 3), lambda x: x[:, 2:5]),
    mv("shrink_3d", (3, 4, 5), (1, 2, 3), lambda x: x[2:3, 1:3, 0:3]),
    mv("shrink_to_size1", (4, 4), (1, 1), lambda x: x[3:4, 0:1]),
    mv("shrink_to_empty", (4, 3), (0, 3), lambda x: x[1:1]),
    mv("shrink_of_transposed", (4, 5), (3, 2), lambda x: x.t()[1:4, 2:4]),
    Case("shrink_bool", [(3, 4)], lambda x: x[1:3, 1:4], dtype="bool"),
    # ---------------------------------------------------------------- flip
    mv("flip_0", (3, 4), (3, 4), lambda x: x.flip(0)),
    mv("flip_1", (3, 4), (3, 4), lambda x: x.flip(1)),
    mv("flip_negative", (2, 3, 4), (2, 3, 4), lambda x: x.flip(-1)),
    mv("flip_two_axes", (2, 3, 4), (2, 3, 4), lambda x: x.flip(0, 2)),
    mv("flip_all", (2, 3, 2), (2, 3, 2), lambda x: x.flip(0, 1, 2)),
    mv("flip_size1_axis", (1, 4), (1, 4), lambda x: x.flip(0)),
    mv("flip_twice", (3, 4), (3, 4), lambda x: x.flip(1).flip(1)),
    Case("flip_int", [(5,)], lambda x: x.flip(0), dtype="int64", low=-1000, high=1000),
    # ---------------------------------------------------------------- squeeze / unsqueeze / flatten
    mv("squeeze_all", (1, 3, 1, 2), (3, 2), lambda x: x.squeeze()),
    mv("squeeze_first", (1, 3, 1), (3, 1), lambda x: x.squeeze(0)),
    mv("squeeze_negative", (1, 3, 1), (1, 3), lambda x: x.squeeze(-1)),
    mv("squeeze_non_unit_is_noop", (1, 3, 1), (1, 3, 1), lambda x: x.squeeze(1)),
    mv("squeeze_to_0d", (1, 1), (), lambda x: x.squeeze()),
    mv("unsqueeze_front", (3, 2), (1, 3, 2), lambda x: x.unsqueeze(0)),
    mv("unsqueeze_back", (3, 2), (3, 2, 1), lambda x: x.unsqueeze(-1)),
    mv("unsqueeze_middle", (3, 2), (3, 1, 2), lambda x: x.unsqueeze(1)),
    mv("unsqueeze_0d", (), (1,), lambda x: x.unsqueeze(0)),
    mv("flatten", (2, 3, 4), (24,), lambda x: x.flatten()),
    mv("flatten_range", (2, 3, 4, 2), (2, 12, 2), lambda x: x.flatten(1, 2)),
    mv("flatten_range_negative", (2, 3, 4), (2, 12), lambda x: x.flatten(-2, -1)),
    mv("flatten_0d", (), (1,), lambda x: x.flatten()),
    mv("flatten_of_permuted", (2, 3, 4), (24,), lambda x: x.permute(2, 0, 1).flatten()),
    # ---------------------------------------------------------------- contiguous
    mv("contiguous", (3, 4), (4, 3), lambda x: x.t().contiguous()),
    mv("contiguous_then_reshape", (2, 3, 2), (6, 2), lambda x: x.permute(1, 0, 2).contiguous().reshape(6, 2)),
    Case("contiguous_used_twice", [(3, 4)], lambda x: (lambda c: c * c + c.flip(0))(x.t().contiguous() * 2.0)),
    # ---------------------------------------------------------------- more ranks, dtypes and sizes
    mv("permute_5d", (2, 1, 3, 2, 2), (2, 3, 2, 2, 1), lambda x: x.permute(4, 2, 0, 3, 1)),
    mv("permute_medium", (6, 10, 7), (7, 6, 10), lambda x: x.permute(2, 0, 1)),
    mv("pad_medium_then_shrink", (12, 20), (14, 9), lambda x: pad(x, [(2, 3), (0, 4)])[1:15, 15:24]),
    mv("expand_size1_noop", (1, 1), (1, 1), lambda x: x.expand(1, 1)),
    mv("squeeze_0d", (), (), lambda x: x.squeeze()),
    mv("unsqueeze_negative_middle", (3, 2), (3, 1, 2), lambda x: x.unsqueeze(-2)),
    mv("chain_expand_flip_pad", (1, 3), (4, 5), lambda x: pad(x.expand(3, 3).flip(1), [(1, 0), (1, 1)])),
    Case("permute_uint8", [(2, 3, 4)], lambda x: x.permute(2, 0, 1).reshape(4, 6), dtype="uint8", low=0, high=255),
    Case("flip_pad_f64", [(2, 3), (4, 4)], lambda x, w: pad(x.flip(0), [(1, 1), (0, 1)]) * w, dtype="float64",
         atol=1e-12, rtol=1e-12, grad_atol=1e-12, grad_rtol=1e-12),
    Case("pad_shrink_bf16", [(3, 3), (3, 4)], lambda x, w: pad(x, [(1, 0), (0, 2)])[0:3, 1:5] * w, dtype="bfloat16",
         atol=1e-2, rtol=2e-2, grad_atol=1e-2, grad_rtol=2e-2),
    Case("expand_int8", [(3, 1)], lambda x: x.expand(3, 4).t(), dtype="int8", low=-128, high=127),
    # ---------------------------------------------------------------- chains
    mv("chain_permute_reshape_flip", (2, 3, 4), (6, 4), lambda x: x.permute(1, 0, 2).reshape(6, 4).flip(0)),
    mv("chain_pad_shrink", (3, 3), (3, 3), lambda x: pad(x, [(1, 1), (1, 1)])[0:3, 2:5]),
    mv("chain_shrink_pad", (4, 4), (4, 4), lambda x: pad(x[1:3, 0:3], [(1, 1), (0, 1)])),
    mv("chain_expand_transpose_reshape", (3, 1), (2, 2, 3), lambda x: x.expand(3, 4).t().reshape(2, 2, 3)),
    mv("chain_flip_transpose_pad", (2, 3), (4, 3), lambda x: pad(x.flip(0).t(), [(0, 1), (1, 0)])),
    mv("chain_unsqueeze_expand_flatten", (3,), (6,), lambda x: x.unsqueeze(0).expand(2, 3).flatten()),
    mv("chain_reshape_shrink_expand", (6,), (2, 2, 3), lambda x: x.reshape(2, 3)[0:1].expand(2, 2, 3)),
    mv("chain_long", (2, 3, 4), (4, 5),
       lambda x: pad(x.flip(2).permute(2, 0, 1).reshape(4, 6)[:, 1:5], [(0, 0), (1, 0)])),
    Case("chain_with_elementwise", [(3, 4), (4, 3)], lambda x, y: (x.t() + y).flip(0)[1:3] * x[0:2, 0:3].t().t()),
    Case("chain_same_input_two_views", [(3, 3)], lambda x: x * x.t() + x.flip(0) * x.flip(1)),
    Case("chain_int", [(2, 3)], lambda x: pad(x.t().flip(0), [(1, 0), (0, 1)]).reshape(-1),
         dtype="int32", low=-100, high=100),
    Case("chain_f16", [(2, 3), (3, 2)], lambda x, w: x.t().flip(1) * w, dtype="float16",
         atol=1e-3, rtol=1e-2, grad_atol=1e-3, grad_rtol=1e-2),
]
