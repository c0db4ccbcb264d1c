"""Dtype semantics: float16/bfloat16 arithmetic is computed in float32 and rounded once per op
(so the primitive ops match PyTorch bit for bit: these cases use zero tolerance), composite
ops on 16-bit floats round once at the end (within one 16-bit ulp), overflow to inf and
subnormals, casts (rounding to nearest even, truncation toward zero), promotion between
dtypes, integer wrap-around, and integer floor division and remainder with Python's rounding
for every integer width.

The Rust closures are in tests/torch/dtype.rs, in the same order.
"""

import math

import torch

from case import Case

INF, NAN = math.inf, math.nan
EXACT = dict(atol=0.0, rtol=0.0, grad_atol=0.0, grad_rtol=0.0)
ULP16 = dict(atol=1e-7, rtol=1e-3, grad_atol=1e-7, grad_rtol=1e-3)
ULPBF = dict(atol=1e-7, rtol=8e-3, grad_atol=1e-7, grad_rtol=8e-3)
F64_TOL = dict(atol=1e-14, rtol=1e-12, grad_atol=1e-14, grad_rtol=1e-12)
NUM8 = [[7, -7, 7, -7, 0, 127, -128, -128, 100, -99]]
DEN8 = [[2, 2, -2, -2, -3, 10, 3, 127, -7, 7]]

