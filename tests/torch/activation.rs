//! Activation functions; fixture made by `scripts/torch_fixtures/cases_activation.py` (same
//! order).

use super::CaseFn;

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // ---------------------------------------------------------------- piecewise linear
        ("relu6", |x| x[0].relu6()),
        ("relu6_kinks", |x| x[0].relu6()),
        ("hardtanh", |x| x[0].hardtanh(-1.0, 1.0)),
        ("hardtanh_kinks", |x| x[0].hardtanh(-1.0, 1.0)),
        ("hardtanh_custom", |x| x[0].hardtanh(-0.5, 2.0)),
        ("leaky_relu", |x| x[0].leaky_relu(0.1)),
        ("leaky_relu_default_at_zero", |x| x[0].leaky_relu(0.01)),
        ("hardsigmoid", |x| x[0].hardsigmoid()),
        ("hardsigmoid_kinks", |x| x[0].hardsigmoid()),
        ("hardswish", |x| x[0].hardswish()),
        ("hardswish_kinks", |x| x[0].hardswish()),
        // ---------------------------------------------------------------- exponential family
        ("elu", |x| x[0].elu(1.0)),
        ("elu_alpha_at_zero", |x| x[0].elu(0.5)),
        ("elu_extreme", |x| x[0].elu(1.0)),
        ("selu", |x| x[0].selu()),
        ("selu_at_zero", |x| x[0].selu()),
        ("celu", |x| x[0].celu(0.5)),
        ("celu_extreme", |x| x[0].celu(2.0)),
        ("softplus", |x| x[0].softplus()),
        ("softplus_beta_threshold", |x| x[0].softplus_with(2.0, 5.0)),
        ("softplus_threshold_edge", |x| x[0].softplus_with(2.0, 5.0)),
        ("softplus_extreme", |x| x[0].softplus()),
        ("mish", |x| x[0].mish()),
        ("mish_extreme", |x| x[0].mish()),
        ("logsigmoid", |x| x[0].logsigmoid()),
        ("logsigmoid_extreme", |x| x[0].logsigmoid()),
        ("sigmoid_tail_relative", |x| x[0].sigmoid()),
        ("tanh_near_zero", |x| x[0].tanh()),
        ("tanh_wide", |x| x[0].tanh()),
        // ---------------------------------------------------------------- sigmoid family
        ("silu", |x| x[0].silu()),
        ("silu_extreme", |x| x[0].swish()),
        ("quick_gelu", |x| x[0].quick_gelu()),
        ("softsign", |x| x[0].softsign()),
        ("softsign_at_zero", |x| x[0].softsign()),
        // ---------------------------------------------------------------- gelu
        ("gelu", |x| x[0].gelu()),
        ("gelu_special", |x| x[0].gelu()),
        ("gelu_tanh", |x| x[0].gelu_tanh()),
        ("gelu_tanh_extreme", |x| x[0].gelu_tanh()),
        // ---------------------------------------------------------------- dtypes and layouts
        ("gelu_f16", |x| x[0].gelu()),
        ("silu_f16", |x| x[0].silu()),
        ("softplus_bf16", |x| x[0].softplus()),
        ("tanh_f16", |x| x[0].tanh()),
        ("sigmoid_bf16", |x| x[0].sigmoid()),
        ("elu_f64", |x| x[0].elu(1.0)),
        ("mish_0d", |x| x[0].mish()),
        ("hardswish_empty", |x| x[0].hardswish()),
        ("gelu_transposed", |x| x[0].t().gelu() * x[0].t()),
        ("selu_flipped", |x| x[0].flip(1).selu()),
        ("leaky_relu_size1", |x| x[0].leaky_relu(0.2)),
        ("activation_chain", |x| (x[0].softplus() - x[0].elu(1.0)).hardswish().sum_axis(-1)),
    ]
}
