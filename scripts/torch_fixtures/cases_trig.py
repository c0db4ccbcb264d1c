"""Inverse trigonometric and hyperbolic functions, log10, copysign, logaddexp(2), isclose,
softmin, logcumsumexp and normalize: values at ordinary points and at PyTorch's special points
(signed zeros, ±1, infinities, NaN), gradients included.

The Rust closures are in tests/torch/trig.rs, in the same order.
"""

import math

import torch
import torch.nn.functional as F

from case import Case

INF, NAN = math.inf, math.nan
UNIT = dict(low=-0.95, high=0.95)
BF16 = dict(atol=1e-2, rtol=2e-2, grad_atol=1e-2, grad_rtol=2e-2)
F16 = dict(atol=1e-3, rtol=1e-2, grad_atol=1e-3, grad_rtol=1e-2)
F64_TOL = dict(atol=1e-12, rtol=1e-10, grad_atol=1e-12, grad_rtol=1e-10)

CASES = [
    # ---------------------------------------------------------------- inverse trig
    Case("atan", [(3, 4)], lambda a: a.atan(), low=-5.0, high=5.0),
    Case("atan_wide", [(40,)], lambda a: a.atan(), low=-1e4, high=1e4),
    Case("atan_special", [(7,)], lambda a: a.atan(), vals=[[0.0, -0.0, INF, -INF, NAN, 1.0, -1.0]], grad=False),
    Case("atan_f64", [(3, 4)], lambda a: a.atan(), low=-3.0, high=3.0, dtype="float64", **F64_TOL),
    Case("atan_bf16", [(3, 4)], lambda a: a.atan(), low=-3.0, high=3.0, dtype="bfloat16", **BF16),
    Case("atan2", [(3, 4), (3, 4)], lambda y, x: torch.atan2(y, x)),
    Case("atan2_broadcast", [(3, 1), (4,)], lambda y, x: torch.atan2(y, x)),
    Case("atan2_quadrants", [(8,), (8,)], lambda y, x: torch.atan2(y, x),
         vals=[[1.0, 1.0, -1.0, -1.0, 2.0, -3.0, 0.5, -0.5], [1.0, -1.0, 1.0, -1.0, -0.5, 0.25, 4.0, -4.0]]),
    Case("atan2_special", [(12,), (12,)], lambda y, x: torch.atan2(y, x), grad=False,
         vals=[[0.0, -0.0, 0.0, -0.0, INF, INF, -INF, -INF, 1.0, 1.0, NAN, 0.0],
               [0.0, 0.0, -0.0, -0.0, INF, -INF, INF, 3.0, INF, -INF, 1.0, NAN]]),
    Case("atan2_f64", [(3, 4), (3, 4)], lambda y, x: torch.atan2(y, x), dtype="float64", **F64_TOL),
    Case("asin", [(3, 4)], lambda a: a.asin(), **UNIT),
    Case("asin_special", [(7,)], lambda a: a.asin(), vals=[[1.0, -1.0, 0.0, -0.0, 1.5, -2.0, NAN]], grad=False),
    Case("acos", [(3, 4)], lambda a: a.acos(), **UNIT),
    Case("acos_special", [(6,)], lambda a: a.acos(), vals=[[1.0, -1.0, 0.0, 1.5, -2.0, NAN]], grad=False),
    Case("asin_f16", [(3, 4)], lambda a: a.asin(), dtype="float16", **UNIT, **F16),
    Case("acos_f64", [(3, 4)], lambda a: a.acos(), dtype="float64", **UNIT, **F64_TOL),
    # ---------------------------------------------------------------- hyperbolic
    Case("sinh", [(3, 4)], lambda a: a.sinh(), low=-4.0, high=4.0),
    Case("sinh_small", [(8,)], lambda a: a.sinh(), low=-1e-3, high=1e-3, rtol=1e-5),
    Case("sinh_special", [(7,)], lambda a: a.sinh(), vals=[[0.0, -0.0, 88.5, -88.5, INF, -INF, NAN]], grad=False),
    Case("cosh", [(3, 4)], lambda a: a.cosh(), low=-4.0, high=4.0),
    Case("cosh_special", [(6,)], lambda a: a.cosh(), vals=[[0.0, -0.0, 88.5, -88.5, INF, NAN]], grad=False),
    Case("asinh", [(3, 4)], lambda a: a.asinh(), low=-5.0, high=5.0),
    Case("asinh_small", [(8,)], lambda a: a.asinh(), low=-1e-3, high=1e-3, rtol=1e-5),
    Case("asinh_special", [(7,)], lambda a: a.asinh(), vals=[[0.0, -0.0, 1e20, -1e20, INF, -INF, NAN]], grad=False),
    Case("acosh", [(3, 4)], lambda a: a.acosh(), low=1.05, high=6.0),
    Case("acosh_special", [(6,)], lambda a: a.acosh(), vals=[[1.0, 0.5, 1e20, INF, -1.0, NAN]], grad=False),
    Case("atanh", [(3, 4)], lambda a: a.atanh(), **UNIT),
    Case("atanh_special", [(7,)], lambda a: a.atanh(), vals=[[1.0, -1.0, 0.0, -0.0, 1.5, -3.0, NAN]], grad=False),
    Case("sinh_f64", [(3, 4)], lambda a: a.sinh(), dtype="float64", **F64_TOL),
    Case("atanh_bf16", [(3, 4)], lambda a: a.atanh(), dtype="bfloat16", **UNIT, **BF16),
    Case("tanh_of_atanh", [(3, 4)], lambda a: a.atanh().tanh() * 2.0, **UNIT),
    # ---------------------------------------------------------------- logs, signs
    Case("log10", [(3, 4)], lambda a: a.log10(), low=0.01, high=100.0),
    Case("log10_special", [(6,)], lambda a: a.log10(), vals=[[0.0, 1.0, 1000.0, INF, -1.0, NAN]], grad=False),
    Case("log10_int", [(5,)], lambda a: a.log10(), dtype="int32", low=1, high=100, grad=False),
    Case("copysign", [(3, 4), (3, 4)], lambda a, b: torch.copysign(a, b)),
    Case("copysign_zeros", [(6,), (6,)], lambda a, b: torch.copysign(a, b), grad=False,
         vals=[[1.0, 1.0, 0.0, -0.0, 2.0, INF], [0.0, -0.0, -1.0, 1.0, NAN, -2.0]]),
    Case("copysign_scalar", [(3, 4)], lambda a: torch.copysign(a, -1.0)),
    Case("copysign_broadcast", [(3, 4), (4,)], lambda a, b: torch.copysign(a, b)),
    Case("logaddexp", [(3, 4), (3, 4)], lambda a, b: torch.logaddexp(a, b), low=-10.0, high=10.0),
    Case("logaddexp_far", [(4,), (4,)], lambda a, b: torch.logaddexp(a, b),
         vals=[[100.0, -100.0, 0.0, 50.0], [-100.0, 100.0, 0.0, 50.0]]),
    Case("logaddexp_special", [(6,), (6,)], lambda a, b: torch.logaddexp(a, b), grad=False,
         vals=[[INF, -INF, -INF, INF, NAN, 1.0], [INF, -INF, 2.0, -INF, 1.0, INF]]),
    Case("logaddexp_broadcast", [(3, 1), (4,)], lambda a, b: torch.logaddexp(a, b)),
    Case("logaddexp2", [(3, 4), (3, 4)], lambda a, b: torch.logaddexp2(a, b), low=-10.0, high=10.0),
    Case("isclose", [(8,), (8,)], lambda a, b: torch.isclose(a, b),
         vals=[[1.0, 1.0, 0.0, INF, INF, NAN, 1e-9, 100.0], [1.0 + 1e-6, 1.1, 1e-9, INF, -INF, NAN, 0.0, 100.001]]),
    Case("isclose_tols", [(8,), (8,)], lambda a, b: torch.isclose(a, b, rtol=0.05, atol=0.01, equal_nan=True),
         vals=[[1.0, 1.0, 0.0, INF, INF, NAN, 1e-9, 100.0], [1.04, 1.1, 0.009, INF, -INF, NAN, 0.0, 106.0]]),
    # ---------------------------------------------------------------- reductions
    Case("softmin", [(3, 5)], lambda a: F.softmin(a, dim=1)),
    Case("softmin_axis0", [(3, 5)], lambda a: F.softmin(a, dim=0)),
    Case("logcumsumexp", [(3, 6)], lambda a: torch.logcumsumexp(a, dim=1), low=-5.0, high=5.0),
    Case("logcumsumexp_axis0", [(6, 3)], lambda a: torch.logcumsumexp(a, dim=0), low=-5.0, high=5.0),
    Case("logcumsumexp_wide", [(2, 5)], lambda a: torch.logcumsumexp(a, dim=1),
         vals=[[-1000.0, 0.0, 1000.0, -INF, 3.0, 5.0, 4.0, 3.0, 2.0, 1.0]]),
    Case("logcumsumexp_long", [(2, 700)], lambda a: torch.logcumsumexp(a, dim=1), low=-3.0, high=3.0),
    Case("normalize", [(3, 5)], lambda a: F.normalize(a)),
    Case("normalize_p1_dim0", [(3, 5)], lambda a: F.normalize(a, p=1.0, dim=0)),
    Case("normalize_zero_row", [(2, 3)], lambda a: F.normalize(a, dim=1), vals=[[0.0, 0.0, 0.0, 1.0, -2.0, 2.0]]),
]
