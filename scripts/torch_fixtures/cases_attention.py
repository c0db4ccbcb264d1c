"""scaled_dot_product_attention: plain, with a scale, causal (square and not), bool and float
masks broadcast over batch and heads, different query and key lengths, a value width other
than the key width, broadcast key/value heads, grouped-query attention, 3-D inputs, f16.

The Rust closures are in tests/torch/attention.rs, in the same order.
"""

import torch
import torch.nn.functional as F

from case import Case

SDPA = F.scaled_dot_product_attention
GRAD = dict(grad_atol=1e-4, grad_rtol=1e-3)

CASES = [
    Case("sdpa", [(2, 3, 4, 8), (2, 3, 4, 8), (2, 3, 4, 8)], lambda q, k, v: SDPA(q, k, v)),
    Case("sdpa_scale", [(2, 2, 4, 8)] * 3, lambda q, k, v: SDPA(q, k, v, scale=0.7)),
    Case("sdpa_lengths", [(2, 2, 3, 8), (2, 2, 6, 8), (2, 2, 6, 5)], lambda q, k, v: SDPA(q, k, v)),
    Case("sdpa_causal", [(1, 2, 5, 4)] * 3, lambda q, k, v: SDPA(q, k, v, is_causal=True)),
    Case("sdpa_causal_rect", [(1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 4)],
         lambda q, k, v: SDPA(q, k, v, is_causal=True)),
    Case("sdpa_bool_mask", [(2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), (3, 5)],
         lambda q, k, v, m: SDPA(q, k, v, attn_mask=m | torch.eye(3, 5, dtype=torch.bool)),
         dtype=["float32", "float32", "float32", "bool"]),
    Case("sdpa_float_mask", [(2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), (1, 1, 3, 5)],
         lambda q, k, v, m: SDPA(q, k, v, attn_mask=m)),
    Case("sdpa_mask_per_batch", [(2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), (2, 1, 3, 5)],
         lambda q, k, v, m: SDPA(q, k, v, attn_mask=m), low=[-2.0, -2.0, -2.0, -3.0], high=[2.0, 2.0, 2.0, 0.0]),
    Case("sdpa_broadcast_heads", [(2, 4, 3, 8), (2, 1, 5, 8), (2, 1, 5, 8)], lambda q, k, v: SDPA(q, k, v)),
    Case("sdpa_gqa", [(1, 4, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8)], lambda q, k, v: SDPA(q, k, v, enable_gqa=True)),
    Case("sdpa_3d", [(3, 4, 8), (3, 6, 8), (3, 6, 2)], lambda q, k, v: SDPA(q, k, v)),
    Case("sdpa_transposed", [(2, 4, 3, 8)] * 3,
         lambda q, k, v: SDPA(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)),
    Case("sdpa_f16", [(1, 2, 4, 8)] * 3, lambda q, k, v: SDPA(q, k, v), dtype="float16",
         atol=1e-3, rtol=1e-2, grad_atol=2e-3, grad_rtol=2e-2),
]
