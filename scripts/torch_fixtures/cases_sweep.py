"""A sweep: the ops of this suite on the layouts and dtypes where kernels differ — transposed
(non-contiguous) inputs, 0-d and empty tensors, float16, broadcast operands, every axis of a
3-D tensor — so that each op is checked beyond the one shape its own group uses.

Each entry pairs the PyTorch computation with its ferrograd expression (a Rust closure body over
`x`, the inputs); `python3 cases_sweep.py --rust > tests/torch/sweep.rs` writes the Rust side
from the same table, so the two cannot drift apart.
"""

import math
import sys

import torch
import torch.nn.functional as F

from case import Case

F16 = dict(atol=2e-3, rtol=1e-2, grad_atol=2e-3, grad_rtol=2e-2)
ENTRIES = []  # (name, shapes, torch fn, rust expression, Case kwargs)


def entry(name, shapes, fn, rust, **kw):
    ENTRIES.append((name, shapes, fn, rust, kw))


# ---------------------------------------------------------------- unary ops x layouts
UNARY = [
    # name, torch method, ferrograd method, (low, high)
    ("atan", "atan", "atan()", (-3.0, 3.0)),
    ("asin", "asin", "asin()", (-0.9, 0.9)),
    ("acos", "acos", "acos()", (-0.9, 0.9)),
    ("sinh", "sinh", "sinh()", (-3.0, 3.0)),
    ("cosh", "cosh", "cosh()", (-3.0, 3.0)),
    ("asinh", "asinh", "asinh()", (-3.0, 3.0)),
    ("acosh", "acosh", "acosh()", (1.1, 4.0)),
    ("atanh", "atanh", "atanh()", (-0.9, 0.9)),
    ("log10", "log10", "log10()", (0.1, 5.0)),
    ("exp", "exp", "exp()", (-2.0, 2.0)),
    ("log", "log", "log()", (0.1, 4.0)),
    ("sqrt", "sqrt", "sqrt()", (0.1, 4.0)),
    ("sin", "sin", "sin()", (-3.0, 3.0)),
    ("cos", "cos", "cos()", (-3.0, 3.0)),
    ("tan", "tan", "tan()", (-1.2, 1.2)),
    ("erf", "erf", "erf()", (-2.0, 2.0)),
    ("expm1", "expm1", "expm1()", (-2.0, 2.0)),
    ("log1p", "log1p", "log1p()", (-0.5, 2.0)),
    ("sigmoid", "sigmoid", "sigmoid()", (-4.0, 4.0)),
    ("tanh", "tanh", "tanh()", (-3.0, 3.0)),
]
ACTS = [
    ("relu", lambda a: F.relu(a), "relu()"),
    ("gelu", lambda a: F.gelu(a), "gelu()"),
    ("silu", lambda a: F.silu(a), "silu()"),
    ("softplus", lambda a: F.softplus(a), "softplus()"),
    ("mish", lambda a: F.mish(a), "mish()"),
    ("elu", lambda a: F.elu(a), "elu(1.0)"),
    ("hardswish", lambda a: F.hardswish(a), "hardswish()"),
    ("logsigmoid", lambda a: F.logsigmoid(a), "logsigmoid()"),
]

for name, tm, fm, (lo, hi) in UNARY:
    f = (lambda m: lambda a: getattr(a, m)())(tm)
    entry(f"{name}_t", [(4, 3)], (lambda f: lambda a: f(a.t()) * 2.0)(f), f"x[0].t().{fm} * 2.0", low=lo, high=hi)
    entry(f"{name}_f16", [(3, 4)], f, f"x[0].{fm}", low=lo, high=hi, dtype="float16", **F16)
    entry(f"{name}_0d", [()], f, f"x[0].{fm}", low=lo, high=hi)
    entry(f"{name}_empty", [(0, 3)], f, f"x[0].{fm}", low=lo, high=hi)
for name, f, fm in ACTS:
    entry(f"{name}_t", [(4, 3)], (lambda f: lambda a: f(a.t()))(f), f"x[0].t().{fm}")
    entry(f"{name}_f16", [(3, 4)], f, f"x[0].{fm}", dtype="float16", **F16)
    entry(f"{name}_flip", [(3, 4)], (lambda f: lambda a: f(a.flip(1)) * a)(f), f"x[0].flip(1).{fm} * &x[0]")
    entry(f"{name}_wide", [(2, 67)], f, f"x[0].{fm}", low=-6.0, high=6.0)

