//! unfold, diag, diagonal with an offset, max_pool2d with indices, max_unpool2d, masked_select,
//! nonzero; fixture made by `scripts/torch_fixtures/cases_select.py` (same order).

use super::CaseFn;
use ferrograd::tensor::PoolOpts;
use ferrograd::Tensor;

fn ramp(n: usize) -> Tensor {
    Tensor::arange_f(0.0, n as f64, 1.0)
}

fn pool_3s2p1() -> PoolOpts {
    PoolOpts::default().stride(2).padding(1)
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("unfold", |x| x[0].unfold(1, 3, 2)),
        ("unfold_overlap", |x| x[0].unfold(0, 4, 1) * ramp(4)),
        ("unfold_axis0", |x| x[0].unfold(0, 2, 3)),
        ("unfold_middle", |x| x[0].unfold(1, 3, 3) * 2.0),
        ("unfold_whole", |x| x[0].unfold(1, 5, 1)),
        ("diag_vector", |x| x[0].diag(0)),
        ("diag_vector_above", |x| x[0].diag(2) * 3.0),
        ("diag_vector_below", |x| x[0].diag(-1)),
        ("diag_matrix", |x| x[0].diag(0)),
        ("diag_matrix_offset", |x| x[0].diag(1)),
        ("diag_matrix_below", |x| x[0].diag(-2)),
        ("diag_int", |x| x[0].diag(1)),
        ("diagonal_nonsquare", |x| x[0].diagonal_offset(0, 0, 1)),
        ("diagonal_offset_batched", |x| x[0].diagonal_offset(1, 1, 2)),
        ("diagonal_negative_offset", |x| x[0].diagonal_offset(-2, 1, 2) * 2.0),
        ("diagonal_axes_02", |x| x[0].diagonal_offset(1, 0, 2)),
        ("diagonal_past_end", |x| x[0].diagonal_offset(5, 0, 1)),
        ("max_pool2d_values", |x| x[0].max_pool2d_with_indices(2, &PoolOpts::default()).0),
        ("max_pool2d_indices", |x| x[0].max_pool2d_with_indices(2, &PoolOpts::default()).1),
        ("max_pool2d_indices_strided_padded", |x| x[0].max_pool2d_with_indices(3, &pool_3s2p1()).1),
        ("max_pool2d_indices_ties", |x| x[0].max_pool2d_with_indices(2, &PoolOpts::default()).1),
        ("max_unpool2d", |x| {
            let (v, i) = x[0].max_pool2d_with_indices(2, &PoolOpts::default());
            v.max_unpool2d(&i, 2, &PoolOpts::default(), None)
        }),
        ("max_unpool2d_strided", |x| {
            let (v, i) = x[0].max_pool2d_with_indices(3, &pool_3s2p1());
            v.max_unpool2d(&i, 3, &pool_3s2p1(), Some((7, 7)))
        }),
        ("max_unpool2d_per_axis", |x| {
            let opts = PoolOpts::default().stride([2, 1]).padding([1, 0]);
            let (v, i) = x[0].max_pool2d_with_indices([3, 2], &opts);
            v.max_unpool2d(&i, [3, 2], &opts, None)
        }),
        ("masked_select", |x| x[0].masked_select(&x[1]).unwrap()),
        ("masked_select_broadcast", |x| x[0].masked_select(&x[1]).unwrap() * 2.0),
        ("masked_select_none", |x| x[0].masked_select(&x[0].gt(100.0)).unwrap()),
        ("nonzero", |x| x[0].nonzero().unwrap()),
        ("nonzero_3d", |x| x[0].gt(0.5).nonzero().unwrap()),
        ("nonzero_bool", |x| x[0].nonzero().unwrap()),
    ]
}
