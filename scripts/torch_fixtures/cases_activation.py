"""Activation functions: values and gradients on random inputs, at the kinks where PyTorch
defines a one-sided gradient (relu6/hardtanh/hardsigmoid/hardswish bounds, elu/celu/leaky_relu
at 0), at extreme inputs (no overflow, no NaN gradients), and on 16-bit floats, 0-d, empty and
non-contiguous inputs.

The Rust closures are in tests/torch/activation.rs, in the same order.
"""

import math

import torch
import torch.nn.functional as F

from case import Case

INF, NAN = math.inf, math.nan
WIDE = dict(low=-6.0, high=6.0)
F16_TOL = dict(atol=2e-3, rtol=2e-3, grad_atol=2e-3, grad_rtol=4e-3)
BF16_TOL = dict(atol=1e-2, rtol=1e-2, grad_atol=1e-2, grad_rtol=2e-2)
EXTREME = [[-100.0, -30.0, -10.0, 0.0, 10.0, 30.0, 100.0, -1e4, 1e4]]

CASES = [
    # ---------------------------------------------------------------- piecewise linear
    Case("relu6", [(3, 5)], lambda a: F.relu6(a), low=-3.0, high=9.0),
    Case("relu6_kinks", [(6,)], lambda a: F.relu6(a), vals=[[0.0, 6.0, -1.0, 7.0, 3.0, -0.0]]),
    Case("hardtanh", [(3, 5)], lambda a: F.hardtanh(a), **WIDE),
    Case("hardtanh_kinks", [(5,)], lambda a: F.hardtanh(a), vals=[[-1.0, 1.0, 0.0, -2.0, 2.0]]),
    Case("hardtanh_custom", [(3, 5)], lambda a: F.hardtanh(a, -0.5, 2.0), low=-3.0, high=3.0),
    Case("leaky_relu", [(3, 5)], lambda a: F.leaky_relu(a, 0.1)),
    Case("leaky_relu_default_at_zero", [(4,)], lambda a: F.leaky_relu(a), vals=[[0.0, -1.0, 1.0, -0.0]]),
    Case("hardsigmoid", [(3, 5)], lambda a: F.hardsigmoid(a), **WIDE),
    Case("hardsigmoid_kinks", [(5,)], lambda a: F.hardsigmoid(a), vals=[[-3.0, 3.0, 0.0, -4.0, 4.0]]),
    Case("hardswish", [(3, 5)], lambda a: F.hardswish(a), **WIDE),
    Case("hardswish_kinks", [(5,)], lambda a: F.hardswish(a), vals=[[-3.0, 3.0, 0.0, -4.0, 4.0]]),
    # ---------------------------------------------------------------- exponential family
    Case("elu", [(3, 5)], lambda a: F.elu(a), **WIDE),
    Case("elu_alpha_at_zero", [(4,)], lambda a: F.elu(a, 0.5), vals=[[0.0, -1e-4, 1e-4, -0.0]], atol=1e-9),
    Case("elu_extreme", [(9,)], lambda a: F.elu(a), vals=EXTREME),
    Case("selu", [(3, 5)], lambda a: F.selu(a), **WIDE),
    Case("selu_at_zero", [(2,)], lambda a: F.selu(a), vals=[[0.0, -1e-3]]),
    Case("celu", [(3, 5)], lambda a: F.celu(a, 0.5), **WIDE),
    Case("celu_extreme", [(9,)], lambda a: F.celu(a, 2.0), vals=EXTREME),
    Case("softplus", [(3, 5)], lambda a: F.softplus(a), low=-25.0, high=25.0),
    Case("softplus_beta_threshold", [(3, 5)], lambda a: F.softplus(a, 2.0, 5.0), low=-5.0, high=5.0),
    Case("softplus_threshold_edge", [(4,)], lambda a: F.softplus(a, 2.0, 5.0), vals=[[2.5, 2.4, 2.6, -2.5]]),
    Case("softplus_extreme", [(9,)], lambda a: F.softplus(a), vals=EXTREME, atol=1e-30, grad_atol=1e-30),
    Case("mish", [(3, 5)], lambda a: F.mish(a), **WIDE),
    Case("mish_extreme", [(9,)], lambda a: F.mish(a), vals=EXTREME),
    Case("logsigmoid", [(3, 5)], lambda a: F.logsigmoid(a), low=-20.0, high=20.0),
    Case("logsigmoid_extreme", [(9,)], lambda a: F.logsigmoid(a), vals=EXTREME, atol=1e-30, grad_atol=1e-30),
    # PyTorch's gradient s * (1 - s) is 0 once s rounds to 1; ours (e / (1 + e)^2) is ~1e-13.
    Case("sigmoid_tail_relative", [(4,)], lambda a: torch.sigmoid(a), vals=[[-30.0, -50.0, -80.0, 30.0]],
         atol=1e-40, grad_atol=1e-12),
    Case("tanh_near_zero", [(6,)], lambda a: torch.tanh(a), vals=[[1e-5, -1e-4, 0.1, 0.124, 0.126, -0.3]],
         atol=1e-12),
    Case("tanh_wide", [(4, 5)], lambda a: torch.tanh(a), low=-20.0, high=20.0),
    # ---------------------------------------------------------------- sigmoid family
    Case("silu", [(3, 5)], lambda a: F.silu(a), **WIDE),
    Case("silu_extreme", [(9,)], lambda a: F.silu(a), vals=EXTREME),
    Case("quick_gelu", [(3, 5)], lambda a: a * torch.sigmoid(1.702 * a), **WIDE),
    Case("softsign", [(3, 5)], lambda a: F.softsign(a), **WIDE),
    Case("softsign_at_zero", [(3,)], lambda a: F.softsign(a), vals=[[0.0, -0.0, 1e6]]),
    # ---------------------------------------------------------------- gelu
    Case("gelu", [(4, 5)], lambda a: F.gelu(a), **WIDE),
    # PyTorch's 0.5 x (1 + erf(x / sqrt 2)) cancels for x << 0 (gelu(-5) is -1.19e-6, not -1.43e-6):
    # ours uses erfc, so only the default atol holds there.
    Case("gelu_special", [(8,)], lambda a: F.gelu(a), vals=[[0.0, -10.0, 10.0, -5.0, 1e-3, -0.7, 0.7, -40.0]]),
    Case("gelu_tanh", [(4, 5)], lambda a: F.gelu(a, approximate="tanh"), **WIDE),
    Case("gelu_tanh_extreme", [(9,)], lambda a: F.gelu(a, approximate="tanh"), vals=EXTREME),
    # ---------------------------------------------------------------- dtypes and layouts
    Case("gelu_f16", [(4, 6)], lambda a: F.gelu(a), dtype="float16", **WIDE, **F16_TOL),
    Case("silu_f16", [(4, 6)], lambda a: F.silu(a), dtype="float16", **WIDE, **F16_TOL),
    Case("softplus_bf16", [(4, 6)], lambda a: F.softplus(a), dtype="bfloat16", **WIDE, **BF16_TOL),
    Case("tanh_f16", [(4, 6)], lambda a: torch.tanh(a), dtype="float16", **WIDE, **F16_TOL),
    Case("sigmoid_bf16", [(4, 6)], lambda a: torch.sigmoid(a), dtype="bfloat16", **WIDE, **BF16_TOL),
    Case("elu_f64", [(3, 4)], lambda a: F.elu(a), dtype="float64", **WIDE, atol=1e-12, rtol=1e-10,
         grad_atol=1e-12, grad_rtol=1e-10),
    Case("mish_0d", [()], lambda a: F.mish(a)),
    Case("hardswish_empty", [(0, 4)], lambda a: F.hardswish(a)),
    Case("gelu_transposed", [(3, 4)], lambda a: F.gelu(a.t()) * a.t()),
    Case("selu_flipped", [(2, 6)], lambda a: F.selu(a.flip(1)), **WIDE),
    Case("leaky_relu_size1", [(1, 3, 1)], lambda a: F.leaky_relu(a, 0.2)),
    Case("activation_chain", [(2, 3, 4)], lambda a: F.hardswish(F.softplus(a) - F.elu(a)).sum(-1)),
]