# ---------------------------------------------------------------- binary ops x layouts
BINARY = [
    ("atan2", torch.atan2, "atan2"),
    ("copysign", torch.copysign, "copysign"),
    ("logaddexp", torch.logaddexp, "logaddexp"),
    ("logaddexp2", torch.logaddexp2, "logaddexp2"),
]
for name, f, fm in BINARY:
    entry(f"{name}_broadcast", [(3, 1), (4,)], f, f"x[0].{fm}(&x[1])")
    entry(f"{name}_t", [(4, 3), (3, 4)], (lambda f: lambda a, b: f(a.t(), b))(f), f"x[0].t().{fm}(&x[1])")
    entry(f"{name}_f16", [(3, 4), (3, 4)], f, f"x[0].{fm}(&x[1])", dtype="float16", **F16)
    entry(f"{name}_0d_rhs", [(3, 4), ()], f, f"x[0].{fm}(&x[1])")

# ---------------------------------------------------------------- axis-wise ops x axes
AXIS_OPS = [
    ("softmin", lambda a, d: F.softmin(a, dim=d), "softmin({d})"),
    ("logcumsumexp", lambda a, d: torch.logcumsumexp(a, dim=d), "logcumsumexp({d})"),
    ("normalize", lambda a, d: F.normalize(a, dim=d), "normalize(2.0, {d}, 1e-12)"),
    ("sort_values", lambda a, d: torch.sort(a, dim=d, stable=True).values, "sort({d}, false).0"),
    ("sort_desc_indices", lambda a, d: torch.sort(a, dim=d, descending=True, stable=True).indices, "sort({d}, true).1"),
    ("topk2", lambda a, d: torch.topk(a, 2, dim=d).values, "topk(2, {d}, true).0"),
    ("argsort", lambda a, d: torch.argsort(a, dim=d, stable=True), "argsort({d}, false)"),
    ("cumsum_f64", lambda a, d: a.cumsum(d, dtype=torch.float64), "cumsum_as({d}, DType::F64)"),
]
for name, f, fm in AXIS_OPS:
    for d in (0, 1, -1):
        tag = "last" if d == -1 else f"axis{d}"
        entry(f"{name}_{tag}", [(3, 4, 5)], (lambda f, d: lambda a: f(a, d))(f, d), "x[0]." + fm.format(d=d))
    entry(f"{name}_permuted", [(4, 5, 3)], (lambda f: lambda a: f(a.permute(2, 0, 1), 2))(f),
          "x[0].permute([2, 0, 1])." + fm.format(d=2))

# ---------------------------------------------------------------- attention shapes
SDPA = F.scaled_dot_product_attention
ATT = "&ferrograd::tensor::AttentionOpts::default()"
entry("sdpa_one_query", [(2, 1, 1, 8), (2, 1, 5, 8), (2, 1, 5, 8)], SDPA, f"x[0].scaled_dot_product_attention(&x[1], &x[2], {ATT})")
entry("sdpa_one_key", [(1, 2, 4, 8), (1, 2, 1, 8), (1, 2, 1, 8)], SDPA, f"x[0].scaled_dot_product_attention(&x[1], &x[2], {ATT})")
entry("sdpa_head_dim_1", [(2, 3, 1), (2, 5, 1), (2, 5, 3)], SDPA, f"x[0].scaled_dot_product_attention(&x[1], &x[2], {ATT})")
entry("sdpa_wide_head", [(1, 1, 3, 32), (1, 1, 4, 32), (1, 1, 4, 16)], SDPA, f"x[0].scaled_dot_product_attention(&x[1], &x[2], {ATT})")
entry("sdpa_causal_one_query", [(1, 2, 1, 4), (1, 2, 3, 4), (1, 2, 3, 4)], lambda q, k, v: SDPA(q, k, v, is_causal=True),
      f"x[0].scaled_dot_product_attention(&x[1], &x[2], &ferrograd::tensor::AttentionOpts::default().causal())")
entry("sdpa_scaled_causal", [(2, 5, 4), (2, 5, 4), (2, 5, 4)], lambda q, k, v: SDPA(q, k, v, is_causal=True, scale=0.3),
      f"x[0].scaled_dot_product_attention(&x[1], &x[2], &ferrograd::tensor::AttentionOpts::default().causal().scale(0.3))")
entry("sdpa_float_mask_broadcast_rows", [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), (5,)],
      lambda q, k, v, m: SDPA(q, k, v, attn_mask=m),
      "x[0].scaled_dot_product_attention(&x[1], &x[2], &ferrograd::tensor::AttentionOpts::default().mask(&x[3]))")
entry("sdpa_gqa_3_groups", [(1, 6, 2, 4), (1, 2, 3, 4), (1, 2, 3, 4)], lambda q, k, v: SDPA(q, k, v, enable_gqa=True),
      "x[0].scaled_dot_product_attention(&x[1], &x[2], &ferrograd::tensor::AttentionOpts::default().gqa())")
