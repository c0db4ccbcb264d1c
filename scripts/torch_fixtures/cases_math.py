"""More elementwise math: rsqrt, tan, sign, floor/ceil/round (ties to even), clamp, lerp,
isnan/isinf/isfinite, erf/erfc/log1p/expm1, integer and float floor division, remainder, fmod,
bitwise ops and shifts, and pow at its special points (base 0, negative bases, integer powers),
gradients included.

The Rust closures are in tests/torch/math.rs, in the same order.
"""

import math

import torch

from case import Case

INF, NAN = math.inf, math.nan
I32, I64 = torch.int32, torch.int64
POS = dict(low=0.1, high=4.0)
F64_TOL = dict(atol=1e-12, rtol=1e-10, grad_atol=1e-12, grad_rtol=1e-10)
ROUND_VALS = [[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 3.7, -3.7, 1e8, INF, NAN, -0.0]]
NUMS = [[7, -7, 7, -7, 0, 5, -5, 1, 13, -13]]
DENS = [[2, 2, -2, -2, 3, 5, 5, -1, 4, 4]]
ZERO_BASES = [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, -2.0, -2.0, 3.0]]
ZERO_EXPS = [[2.0, 1.0, 0.5, 0.0, -1.0, 1.5, 0.0, 2.0, 3.0, -0.5]]

