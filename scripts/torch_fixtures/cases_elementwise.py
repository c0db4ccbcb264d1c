"""Elementwise ops: binary, unary, comparisons, where, cast, pow, scalar operands."""

from case import Case

CASES = [
    Case("add", [(3, 4), (3, 4)], lambda a, b: a + b),
    Case("int_add", [(5,), (5,)], lambda a, b: a + b, dtype="int32", low=-10, high=10),
    Case("lt", [(4,), (4,)], lambda a, b: a < b),
]