entry("sdpa_large_scores", [(1, 1, 3, 4), (1, 1, 6, 4), (1, 1, 6, 4)], lambda q, k, v: SDPA(q * 30.0, k, v),
      f"(&x[0] * 30.0).scaled_dot_product_attention(&x[1], &x[2], {ATT})", grad_atol=1e-3, grad_rtol=1e-2)
entry("sdpa_transposed_kv", [(1, 2, 3, 4), (1, 2, 4, 5), (1, 2, 5, 4)],
      lambda q, k, v: SDPA(q, k.transpose(-1, -2), v),
      f"x[0].scaled_dot_product_attention(&x[1].transpose(-1, -2), &x[2], {ATT})")

# ---------------------------------------------------------------- functional norms
entry("layer_norm_last", [(4, 6), (6,), (6,)], lambda x, w, b: F.layer_norm(x, (6,), w, b),
      "x[0].layer_norm(&[6], Some(&x[1]), Some(&x[2]), 1e-5)")
entry("layer_norm_t", [(6, 4)], lambda x: F.layer_norm(x.t(), (6,)), "x[0].t().layer_norm(&[6], None, None, 1e-5)")
entry("layer_norm_eps", [(3, 5)], lambda x: F.layer_norm(x * 1e-3, (5,), eps=1e-2),
      "(&x[0] * 1e-3).layer_norm(&[5], None, None, 1e-2)", atol=1e-5)
entry("layer_norm_f16", [(3, 8)], lambda x: F.layer_norm(x, (8,)), "x[0].layer_norm(&[8], None, None, 1e-5)",
      dtype="float16", **F16)
entry("group_norm_one_group", [(2, 4, 5)], lambda x: F.group_norm(x, 1), "x[0].group_norm(1, None, None, 1e-5)")
entry("group_norm_per_channel", [(2, 4, 2, 3)], lambda x: F.group_norm(x, 4), "x[0].group_norm(4, None, None, 1e-5)")
entry("rms_norm_f16", [(3, 8), (8,)], lambda x, w: F.rms_norm(x, (8,), w), "x[0].rms_norm(&[8], Some(&x[1]), None)",
      dtype="float16", **F16)
entry("rms_norm_t", [(5, 3)], lambda x: F.rms_norm(x.t(), (5,)), "x[0].t().rms_norm(&[5], None, None)")
entry("batch_norm_train_no_affine", [(5, 3, 4)], lambda x: F.batch_norm(x, None, None, training=True),
      "x[0].batch_norm(None, None, None, None, true, 0.1, 1e-5)")
entry("batch_norm_train_2d", [(6, 4)], lambda x: F.batch_norm(x, None, None, training=True, eps=1e-3),
      "x[0].batch_norm(None, None, None, None, true, 0.1, 1e-3)")
entry("instance_norm_2d", [(2, 3, 4, 4)], lambda x: F.instance_norm(x), "x[0].instance_norm(None, None, 1e-5)")
entry("normalize_p3", [(3, 4)], lambda x: F.normalize(x, p=3.0, dim=1), "x[0].normalize(3.0, 1, 1e-12)")

# ---------------------------------------------------------------- selections
for size, step in ((2, 1), (3, 2), (4, 4), (1, 3), (5, 1), (6, 6)):
    entry(f"unfold_{size}_{step}", [(2, 6)], (lambda s, t: lambda a: a.unfold(1, s, t))(size, step),
          f"x[0].unfold(1, {size}, {step})")
for k in (-3, -1, 0, 1, 3, 5):
    tag = f"m{-k}" if k < 0 else f"p{k}"
    entry(f"diag_vec_{tag}", [(3,)], (lambda k: lambda a: torch.diag(a, k))(k), f"x[0].diag({k})")
    entry(f"diagonal_{tag}", [(2, 4, 6)], (lambda k: lambda a: torch.diagonal(a, k, 1, 2))(k), f"x[0].diagonal_offset({k}, 1, 2)")
POOL = "&ferrograd::tensor::PoolOpts::default()"
entry("maxpool_idx_3x3", [(1, 2, 7, 7)], lambda a: F.max_pool2d(a, 3, return_indices=True)[1],
      f"x[0].max_pool2d_with_indices(3, {POOL}).1")
entry("maxpool_idx_stride1", [(1, 1, 5, 5)], lambda a: F.max_pool2d(a, 2, stride=1, return_indices=True)[1],
      "x[0].max_pool2d_with_indices(2, &ferrograd::tensor::PoolOpts::default().stride(1)).1")
entry("maxpool_idx_3d_input", [(2, 4, 4)], lambda a: F.max_pool2d(a, 2, return_indices=True)[1],
      f"x[0].max_pool2d_with_indices(2, {POOL}).1")