CASES = [
    # ---------------------------------------------------------------- simple unary
    Case("rsqrt", [(3, 4)], lambda a: a.rsqrt(), **POS),
    Case("rsqrt_special", [(4,)], lambda a: a.rsqrt(), vals=[[0.0, INF, 4.0, -1.0]]),
    Case("tan", [(3, 4)], lambda a: a.tan(), low=-1.3, high=1.3),
    Case("sign", [(3, 4)], lambda a: a.sign()),
    Case("sign_special", [(6,)], lambda a: a.sign(), vals=[[0.0, -0.0, NAN, INF, -INF, -3.0]]),
    Case("sign_int", [(8,)], lambda a: a.sign(), dtype="int32", low=-3, high=3),
    Case("floor", [(3, 4)], lambda a: a.floor(), low=-5.0, high=5.0),
    Case("ceil", [(3, 4)], lambda a: a.ceil(), low=-5.0, high=5.0),
    Case("round", [(3, 4)], lambda a: a.round(), low=-5.0, high=5.0),
    Case("round_ties_to_even", [(14,)], lambda a: a.round(), vals=ROUND_VALS),
    Case("floor_special", [(14,)], lambda a: a.floor(), vals=ROUND_VALS),
    Case("ceil_special", [(14,)], lambda a: a.ceil(), vals=ROUND_VALS),
    Case("floor_int", [(6,)], lambda a: a.floor(), dtype="int32", low=-10, high=10),
    Case("round_transposed", [(3, 4)], lambda a: a.t().round() * a.t(), low=-3.0, high=3.0),
    Case("round_empty", [(0, 3)], lambda a: a.round()),
    Case("floor_0d", [()], lambda a: a.floor() + a, low=-3.0, high=3.0),
    # ---------------------------------------------------------------- clamp / lerp
    Case("clamp", [(3, 4)], lambda a: a.clamp(-0.5, 0.75)),
    Case("clamp_min_only", [(3, 4)], lambda a: a.clamp(min=0.25)),
    Case("clamp_max_only", [(3, 4)], lambda a: a.clamp(max=-0.25)),
    Case("clamp_at_bounds", [(5,)], lambda a: a.clamp(-1.0, 1.0), vals=[[-1.0, 1.0, 0.0, -2.0, 2.0]]),
    Case("clamp_nan", [(3,)], lambda a: a.clamp(-1.0, 1.0), vals=[[NAN, INF, -INF]]),
    Case("clamp_inverted_bounds", [(4,)], lambda a: a.clamp(1.0, -1.0), vals=[[-2.0, 0.0, 2.0, 1.0]]),
    Case("clamp_int", [(8,)], lambda a: a.clamp(-3, 4), dtype="int32", low=-10, high=10),
    Case("clamp_flipped", [(3, 4)], lambda a: a.flip(0).clamp(-1.0, 1.0) * 2.0),
    Case("lerp_scalar_weight", [(3, 4), (3, 4)], lambda a, b: torch.lerp(a, b, 0.3)),
    Case("lerp_large_weight", [(3, 4), (3, 4)], lambda a, b: torch.lerp(a, b, 0.8)),
    Case("lerp_tensor_weight", [(3, 4), (3, 4), (3, 4)], lambda a, b, w: torch.lerp(a, b, w),
         low=[-2.0, -2.0, -0.5], high=[2.0, 2.0, 1.5]),
    Case("lerp_broadcast", [(2, 3), (3,), (2, 1)], lambda a, b, w: torch.lerp(a, b, w), low=[-2.0, -2.0, 0.0],
         high=[2.0, 2.0, 1.0]),
    # ---------------------------------------------------------------- classification
    Case("isnan", [(6,)], lambda a: a.isnan(), vals=[[NAN, 0.0, INF, -INF, 1.0, -NAN]]),
    Case("isinf", [(6,)], lambda a: a.isinf(), vals=[[NAN, 0.0, INF, -INF, 1e38, -1.0]]),
    Case("isfinite", [(6,)], lambda a: a.isfinite(), vals=[[NAN, 0.0, INF, -INF, 1e38, -1.0]]),
    Case("isnan_int", [(4,)], lambda a: a.isnan(), dtype="int32", low=-5, high=5),
    Case("isfinite_int", [(4,)], lambda a: a.isfinite(), dtype="int32", low=-5, high=5),
    Case("logical_not_float", [(5,)], lambda a: a.logical_not(), vals=[[0.0, 1.0, -0.0, NAN, -2.0]]),
    # ---------------------------------------------------------------- special functions
    Case("erf", [(4, 5)], lambda a: torch.erf(a), low=-3.0, high=3.0),
    Case("erf_small", [(6,)], lambda a: torch.erf(a), vals=[[0.0, 1e-5, -1e-3, 0.49, 0.51, -0.5]]),
    Case("erf_special", [(6,)], lambda a: torch.erf(a), vals=[[INF, -INF, 10.0, -10.0, 4.0, NAN]]),
    Case("erfc", [(4, 5)], lambda a: torch.erfc(a), low=-3.0, high=5.0),
    Case("erfc_tail", [(4,)], lambda a: torch.erfc(a), vals=[[6.0, 8.0, -8.0, 9.0]], atol=1e-30,
         grad_atol=1e-30),
    Case("log1p", [(3, 4)], lambda a: torch.log1p(a), low=-0.9, high=3.0),
    Case("log1p_small", [(7,)], lambda a: torch.log1p(a), vals=[[1e-8, -1e-7, 1e-3, 0.0, -1.0, INF, 3e-8]],
         atol=1e-12),
    Case("expm1", [(3, 4)], lambda a: torch.expm1(a), low=-3.0, high=3.0),
    Case("expm1_small", [(6,)], lambda a: torch.expm1(a), vals=[[1e-8, -1e-7, 1e-3, 0.0, -100.0, 100.0]],
         atol=1e-12),
    Case("erf_f64", [(8,)], lambda a: torch.erf(a), dtype="float64", low=-3.0, high=3.0, atol=2e-7, rtol=1e-6,
         grad_atol=2e-6, grad_rtol=1e-5),
    # ---------------------------------------------------------------- division and remainder
    Case("floor_divide_int", [(10,), (10,)], lambda a, b: a // b, dtype="int32", vals=NUMS + DENS),
    Case("remainder_int", [(10,), (10,)], lambda a, b: a % b, dtype="int32", vals=NUMS + DENS),
    Case("fmod_int", [(10,), (10,)], lambda a, b: torch.fmod(a, b), dtype="int32", vals=NUMS + DENS),
    Case("div_trunc_int", [(10,), (10,)], lambda a, b: torch.div(a, b, rounding_mode="trunc"), dtype="int32",
         vals=NUMS + DENS),
    Case("floor_divide_int64_broadcast", [(3, 4), (4,)], lambda a, b: a // b, dtype="int64",
         vals=[[-100, -7, 0, 5, 13, -13, 99, -1, 50, -50, 7, 8], [3, -3, 7, -2]]),
    Case("remainder_int8_scalar", [(8,)], lambda a: a % 3, dtype="int8", low=-100, high=100),
    Case("remainder_int_negative_scalar", [(8,)], lambda a: a % -4, dtype="int32", low=-20, high=20),
    Case("floor_divide_uint8", [(6,), (6,)], lambda a, b: a // b, dtype="uint8", low=[0, 1], high=[255, 20]),
    Case("remainder_uint8", [(6,), (6,)], lambda a, b: a % b, dtype="uint8", low=[0, 1], high=[255, 20]),
    Case("floor_divide_float", [(3, 4), (3, 4)], lambda a, b: torch.div(a, b, rounding_mode="floor"),
         low=[-5.0, 0.5], high=[5.0, 2.0]),
    Case("remainder_float", [(3, 4), (3, 4)], lambda a, b: torch.remainder(a, b), low=[-5.0, 0.5], high=[5.0, 2.0],
         atol=1e-5),
    Case("remainder_float_negative_divisor", [(3, 4), (3, 4)], lambda a, b: torch.remainder(a, b),
         low=[-5.0, -2.0], high=[5.0, -0.5], atol=1e-5),
    Case("remainder_float_scalar", [(2, 5)], lambda a: a % 1.5, low=-6.0, high=6.0, atol=1e-5),
    Case("fmod_float", [(3, 4), (3, 4)], lambda a, b: torch.fmod(a, b), low=[-5.0, -2.0], high=[5.0, 2.0],
         atol=1e-5),
    Case("div_trunc_float", [(3, 4), (3, 4)], lambda a, b: torch.div(a, b, rounding_mode="trunc"),
         low=[-5.0, 0.5], high=[5.0, 2.0]),
    Case("remainder_permuted", [(2, 3, 4)], lambda a: a.permute(2, 0, 1) % 0.75, low=-3.0, high=3.0, atol=1e-5),
    # ---------------------------------------------------------------- bitwise
    Case("bitwise_not_int", [(6,)], lambda a: ~a, dtype="int32", low=-100, high=100),
    Case("bitwise_not_uint8", [(6,)], lambda a: ~a, dtype="uint8", low=0, high=255),
    Case("bitwise_not_bool", [(4,)], lambda a: ~a, dtype="bool"),
    Case("bitwise_and_or_xor", [(3, 4), (4,)], lambda a, b: (a & b) * 3 + (a | b) * 5 - (a ^ b), dtype="int32",
         low=-50, high=50),
    Case("lshift", [(8,), (8,)], lambda a, b: a << b, dtype="int32", low=[-100, 0], high=[100, 20]),
    Case("rshift", [(8,), (8,)], lambda a, b: a >> b, dtype="int32", low=[-1000, 0], high=[1000, 12]),
    Case("shift_out_of_range", [(6,), (6,)], lambda a, b: (a << b) * 7 + (a >> b), dtype="int32",
         vals=[[1, -8, 5, -1, 3, -3], [31, 32, 33, 40, 0, 63]]),
    Case("rshift_uint8", [(6,)], lambda a: a >> 3, dtype="uint8", low=0, high=255),
    Case("lshift_scalar_int64", [(5,)], lambda a: a << 40, dtype="int64", low=-100, high=100),
    # ---------------------------------------------------------------- pow
    Case("pow_zero_base_tensor_exp", [(10,), (10,)], lambda a, b: a ** b, vals=ZERO_BASES + ZERO_EXPS),
    Case("pow_zero_base_sqrt", [(3,)], lambda a: a ** 0.5, vals=[[0.0, 4.0, 2.0]]),
    Case("pow_zero_base_reciprocal", [(3,)], lambda a: a ** -1.0, vals=[[0.0, 4.0, -2.0]]),
    Case("pow_zero_base_neg_square", [(3,)], lambda a: a ** -2.0, vals=[[0.0, 4.0, -2.0]]),
    Case("pow_zero_base_fractional", [(4,)], lambda a: a ** 0.3 + a ** 1.5, vals=[[0.0, 4.0, 2.0, 0.25]]),
    Case("pow_zero_base_one", [(3,)], lambda a: a ** 1.0, vals=[[0.0, -4.0, 2.0]]),
    Case("pow_cube", [(3, 4)], lambda a: a ** 3),
    Case("pow_int_exponent_large", [(6,)], lambda a: a ** 7, low=-1.5, high=1.5),
    Case("pow_negative_odd_exponent", [(6,)], lambda a: a ** -3.0, vals=[[-2.0, -0.5, 1.5, 3.0, -1.0, 0.7]]),
    Case("pow_rsqrt", [(3, 4)], lambda a: a ** -0.5, **POS),
    Case("pow_tensor_exp_positive_base", [(3, 4), (3, 4)], lambda a, b: a ** b, low=[0.2, -3.0], high=[3.0, 3.0]),
    Case("pow_large_result", [(4,), (4,)], lambda a, b: a ** b, vals=[[2.0, 10.0, 3.0, 0.5], [20.0, 7.0, -5.0, 30.0]]),
    Case("pow_int_tensors", [(8,), (8,)], lambda a, b: a ** b, dtype="int32",
         vals=[[2, -3, 1, -1, 0, 5, -2, 1], [3, 3, -1, -3, 2, 0, 5, 100]]),
    Case("pow_int_scalar", [(6,)], lambda a: a ** 3, dtype="int32", low=-20, high=20),
    Case("pow_int8_wraps", [(5,)], lambda a: a ** 2, dtype="int8", vals=[[12, -12, 100, 3, -128]]),
    Case("pow_int_float_scalar", [(5,)], lambda a: a ** 0.5, dtype="int32", low=0, high=50),
    Case("pow_f64", [(3, 4), (3, 4)], lambda a, b: a ** b, dtype="float64", low=[0.2, -3.0], high=[3.0, 3.0],
         atol=1e-12, rtol=1e-6, grad_atol=1e-12, grad_rtol=1e-6),
    Case("pow_0d", [(), ()], lambda a, b: a ** b, low=[0.5, -2.0], high=[2.0, 2.0]),
]
