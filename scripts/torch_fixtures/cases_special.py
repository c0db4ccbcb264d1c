"""Special values: every elementwise op of the suite at ±0, ±inf, NaN (and a few ordinary
values beside them), with gradients — so that an op's value and its gradient at the edges of the
float range are PyTorch's, including the gradients of branches a `where` did not take.

Unary ops see the row `VALUES`; binary ops the grid `VALUES x VALUES` (x down, y across), so
every pair of special values meets. As `cases_sweep.py`, the table pairs each PyTorch
computation with its ferrograd expression; `python3 cases_special.py --rust >
tests/torch/special.rs` writes the Rust side.
"""

import math
import sys

import torch
import torch.nn.functional as F

from case import Case

INF, NAN = math.inf, math.nan
VALUES = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, -2.5, 100.0]
N = len(VALUES)
ENTRIES = []  # (name, shapes, torch fn, rust expression, Case kwargs)


def entry(name, shapes, fn, rust, **kw):
    ENTRIES.append((name, shapes, fn, rust, kw))


UNARY = [
    # name, torch fn, ferrograd method call
    ("abs", torch.abs, "abs()"),
    ("neg", torch.neg, "neg()"),
    ("reciprocal", torch.reciprocal, "reciprocal()"),
    ("sqrt", torch.sqrt, "sqrt()"),
    ("rsqrt", torch.rsqrt, "rsqrt()"),
    ("square", torch.square, "square()"),
    ("exp", torch.exp, "exp()"),
    ("exp2", torch.exp2, "exp2()"),
    ("expm1", torch.expm1, "expm1()"),
    ("log", torch.log, "log()"),
    ("log2", torch.log2, "log2()"),
    ("log10", torch.log10, "log10()"),
    ("log1p", torch.log1p, "log1p()"),
    ("sin", torch.sin, "sin()"),
    ("cos", torch.cos, "cos()"),
    ("tan", torch.tan, "tan()"),
    ("asin", torch.asin, "asin()"),
    ("acos", torch.acos, "acos()"),
    ("atan", torch.atan, "atan()"),
    ("sinh", torch.sinh, "sinh()"),
    ("cosh", torch.cosh, "cosh()"),
    ("tanh", torch.tanh, "tanh()"),
    ("asinh", torch.asinh, "asinh()"),
    ("acosh", torch.acosh, "acosh()"),
    ("atanh", torch.atanh, "atanh()"),
    ("erf", torch.erf, "erf()"),
    ("erfc", torch.erfc, "erfc()"),
    ("sigmoid", torch.sigmoid, "sigmoid()"),
    ("sign", torch.sign, "sign()"),
    ("trunc", torch.trunc, "trunc()"),
    ("floor", torch.floor, "floor()"),
    ("ceil", torch.ceil, "ceil()"),
    ("round", torch.round, "round()"),
    ("relu", F.relu, "relu()"),
    ("relu6", F.relu6, "relu6()"),
    # PyTorch's vectorized CPU gelu gives NaN at +inf (its scalar path and float64 give inf).
    ("gelu", lambda a: F.gelu(a.double()).float(), "gelu()"),
    ("gelu_tanh", lambda a: F.gelu(a, approximate="tanh"), "gelu_tanh()"),
    ("silu", F.silu, "silu()"),
    ("softplus", F.softplus, "softplus()"),
    ("mish", F.mish, "mish()"),
    ("elu", F.elu, "elu(1.0)"),
    ("celu", lambda a: F.celu(a, 1.0), "celu(1.0)"),
    ("selu", F.selu, "selu()"),
    ("leaky_relu", lambda a: F.leaky_relu(a, 0.01), "leaky_relu(0.01)"),
    ("hardswish", F.hardswish, "hardswish()"),
    ("hardsigmoid", F.hardsigmoid, "hardsigmoid()"),
    ("logsigmoid", F.logsigmoid, "logsigmoid()"),
    ("softsign", F.softsign, "softsign()"),
]
for name, f, fm in UNARY:
    entry(name, [(N,)], f, f"x[0].{fm}", vals=[VALUES])

# Large negative inputs, where a formula's intermediate squares overflow (acosh found by the fuzzer).
BIG = [-1e30, -3e38, -1e20, -65504.0, -1e10, 1e10, 3e38, 0.5]
for name in ("acosh", "asinh", "atanh", "cosh", "sinh", "tanh", "atan", "expm1", "log1p"):
    entry(f"{name}_big", [(len(BIG),)], getattr(torch, name), f"x[0].{name}()", vals=[BIG], grad=False)

# Near f32's overflow: results finite while an intermediate (exp(x) * x, exp(x) before halving)
# is not (expm1 found by the fuzzer).
NEAR_OVERFLOW = [20.0, 50.0, 80.0, 87.3, 88.0, 88.7, 89.0, 89.4, -89.0, -88.0]
for name in ("exp", "expm1", "sinh", "cosh"):
    entry(f"{name}_near_overflow", [(len(NEAR_OVERFLOW),)], getattr(torch, name), f"x[0].{name}()",
          vals=[NEAR_OVERFLOW], grad=False)

# Constant exponents take their own paths (products, sqrt, reciprocal, the general formula).
for tag, c in (("0", 0.0), ("1", 1.0), ("2", 2.0), ("3", 3.0), ("m1", -1.0), ("half", 0.5), ("m_half", -0.5),
               ("0_3", 0.3), ("3_3", 3.3), ("m2_5", -2.5)):
    entry(f"pow_const_{tag}", [(N,)], (lambda c: lambda a: torch.pow(a, c))(c), f"x[0].pow({c!r})", vals=[VALUES])
entry("rpow_2", [(N,)], lambda a: torch.pow(2.0, a), "x[0].rpow(2.0)", vals=[VALUES])

BINARY = [
    ("add", torch.add, "add"),
    ("sub", torch.sub, "sub"),
    ("mul", torch.mul, "mul"),
    ("div", torch.div, "div"),
    ("pow", torch.pow, "pow"),
    ("maximum", torch.maximum, "maximum"),
    ("minimum", torch.minimum, "minimum"),
    ("atan2", torch.atan2, "atan2"),
    ("copysign", torch.copysign, "copysign"),
    ("logaddexp", torch.logaddexp, "logaddexp"),
    ("remainder", torch.remainder, "remainder"),
    ("fmod", torch.fmod, "fmod"),
    ("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"), "div_floor"),
]
GRID_X = [v for v in VALUES for _ in VALUES]
GRID_Y = [v for _ in VALUES for v in VALUES]
for name, f, fm in BINARY:
    entry(name, [(N, N), (N, N)], f, f"x[0].{fm}(&x[1])", vals=[GRID_X, GRID_Y])

CASES = [Case(name, shapes, fn, **kw) for name, shapes, fn, _, kw in ENTRIES]


def rust():
    lines = [
        "//! Special values: each elementwise op at ±0, ±inf and NaN, with gradients. Written by",
        "//! `python3 scripts/torch_fixtures/cases_special.py --rust` from the same table as the",
        "//! fixture (do not edit by hand).",
        "",
        "use super::CaseFn;",
        "",
        "pub fn cases() -> Vec<(&'static str, CaseFn)> {",
        "    vec![",
    ]
    for name, _, _, expr, _ in ENTRIES:
        lines.append(f'        ("{name}", |x| {expr}),')
    lines += ["    ]", "}", ""]
    return "\n".join(lines)


if __name__ == "__main__" and "--rust" in sys.argv:
    sys.stdout.write(rust())
