"""Reductions (sum, max, min, mean, prod) and matmul/dot."""

from case import Case

CASES = [
    Case("sum_all", [(3, 4)], lambda x: x.sum()),
]
