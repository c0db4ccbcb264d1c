//! Reductions built on sum and max; fixture made by
//! `scripts/torch_fixtures/cases_reduce_ext.py` (same order).

use super::CaseFn;
use ferrograd::{DType, Tensor};

fn arange(lo: f64, hi: f64) -> Tensor {
    Tensor::arange_f(lo, hi, 1.0)
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // ---------------------------------------------------------------- var / std
        ("var_all", |x| x[0].var()),
        ("var_axis", |x| x[0].var_axis(1)),
        ("var_keepdim", |x| x[0].var_keepdim(0)),
        ("var_axes", |x| x[0].var_axis([0, 2])),
        ("var_population", |x| x[0].var_with(1, false, 0.0)),
        ("var_correction2", |x| x[0].var_with(-1, false, 2.0)),
        ("var_single_element", |x| x[0].var_axis(1)),
        ("var_transposed", |x| x[0].t().var_axis(0)),
        ("std_all", |x| x[0].std()),
        ("std_axes_keepdim", |x| x[0].std_keepdim([1, 2])),
        ("std_population", |x| x[0].std_with(0, false, 0.0)),
        ("std_constant_rows", |x| x[0].std_axis(1)),
        ("var_mean", |x| {
            let (v, m) = x[0].var_mean_with(1, false, 1.0);
            v * 2.0 + m
        }),
        ("std_mean_keepdim", |x| {
            let (s, m) = x[0].std_mean_with(0, true, 1.0);
            s - m * 3.0
        }),
        ("var_f16", |x| x[0].var_axis(1)),
        // ---------------------------------------------------------------- any / all
        ("any_axis", |x| x[0].any_axis(1)),
        ("all_axis", |x| x[0].all_axis(0)),
        ("any_all_bool", |x| x[0].any_axis(0).bitxor(x[0].all_axis(1).sum().gt(0))),
        ("any_keepdim_int", |x| x[0].any_keepdim(1)),
        ("all_full", |x| x[0].all()),
        ("any_empty", |x| x[0].any()),
        ("all_empty_axis", |x| x[0].all_axis(1)),
        // ---------------------------------------------------------------- argmax / argmin
        ("argmax_axis", |x| x[0].argmax_axis(1)),
        ("argmax_flat", |x| x[0].argmax()),
        ("argmax_ties", |x| x[0].argmax_axis(1)),
        ("argmax_nan_inf", |x| x[0].argmax_axis(1)),
        ("argmax_keepdim", |x| x[0].argmax_keepdim(0)),
        ("argmax_int8", |x| x[0].argmax()),
        ("argmax_transposed", |x| x[0].t().argmax_axis(-1)),
        ("argmin_axis", |x| x[0].argmin_axis(0)),
        ("argmin_ties", |x| x[0].argmin_axis(1)),
        ("argmin_nan_inf", |x| x[0].argmin_axis(1)),
        ("argmin_int_extremes", |x| x[0].argmin()),
        ("argmin_uint8", |x| x[0].argmin_axis(1)),
        ("argmax_size1", |x| x[0].argmax_axis(1)),
        // ---------------------------------------------------------------- logsumexp / softmax
        ("logsumexp", |x| x[0].logsumexp(1)),
        ("logsumexp_axes_keepdim", |x| x[0].logsumexp_keepdim([0, 2])),
        ("logsumexp_large", |x| x[0].logsumexp(1)),
        ("logsumexp_inf", |x| x[0].logsumexp(1)),
        ("logsumexp_empty_axis", |x| x[0].logsumexp(1)),
        ("softmax_last", |x| x[0].softmax(-1) * arange(0.0, 5.0)),
        ("softmax_axis0", |x| x[0].softmax(0) * arange(0.0, 3.0)),
        ("softmax_large", |x| x[0].softmax(1) * arange(0.0, 4.0)),
        ("softmax_neg_inf", |x| x[0].softmax(1) * arange(0.0, 3.0)),
        ("softmax_3d_middle", |x| x[0].softmax(1) * &x[0]),
        ("softmax_transposed", |x| x[0].t().softmax(1) * arange(0.0, 3.0)),
        ("softmax_0d", |x| x[0].softmax(0) * &x[0]),
        ("softmax_f16", |x| x[0].softmax(-1) * arange(0.0, 8.0).cast(DType::F16)),
        ("log_softmax", |x| x[0].log_softmax(-1) * arange(0.0, 5.0)),
        ("log_softmax_large", |x| x[0].log_softmax(1) * arange(0.0, 3.0)),
        ("log_softmax_axis0", |x| x[0].log_softmax(0) * &x[0]),
        // ---------------------------------------------------------------- cumulative
        ("cumsum", |x| x[0].cumsum(1)),
        ("cumsum_axis0", |x| x[0].cumsum(0) * arange(0.0, 3.0)),
        ("cumsum_3d_middle", |x| x[0].cumsum(1) * &x[0]),
        ("cumsum_long", |x| x[0].cumsum(-1) * Tensor::linspace(-1.0, 1.0, 100)),
        ("cumsum_blocked", |x| x[0].cumsum(1) * Tensor::linspace(-1.0, 1.0, 700)),
        ("cumsum_blocked_int", |x| x[0].cumsum(1)),
        ("cumsum_int", |x| x[0].cumsum(1)),
        ("cumsum_bool", |x| x[0].cumsum(0)),
        ("cumsum_0d", |x| x[0].cumsum(0) * 3.0),
        ("cumsum_empty", |x| x[0].cumsum(0)),
        ("cumsum_size1", |x| x[0].cumsum(1)),
        ("cumsum_transposed", |x| x[0].t().cumsum(1) * arange(0.0, 3.0)),
        ("cumprod", |x| x[0].cumprod(1)),
        ("cumprod_zeros_negatives", |x| x[0].cumprod(1) * arange(1.0, 6.0)),
        ("cumprod_axis0", |x| x[0].cumprod(0)),
        ("cumprod_int", |x| x[0].cumprod(1)),
        ("cummax_values", |x| x[0].cummax(1).0 * arange(1.0, 8.0)),
        ("cummax_indices", |x| x[0].cummax(1).1),
        ("cummax_random", |x| x[0].cummax(0).0 * &x[0]),
        ("cummin_values", |x| x[0].cummin(1).0 * arange(1.0, 8.0)),
        ("cummin_indices", |x| x[0].cummin(1).1),
        ("cummax_int", |x| {
            let (v, i) = x[0].cummax(1);
            v * 10 + i
        }),
    ]
}
