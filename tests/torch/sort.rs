//! sort, argsort and topk; fixture made by `scripts/torch_fixtures/cases_sort.py` (same order).

use super::CaseFn;
use ferrograd::Tensor;

fn ramp(n: usize) -> Tensor {
    Tensor::arange_f(0.0, n as f64, 1.0)
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("sort_values", |x| x[0].sort(-1, false).0),
        ("sort_indices", |x| x[0].sort(-1, false).1),
        ("sort_desc_values", |x| x[0].sort(-1, true).0 * 2.0),
        ("sort_desc_indices", |x| x[0].sort(-1, true).1),
        ("sort_axis0", |x| x[0].sort(0, false).0),
        ("sort_axis0_indices", |x| x[0].sort(0, false).1),
        ("sort_3d_middle", |x| x[0].sort(1, true).0),
        ("sort_ties_stable", |x| x[0].sort(-1, false).1),
        ("sort_ties_stable_desc", |x| x[0].sort(-1, true).1),
        ("sort_ties_values_grad", |x| x[0].sort(-1, false).0 * ramp(8)),
        ("sort_special", |x| x[0].sort(-1, false).0),
        ("sort_special_indices", |x| x[0].sort(-1, false).1),
        ("sort_special_desc_indices", |x| x[0].sort(-1, true).1),
        ("sort_int", |x| x[0].sort(-1, false).0),
        ("sort_int_indices", |x| x[0].sort(-1, true).1),
        ("sort_bool", |x| x[0].sort(-1, false).0),
        ("sort_0d", |x| x[0].sort(0, false).0 * 3.0),
        ("sort_long_row", |x| x[0].sort(1, false).0 * ramp(300)),
        ("argsort", |x| x[0].argsort(1, false)),
        ("argsort_desc_axis0", |x| x[0].argsort(0, true)),
        ("topk_values", |x| x[0].topk(3, -1, true).0),
        ("topk_indices", |x| x[0].topk(3, -1, true).1),
        ("topk_smallest", |x| x[0].topk(2, -1, false).0 * 5.0),
        ("topk_smallest_indices", |x| x[0].topk(2, -1, false).1),
        ("topk_axis0", |x| x[0].topk(4, 0, true).0),
        ("topk_all", |x| x[0].topk(7, -1, true).0 * ramp(7)),
        ("topk_f16", |x| x[0].topk(3, -1, true).0),
    ]
}
