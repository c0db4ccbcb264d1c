//! Movement ops; fixture made by `scripts/torch_fixtures/cases_movement.py` (same order). Most
//! cases return `moved(x) * w` so that the gradient checks where each element lands.

use super::CaseFn;

fn scalar_shape() -> [usize; 0] {
    []
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // ---------------------------------------------------------------- reshape
        ("reshape", |x| x[0].reshape([3, 4]) * &x[1]),
        ("reshape_infer", |x| x[0].reshape([4, -1]) * &x[1]),
        ("reshape_split_axes", |x| x[0].reshape([2, 3, 4]) * &x[1]),
        ("reshape_to_0d", |x| x[0].reshape(scalar_shape()) * &x[1]),
        ("reshape_from_0d", |x| x[0].reshape([1, 1, 1]) * &x[1]),
        ("reshape_add_size1", |x| x[0].reshape([3, 1, 4, 1]) * &x[1]),
        ("reshape_of_permuted", |x| x[0].permute([1, 0]).reshape([-1]) * &x[1]),
        ("reshape_of_flipped", |x| x[0].flip(1).reshape([3, 4]) * &x[1]),
        ("reshape_empty", |x| x[0].reshape([3, 0])),
        ("reshape_int", |x| x[0].reshape([4, 3])),
        // ---------------------------------------------------------------- permute / transpose / t
        ("permute_3d", |x| x[0].permute([2, 0, 1]) * &x[1]),
        ("permute_swap_first", |x| x[0].permute([1, 0, 2]) * &x[1]),
        ("permute_4d", |x| x[0].permute([3, 1, 0, 2]) * &x[1]),
        ("permute_negative_axes", |x| x[0].permute([-1, -2, -3]) * &x[1]),
        ("permute_identity", |x| x[0].permute([0, 1]) * &x[1]),
        ("permute_twice", |x| x[0].permute([2, 0, 1]).permute([2, 0, 1]) * &x[1]),
        ("transpose", |x| x[0].transpose(0, 1) * &x[1]),
        ("transpose_outer", |x| x[0].transpose(0, 2) * &x[1]),
        ("transpose_negative", |x| x[0].transpose(-1, -2) * &x[1]),
        ("t", |x| x[0].t() * &x[1]),
        ("t_batched", |x| x[0].t() * &x[1]),
        ("permute_bool", |x| x[0].permute([1, 2, 0])),
        // ---------------------------------------------------------------- expand
        ("expand_row", |x| x[0].expand([4, 3]) * &x[1]),
        ("expand_col", |x| x[0].expand([3, 5]) * &x[1]),
        ("expand_new_axes", |x| x[0].expand([2, 3, 4]) * &x[1]),
        ("expand_keep_axis", |x| x[0].expand([3, -1]) * &x[1]),
        ("expand_0d", |x| x[0].expand([2, 3]) * &x[1]),
        ("expand_middle", |x| x[0].expand([2, 4, 3]) * &x[1]),
        ("expand_then_reshape", |x| x[0].expand([3, 4]).reshape([12]) * &x[1]),
        ("expand_of_permuted", |x| x[0].permute([1, 0]).expand([3, 2]) * &x[1]),
        ("expand_to_empty", |x| x[0].expand([0, 3]) * &x[1]),
        ("expand_int", |x| x[0].expand([2, 3])),
        // ---------------------------------------------------------------- pad
        ("pad_2d", |x| x[0].pad(&[(1, 2), (0, 1)]) * &x[1]),
        ("pad_1d", |x| x[0].pad(&[(2, 1)]) * &x[1]),
        ("pad_3d_one_axis", |x| x[0].pad(&[(0, 0), (0, 0), (3, 0)]) * &x[1]),
        ("pad_of_flipped", |x| x[0].flip(1).pad(&[(1, 1), (0, 1)]) * &x[1]),
        ("pad_of_permuted", |x| x[0].t().pad(&[(2, 0), (0, 0)]) * &x[1]),
        ("pad_size1", |x| x[0].pad(&[(1, 1), (1, 0)]) * &x[1]),
        ("pad_empty", |x| x[0].pad(&[(1, 1), (0, 0)]) * &x[1]),
        ("pad_int", |x| x[0].pad(&[(1, 0), (0, 2)])),
        // ---------------------------------------------------------------- shrink (slicing)
        ("shrink_2d", |x| x[0].shrink(&[(1, 3), (0, 2)]) * &x[1]),
        ("shrink_one_axis", |x| x[0].shrink(&[(0, 3), (2, 5)]) * &x[1]),
        ("shrink_3d", |x| x[0].shrink(&[(2, 3), (1, 3), (0, 3)]) * &x[1]),
        ("shrink_to_size1", |x| x[0].shrink(&[(3, 4), (0, 1)]) * &x[1]),
        ("shrink_to_empty", |x| x[0].shrink(&[(1, 1), (0, 3)]) * &x[1]),
        ("shrink_of_transposed", |x| x[0].t().shrink(&[(1, 4), (2, 4)]) * &x[1]),
        ("shrink_bool", |x| x[0].shrink(&[(1, 3), (1, 4)])),
        // ---------------------------------------------------------------- flip
        ("flip_0", |x| x[0].flip(0) * &x[1]),
        ("flip_1", |x| x[0].flip(1) * &x[1]),
        ("flip_negative", |x| x[0].flip(-1) * &x[1]),
        ("flip_two_axes", |x| x[0].flip([0, 2]) * &x[1]),
        ("flip_all", |x| x[0].flip([0, 1, 2]) * &x[1]),
        ("flip_size1_axis", |x| x[0].flip(0) * &x[1]),
        ("flip_twice", |x| x[0].flip(1).flip(1) * &x[1]),
        ("flip_int", |x| x[0].flip(0)),
        // ---------------------------------------------------------------- squeeze / unsqueeze / flatten
        ("squeeze_all", |x| x[0].squeeze(()) * &x[1]),
        ("squeeze_first", |x| x[0].squeeze(0) * &x[1]),
        ("squeeze_negative", |x| x[0].squeeze(-1) * &x[1]),
        ("squeeze_non_unit_is_noop", |x| x[0].squeeze(1) * &x[1]),
        ("squeeze_to_0d", |x| x[0].squeeze(()) * &x[1]),
        ("unsqueeze_front", |x| x[0].unsqueeze(0) * &x[1]),
        ("unsqueeze_back", |x| x[0].unsqueeze(-1) * &x[1]),
        ("unsqueeze_middle", |x| x[0].unsqueeze(1) * &x[1]),
        ("unsqueeze_0d", |x| x[0].unsqueeze(0) * &x[1]),
        ("flatten", |x| x[0].flatten() * &x[1]),
        ("flatten_range", |x| x[0].flatten_range(1, 2) * &x[1]),
        ("flatten_range_negative", |x| x[0].flatten_range(-2, -1) * &x[1]),
        ("flatten_0d", |x| x[0].flatten() * &x[1]),
        ("flatten_of_permuted", |x| x[0].permute([2, 0, 1]).flatten() * &x[1]),
        // ---------------------------------------------------------------- contiguous
        ("contiguous", |x| x[0].t().contiguous() * &x[1]),
        ("contiguous_then_reshape", |x| x[0].permute([1, 0, 2]).contiguous().reshape([6, 2]) * &x[1]),
        ("contiguous_used_twice", |x| {
            let c = x[0].t().contiguous() * 2.0;
            &c * &c + c.flip(0)
        }),
        // ---------------------------------------------------------------- more ranks, dtypes and sizes
        ("permute_5d", |x| x[0].permute([4, 2, 0, 3, 1]) * &x[1]),
        ("permute_medium", |x| x[0].permute([2, 0, 1]) * &x[1]),
        ("pad_medium_then_shrink", |x| x[0].pad(&[(2, 3), (0, 4)]).shrink(&[(1, 15), (15, 24)]) * &x[1]),
        ("expand_size1_noop", |x| x[0].expand([1, 1]) * &x[1]),
        ("squeeze_0d", |x| x[0].squeeze(()) * &x[1]),
        ("unsqueeze_negative_middle", |x| x[0].unsqueeze(-2) * &x[1]),
        ("chain_expand_flip_pad", |x| x[0].expand([3, 3]).flip(1).pad(&[(1, 0), (1, 1)]) * &x[1]),
        ("permute_uint8", |x| x[0].permute([2, 0, 1]).reshape([4, 6])),
        ("flip_pad_f64", |x| x[0].flip(0).pad(&[(1, 1), (0, 1)]) * &x[1]),
        ("pad_shrink_bf16", |x| x[0].pad(&[(1, 0), (0, 2)]).shrink(&[(0, 3), (1, 5)]) * &x[1]),
        ("expand_int8", |x| x[0].expand([3, 4]).t()),
        // ---------------------------------------------------------------- chains
        ("chain_permute_reshape_flip", |x| x[0].permute([1, 0, 2]).reshape([6, 4]).flip(0) * &x[1]),
        ("chain_pad_shrink", |x| x[0].pad(&[(1, 1), (1, 1)]).shrink(&[(0, 3), (2, 5)]) * &x[1]),
        ("chain_shrink_pad", |x| x[0].shrink(&[(1, 3), (0, 3)]).pad(&[(1, 1), (0, 1)]) * &x[1]),
        ("chain_expand_transpose_reshape", |x| x[0].expand([3, 4]).t().reshape([2, 2, 3]) * &x[1]),
        ("chain_flip_transpose_pad", |x| x[0].flip(0).t().pad(&[(0, 1), (1, 0)]) * &x[1]),
        ("chain_unsqueeze_expand_flatten", |x| x[0].unsqueeze(0).expand([2, 3]).flatten() * &x[1]),
        ("chain_reshape_shrink_expand", |x| x[0].reshape([2, 3]).shrink(&[(0, 1), (0, 3)]).expand([2, 2, 3]) * &x[1]),
        ("chain_long", |x| {
            let m = x[0].flip(2).permute([2, 0, 1]).reshape([4, 6]).shrink(&[(0, 4), (1, 5)]);
            m.pad(&[(0, 0), (1, 0)]) * &x[1]
        }),
        ("chain_with_elementwise", |x| {
            let a = (x[0].t() + &x[1]).flip(0).shrink(&[(1, 3), (0, 3)]);
            a * x[0].shrink(&[(0, 2), (0, 3)]).t().t()
        }),
        ("chain_same_input_two_views", |x| &x[0] * x[0].t() + x[0].flip(0) * x[0].flip(1)),
        ("chain_int", |x| x[0].t().flip(0).pad(&[(1, 0), (0, 1)]).reshape([-1])),
        ("chain_f16", |x| x[0].t().flip(1) * &x[1]),
    ]
}