CASES = [
    # ---------------------------------------------------------------- 16-bit floats, primitives
    Case("f16_add_exact", [(4, 5), (4, 5)], lambda a, b: a + b, dtype="float16", low=-100.0, high=100.0, **EXACT),
    Case("f16_mul_exact", [(4, 5), (4, 5)], lambda a, b: a * b, dtype="float16", low=-30.0, high=30.0, **EXACT),
    Case("f16_sub_broadcast_exact", [(3, 4), (4,)], lambda a, b: a - b, dtype="float16", **EXACT),
    Case("f16_div", [(4, 5), (4, 5)], lambda a, b: a / b, dtype="float16", low=[-4.0, 0.5], high=[4.0, 3.0],
         atol=0.0, rtol=0.0, grad_atol=1e-7, grad_rtol=1e-3),
    Case("f16_sqrt_exact", [(10,)], lambda a: a.sqrt(), dtype="float16", low=0.01, high=1000.0, atol=0.0, rtol=0.0,
         grad_atol=1e-7, grad_rtol=1e-3),
    Case("f16_overflow_to_inf", [(4,), (4,)], lambda a, b: a * b + a, dtype="float16",
         vals=[[60000.0, -60000.0, 300.0, 65504.0], [2.0, 2.0, 300.0, 1.0]], grad=False, **EXACT),
    Case("f16_subnormal", [(4,), (4,)], lambda a, b: a * b, dtype="float16",
         vals=[[1e-4, 3e-5, -6e-5, 1e-3], [0.01, 0.5, 0.25, 1e-4]], **EXACT),
    Case("bf16_add_mul_exact", [(4, 5), (4, 5)], lambda a, b: a * b + b, dtype="bfloat16", low=-50.0, high=50.0,
         **EXACT),
    Case("bf16_large_exact", [(3,), (3,)], lambda a, b: a * b, dtype="bfloat16",
         vals=[[1e30, -3e38, 1e-30], [1e8, 2.0, 1e-10]], grad=False, **EXACT),
    # ---------------------------------------------------------------- 16-bit floats, composites
    Case("f16_exp", [(4, 5)], lambda a: a.exp(), dtype="float16", low=-8.0, high=8.0, **ULP16),
    Case("f16_log", [(4, 5)], lambda a: a.log(), dtype="float16", low=0.01, high=100.0, **ULP16),
    # PyTorch's 16-bit gradients y (1 - y) and 1 - y^2 start from the rounded output y (an
    # absolute error up to ~1e-3 near saturation); ours are computed in float32 and rounded once.
    Case("f16_sigmoid", [(4, 5)], lambda a: a.sigmoid(), dtype="float16", low=-8.0, high=8.0, atol=1e-7,
         rtol=1e-3, grad_atol=1e-3, grad_rtol=1e-2),
    Case("f16_tanh", [(4, 5)], lambda a: a.tanh(), dtype="float16", low=-4.0, high=4.0, atol=1e-7, rtol=1e-3,
         grad_atol=1e-3, grad_rtol=1e-2),
    Case("f16_cos", [(4, 5)], lambda a: a.cos(), dtype="float16", low=-6.0, high=6.0, atol=1e-3, rtol=1e-3,
         grad_atol=1e-3, grad_rtol=1e-3),
    Case("bf16_exp_log", [(4, 5)], lambda a: a.exp() + a.log(), dtype="bfloat16", low=0.1, high=4.0, **ULPBF),
    Case("f16_sum", [(6, 40)], lambda a: a.sum(1), dtype="float16", **ULP16),
    Case("f16_mean_keepdim", [(6, 40)], lambda a: a.mean(0, keepdim=True), dtype="float16", **ULP16),
    Case("f16_softmax", [(3, 16)], lambda a: a.softmax(-1), dtype="float16", low=-5.0, high=5.0, atol=1e-5,
         rtol=2e-3, grad_atol=3e-4, grad_rtol=2e-2),
    Case("f16_max_where", [(3, 4), (3, 4)], lambda a, b: torch.where(a > b, a, b * 2.0).amax(1), dtype="float16",
         **EXACT),
    # ---------------------------------------------------------------- casts
    Case("cast_f32_to_f16_rounding", [(8,)], lambda a: a.half(), grad=False, **EXACT,
         vals=[[1.0 + 2**-11, 1.0 + 3 * 2**-11, 2049.0, 2051.0, 65519.0, 65520.0, 1e-8, -0.1]]),
    Case("cast_f32_to_bf16_rounding", [(6,)], lambda a: a.bfloat16(), grad=False, **EXACT,
         vals=[[1.0 + 2**-8, 1.0 + 3 * 2**-8, 257.0, 259.0, 3.4e38, -1e-3]]),
    Case("cast_f16_to_int_truncates", [(6,)], lambda a: a.to(torch.int32), dtype="float16",
         vals=[[2.7, -2.7, 0.5, -0.5, 1000.9, -1000.9]]),
    Case("cast_int_to_f16", [(5,)], lambda a: a.half(), dtype="int32", vals=[[1, 2049, 65504, 70000, -3]], **EXACT),
    Case("cast_f64_to_f32", [(4,)], lambda a: a.float(), dtype="float64", vals=[[0.1, 1e-50, 1e300, -1.0 / 3]],
         **EXACT),
    Case("cast_i64_to_f32", [(3,)], lambda a: a.float(), dtype="int64", vals=[[2**53 + 1, -(2**40) - 1, 16777217]],
         **EXACT),
    Case("cast_bool_to_f16_grad_chain", [(4,), (4,)], lambda m, a: m.half() * a, dtypes=["bool", "float16"],
         **EXACT),
    # ---------------------------------------------------------------- promotion
    Case("promote_f16_bf16_to_f32", [(5,), (5,)], lambda a, b: a * b + a, dtypes=["float16", "bfloat16"],
         atol=1e-6, rtol=1e-6, grad_atol=1e-6, grad_rtol=1e-6),
    Case("promote_u8_i8_to_i16", [(5,), (5,)], lambda a, b: a * b, dtypes=["uint8", "int8"], low=[0, -100],
         high=[255, 100]),
    Case("promote_bool_f16", [(4,), (4,)], lambda m, a: m + a, dtypes=["bool", "float16"], **EXACT),
    Case("promote_i64_f16", [(4,), (4,)], lambda i, a: i * a, dtypes=["int64", "float16"], low=[-50, -2.0],
         high=[50, 2.0], **EXACT),
    Case("promote_f16_scalar_stays_f16", [(5,)], lambda a: a * 2.5 + 1, dtype="float16", **EXACT),
    # ---------------------------------------------------------------- integer arithmetic
    Case("int32_mul_wraps", [(4,), (4,)], lambda a, b: a * b, dtype="int32",
         vals=[[2**30, -(2**31), 123456789, 7], [4, 2, 100, -3]]),
    Case("uint8_neg_wraps", [(4,)], lambda a: -a, dtype="uint8", vals=[[0, 1, 200, 255]]),
    Case("int16_add_wraps", [(3,), (3,)], lambda a, b: a + b, dtype="int16", vals=[[32767, -32768, 100], [1, -1, 5]]),
    Case("floor_divide_int8", [(10,), (10,)], lambda a, b: a // b, dtype="int8", vals=NUM8 + DEN8),
    Case("remainder_int8", [(10,), (10,)], lambda a, b: a % b, dtype="int8", vals=NUM8 + DEN8),
    Case("floor_divide_int16_scalar", [(8,)], lambda a: a // -3, dtype="int16", low=-1000, high=1000),
    Case("remainder_int64_large", [(4,), (4,)], lambda a, b: a % b, dtype="int64",
         vals=[[2**62, -(2**62) - 7, 10**15, -(10**15)], [3, 1000, -(10**9) - 7, 2**40]]),
    Case("floor_divide_int64_large", [(4,), (4,)], lambda a, b: a // b, dtype="int64",
         vals=[[2**62, -(2**62) - 7, 10**15, -(10**15)], [3, 1000, -(10**9) - 7, 2**40]]),
    Case("remainder_int16", [(6,), (6,)], lambda a, b: a % b, dtype="int16", low=[-30000, -300],
         high=[30000, -1]),
    # PyTorch has no uint16/uint32 floor division: the reference computes in int64.
    Case("floor_divide_uint32", [(5,), (5,)], lambda a, b: (a.long() // b.long()).to(torch.uint32),
         dtype="uint32", vals=[[4000000000, 7, 0, 123456, 3000000000], [3, 7, 5, 1000, 4000000000]]),
    Case("floor_divide_mixed_int_widths", [(5,), (5,)], lambda a, b: a // b, dtypes=["int8", "int32"],
         vals=[[-7, 7, -128, 100, -1], [2, -3, 1000, -7, 5]]),
    # ---------------------------------------------------------------- float64
    Case("f64_arith_exact", [(3, 4), (3, 4)], lambda a, b: (a * b + a) / b - b, dtype="float64",
         low=[-3.0, 0.5], high=[3.0, 3.0], **F64_TOL),
    Case("f64_exp_log_sqrt", [(3, 4)], lambda a: a.exp().log().sqrt() + a.sigmoid(), dtype="float64", low=0.1,
         high=10.0, **F64_TOL),
]
