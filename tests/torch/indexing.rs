//! Indexing, gather/scatter, masks and writes into slices; fixture made by
//! `scripts/torch_fixtures/cases_indexing.py` (same order). PyTorch has no negative slice
//! steps, so the case file writes those with `index_select`; here they are plain slices.

use super::CaseFn;
use ferrograd::idx;
use ferrograd::tensor::Idx;

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // ---------------------------------------------------------------- basic slicing
        ("slice_range", |x| x[0].index(&idx![1..4])),
        ("slice_step", |x| x[0].index(&idx![..;2, 1..5;2])),
        ("slice_step_uneven", |x| x[0].index(&idx![1..;3])),
        ("slice_neg_bounds", |x| x[0].index(&idx![-3..-1, ..-2])),
        ("slice_reverse", |x| x[0].index(&idx![..;-1])),
        ("slice_neg_step2", |x| x[0].index(&idx![..;-2])),
        ("slice_neg_step_bounds", |x| x[0].index(&[Idx::slice(Some(6), Some(1), -2)])),
        ("slice_neg_step_both", |x| x[0].index(&[Idx::slice(Some(-1), None, -3), Idx::slice(Some(4), Some(-7), -1)])),
        ("slice_out_of_range", |x| x[0].index(&idx![2..10])),
        ("slice_empty", |x| x[0].index(&[Idx::R(Some(3), Some(1), None)])),
        ("slice_past_end_empty", |x| x[0].index(&idx![5..])),
        ("int_index", |x| x[0].index(&idx![1])),
        ("int_index_neg", |x| x[0].index(&idx![-1, 2])),
        ("int_index_to_0d", |x| x[0].index(&idx![2, -1])),
        ("newaxis", |x| x[0].index(&idx![None, 1.., None])),
        ("ellipsis_last", |x| x[0].index(&idx![..., 1])),
        ("ellipsis_middle", |x| x[0].index(&idx![1, ..., None])),
        ("ellipsis_only", |x| x[0].index(&idx![...])),
        ("combined_python_example", |x| x[0].index(&idx![1..5;2, ..;-1, None, ..., 3])),
        ("slice_0d_newaxis", |x| x[0].index(&idx![None])),
        ("slice_noncontig", |x| x[0].t().index(&idx![1..4;2, ..;3])),
        // ---------------------------------------------------------------- tensor indices
        ("tensor_index_dim0", |x| x[0].index(&idx![&x[1]])),
        ("tensor_index_dim1", |x| x[0].index(&idx![.., &x[1]])),
        ("tensor_index_negative", |x| x[0].index(&idx![&x[1]])),
        ("tensor_index_2d_index", |x| x[0].index(&idx![&x[1]])),
        ("tensor_index_two", |x| x[0].index(&idx![&x[1], &x[2]])),
        ("tensor_index_broadcast", |x| x[0].index(&idx![&x[1], &x[2]])),
        ("tensor_index_adjacent_middle", |x| x[0].index(&idx![.., &x[1], &x[2]])),
        ("tensor_index_non_adjacent", |x| x[0].index(&idx![&x[1], .., &x[2]])),
        ("tensor_index_with_int", |x| x[0].index(&idx![0, .., &x[1]])),
        ("tensor_index_with_slice", |x| x[0].index(&idx![1..5;2, &x[1]])),
        ("tensor_index_0d", |x| x[0].index(&idx![&x[1]])),
        ("tensor_index_int32", |x| x[0].index(&idx![&x[1]])),
        ("tensor_index_int_data", |x| x[0].index(&idx![&x[1]])),
        // ---------------------------------------------------------------- gather / scatter
        ("gather_dim0", |x| x[0].gather(0, &x[1])),
        ("gather_dim1", |x| x[0].gather(1, &x[1])),
        ("gather_smaller_index", |x| x[0].gather(1, &x[1])),
        ("gather_neg_dim", |x| x[0].gather(-1, &x[1])),
        ("scatter_dim0", |x| x[0].scatter(0, &x[2], &x[1])),
        ("scatter_dim1", |x| x[0].scatter(1, &x[2], &x[1])),
        ("scatter_add", |x| x[0].scatter_add(0, &x[2], &x[1])),
        ("scatter_reduce_sum", |x| x[0].scatter_reduce(0, &x[2], &x[1], "sum", true)),
        ("scatter_reduce_sum_exclude", |x| x[0].scatter_reduce(0, &x[2], &x[1], "sum", false)),
        ("scatter_reduce_mean", |x| x[0].scatter_reduce(1, &x[2], &x[1], "mean", true)),
        ("scatter_reduce_mean_exclude", |x| x[0].scatter_reduce(1, &x[2], &x[1], "mean", false)),
        ("scatter_reduce_amax", |x| x[0].scatter_reduce(0, &x[2], &x[1], "amax", true)),
        ("scatter_reduce_amin_exclude", |x| x[0].scatter_reduce(0, &x[2], &x[1], "amin", false)),
        ("scatter_reduce_prod", |x| x[0].scatter_reduce(0, &x[2], &x[1], "prod", true)),
        // ---------------------------------------------------------------- masks and writes
        ("masked_fill_scalar", |x| x[0].masked_fill(&x[1], -1.5)),
        ("masked_fill_broadcast", |x| x[0].masked_fill(&x[1], 2.0)),
        ("masked_fill_int", |x| x[0].masked_fill(&x[1], 7)),
        ("where_mask", |x| x[0].where_(&x[1], &x[2])),
        ("index_put_slice", |x| x[0].index_put(&idx![1..3], &x[1])),
        ("index_put_step_scalar", |x| x[0].index_put(&idx![..;2, 1], 5.0)),
        ("index_put_broadcast_value", |x| x[0].index_put(&idx![0..2], &x[1])),
        ("index_put_int", |x| x[0].index_put(&idx![1], &x[1])),
        ("index_put_tensor_index", |x| x[0].index_put(&idx![&x[2]], &x[1])),
        ("index_put_tensor_and_slice", |x| x[0].index_put(&idx![1..3, &x[2]], &x[1])),
        ("index_put_neg_step", |x| x[0].index_put(&idx![..;-2], &x[1])),
    ]
}