entry("maxpool_idx_values_grad", [(1, 2, 6, 6)], lambda a: F.max_pool2d(a, 3, stride=2, return_indices=True)[0],
      "x[0].max_pool2d_with_indices(3, &ferrograd::tensor::PoolOpts::default().stride(2)).0")
entry("maxpool_idx_int", [(1, 1, 4, 4)], lambda a: F.max_pool2d(a.float(), 2, return_indices=True)[1],
      f"x[0].cast(DType::F32).max_pool2d_with_indices(2, {POOL}).1", dtype="int32", low=-5, high=5)
entry("maxpool_idx_nan", [(1, 1, 2, 4)], lambda a: F.max_pool2d(a, 2, return_indices=True)[1],
      f"x[0].max_pool2d_with_indices(2, {POOL}).1", vals=[[1.0, math.nan, 3.0, 2.0, 0.0, 5.0, 1.0, 7.0]], grad=False)
entry("masked_select_int", [(3, 4), (3, 4)], lambda a, m: torch.masked_select(a, m),
      "x[0].masked_select(&x[1]).unwrap()", dtype=["int32", "bool"], low=[-9, -1], high=[9, 1])
entry("masked_select_t", [(4, 3), (3, 4)], lambda a, m: torch.masked_select(a.t(), m),
      "x[0].t().masked_select(&x[1]).unwrap()", dtype=["float32", "bool"])
entry("masked_select_all", [(2, 3)], lambda a: torch.masked_select(a, a == a), "x[0].masked_select(&x[0].eq(&x[0])).unwrap()")
entry("nonzero_float", [(3, 3)], lambda a: torch.nonzero(a > 0), "x[0].gt(0.0).nonzero().unwrap()")
entry("nonzero_0d", [()], lambda a: torch.nonzero(a > -10.0), "x[0].gt(-10.0).nonzero().unwrap()")
entry("nonzero_empty_result", [(4,)], lambda a: torch.nonzero(a > 100.0), "x[0].gt(100.0).nonzero().unwrap()")

# ---------------------------------------------------------------- creation with dtypes
for i, (a, b, s, dt, rdt) in enumerate([(0, 10, 1, torch.int64, "I64"), (-5, 5, 2, torch.int32, "I32"),
                                         (3, -3, -1, torch.int32, "I32"), (0, 1, 0.125, torch.float32, "F32"),
                                         (1, 2, 0.1, torch.float64, "F64"), (0, 7, 3, torch.int16, "I16"),
                                         (0, 4, 0.5, torch.float16, "F16"), (5, 5, 1, torch.int64, "I64")]):
    entry(f"arange_{i}", [], (lambda a, b, s, dt: lambda: torch.arange(a, b, s, dtype=dt))(a, b, s, dt),
          f"Tensor::arange_dtype({float(a)}, {float(b)}, {float(s)}, DType::{rdt})")
for i, (a, b, n, dt, rdt) in enumerate([(0, 1, 5, torch.float32, "F32"), (-2, 2, 1, torch.float32, "F32"),
                                        (1, -1, 4, torch.float64, "F64"), (0, 100, 7, torch.int32, "I32")]):
    entry(f"linspace_{i}", [], (lambda a, b, n, dt: lambda: torch.linspace(a, b, n, dtype=dt))(a, b, n, dt),
          f"Tensor::linspace_dtype({float(a)}, {float(b)}, {n}, DType::{rdt})")
entry("eye_tall_bool", [], lambda: torch.eye(4, 2, dtype=torch.bool), "Tensor::eye_dtype(4, 2, DType::BOOL)")
entry("eye_f16", [], lambda: torch.eye(3, dtype=torch.float16), "Tensor::eye_dtype(3, 3, DType::F16)")

CASES = [Case(name, shapes, fn, **kw) for name, shapes, fn, _, kw in ENTRIES]


def rust():
    lines = [
        "//! The sweep: the suite's ops on transposed, 0-d, empty, float16 and broadcast inputs, every",
        "//! axis of a 3-D tensor. Written by `python3 scripts/torch_fixtures/cases_sweep.py --rust`",
        "//! from the same table as the fixture (do not edit by hand).",
        "",
        "use super::CaseFn;",
        "#[allow(unused_imports)]",
        "use ferrograd::{DType, Tensor};",
        "",
        "pub fn cases() -> Vec<(&'static str, CaseFn)> {",
        "    vec![",
    ]
    for name, _, _, expr, _ in ENTRIES:
        arg = "x" if "x[" in expr else "_"
        lines.append(f'        ("{name}", |{arg}| {expr}),')
    lines += ["    ]", "}", ""]
    return "\n".join(lines)


if __name__ == "__main__" and "--rust" in sys.argv:
    sys.stdout.write(rust())
