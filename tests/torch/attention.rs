//! scaled_dot_product_attention; fixture made by `scripts/torch_fixtures/cases_attention.py`
//! (same order).

use super::CaseFn;
use ferrograd::tensor::AttentionOpts;
use ferrograd::Tensor;

fn sdpa(x: &[Tensor], opts: AttentionOpts) -> Tensor {
    x[0].scaled_dot_product_attention(&x[1], &x[2], &opts)
}

/// `torch.eye(3, 5, dtype=bool)`.
fn eye_3x5() -> Tensor {
    Tensor::arange(3).reshape([3, 1]).eq(Tensor::arange(5).reshape([1, 5]))
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("sdpa", |x| sdpa(x, AttentionOpts::default())),
        ("sdpa_scale", |x| sdpa(x, AttentionOpts::default().scale(0.7))),
        ("sdpa_lengths", |x| sdpa(x, AttentionOpts::default())),
        ("sdpa_causal", |x| sdpa(x, AttentionOpts::default().causal())),
        ("sdpa_causal_rect", |x| sdpa(x, AttentionOpts::default().causal())),
        ("sdpa_bool_mask", |x| sdpa(x, AttentionOpts::default().mask(&x[3].bitor(eye_3x5())))),
        ("sdpa_float_mask", |x| sdpa(x, AttentionOpts::default().mask(&x[3]))),
        ("sdpa_mask_per_batch", |x| sdpa(x, AttentionOpts::default().mask(&x[3]))),
        ("sdpa_broadcast_heads", |x| sdpa(x, AttentionOpts::default())),
        ("sdpa_gqa", |x| sdpa(x, AttentionOpts::default().gqa())),
        ("sdpa_3d", |x| sdpa(x, AttentionOpts::default())),
        ("sdpa_transposed", |x| {
            let t: Vec<Tensor> = x.iter().map(|t| t.transpose(1, 2)).collect();
            sdpa(&t, AttentionOpts::default().causal())
        }),
        ("sdpa_f16", |x| sdpa(x, AttentionOpts::default())),
    ]
}
