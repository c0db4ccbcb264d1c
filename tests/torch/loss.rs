//! Losses; fixture made by `scripts/torch_fixtures/cases_loss.py` (same order).

use super::CaseFn;
use ferrograd::tensor::{CrossEntropyOpts, Reduction};
use ferrograd::Tensor;

fn w5() -> Tensor {
    Tensor::from_slice(&[0.5f32, 1.0, 2.0, 0.1, 1.5])
}

fn ce(x: &Tensor, y: &Tensor, opts: CrossEntropyOpts) -> Tensor {
    x.cross_entropy_with(y, &opts)
}

fn opts(reduction: Reduction, label_smoothing: f64) -> CrossEntropyOpts {
    CrossEntropyOpts { reduction, label_smoothing, ..Default::default() }
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    use Reduction::{Mean, Sum};
    vec![
        // ---------------------------------------------------------------- cross entropy
        ("cross_entropy", |x| x[0].cross_entropy(&x[1])),
        ("cross_entropy_sum", |x| ce(&x[0], &x[1], opts(Sum, 0.0))),
        ("cross_entropy_none", |x| ce(&x[0], &x[1], opts(Reduction::None, 0.0))),
        ("cross_entropy_smoothing", |x| ce(&x[0], &x[1], opts(Mean, 0.1))),
        ("cross_entropy_smoothing_none", |x| ce(&x[0], &x[1], opts(Reduction::None, 0.25))),
        ("cross_entropy_ignore", |x| x[0].cross_entropy(&x[1])),
        ("cross_entropy_ignore_custom_smoothing", |x| {
            ce(&x[0], &x[1], CrossEntropyOpts { ignore_index: 2, ..opts(Mean, 0.2) })
        }),
        ("cross_entropy_all_ignored", |x| x[0].cross_entropy(&x[1])),
        ("cross_entropy_weight", |x| ce(&x[0], &x[1], CrossEntropyOpts { weight: Some(w5()), ..opts(Mean, 0.0) })),
        ("cross_entropy_weight_smoothing_ignore", |x| {
            ce(&x[0], &x[1], CrossEntropyOpts { weight: Some(w5()), ignore_index: 0, ..opts(Mean, 0.3) })
        }),
        ("cross_entropy_spatial", |x| x[0].cross_entropy(&x[1])),
        ("cross_entropy_spatial_none", |x| ce(&x[0], &x[1], opts(Reduction::None, 0.0))),
        ("cross_entropy_single_sample", |x| x[0].cross_entropy(&x[1])),
        ("cross_entropy_int32_targets", |x| x[0].cross_entropy(&x[1])),
        ("cross_entropy_large_logits", |x| x[0].cross_entropy(&x[1])),
        ("cross_entropy_probs", |x| x[0].cross_entropy(&x[1].softmax(-1))),
        ("cross_entropy_probs_smoothing_sum", |x| ce(&x[0], &x[1].softmax(-1), opts(Sum, 0.1))),
        ("cross_entropy_probs_weight", |x| {
            ce(&x[0], &x[1].softmax(-1), CrossEntropyOpts { weight: Some(w5()), ..opts(Mean, 0.0) })
        }),
        ("cross_entropy_transposed_logits", |x| x[0].t().cross_entropy(&x[1])),
        // ---------------------------------------------------------------- nll / sparse cce
        ("nll_loss", |x| x[0].log_softmax(1).nll_loss(&x[1])),
        ("nll_loss_weight_sum", |x| {
            x[0].nll_loss_with(&x[1], &CrossEntropyOpts { weight: Some(w5()), ..opts(Sum, 0.0) })
        }),
        ("nll_loss_ignore_none", |x| {
            x[0].nll_loss_with(&x[1], &CrossEntropyOpts { ignore_index: 3, ..opts(Reduction::None, 0.0) })
        }),
        ("sparse_categorical_crossentropy", |x| x[0].sparse_categorical_crossentropy(&x[1], -1, 0.0, Mean)),
        ("sparse_categorical_crossentropy_ignore_smoothing", |x| {
            x[0].sparse_categorical_crossentropy(&x[1], -1, 0.1, Mean)
        }),
        ("sparse_categorical_crossentropy_sum", |x| x[0].sparse_categorical_crossentropy(&x[1], -1, 0.0, Sum)),
        // ---------------------------------------------------------------- binary cross entropy
        ("binary_crossentropy", |x| x[0].binary_crossentropy(&x[1], Mean)),
        ("binary_crossentropy_hard_targets_sum", |x| x[0].binary_crossentropy(&x[1], Sum)),
        ("binary_crossentropy_none", |x| x[0].binary_crossentropy(&x[1], Reduction::None)),
        ("binary_crossentropy_logits", |x| x[0].binary_crossentropy_logits(&x[1], Mean, None)),
        ("binary_crossentropy_logits_extreme", |x| x[0].binary_crossentropy_logits(&x[1], Reduction::None, None)),
        ("binary_crossentropy_logits_pos_weight", |x| {
            x[0].binary_crossentropy_logits(&x[1], Sum, Some(&x[2].detach()))
        }),
        // ---------------------------------------------------------------- regression
        ("mse_loss", |x| x[0].mse_loss(&x[1], Mean)),
        ("mse_loss_sum_broadcast_none", |x| {
            x[0].mse_loss(&x[1], Sum) + x[0].mse_loss(&x[1], Reduction::None).mean_axis(0).sum()
        }),
        ("l1_loss", |x| x[0].l1_loss(&x[1], Mean)),
        ("l1_loss_ties", |x| x[0].l1_loss(&x[1], Sum)),
        ("mse_loss_0d", |x| x[0].mse_loss(&x[1], Mean)),
        ("l1_loss_empty", |x| x[0].l1_loss(&x[1], Sum)),
        // ---------------------------------------------------------------- one_hot
        ("one_hot", |x| x[0].one_hot(4)),
        ("one_hot_2d_int32", |x| x[0].one_hot(6)),
    ]
}
