"""Movement ops: reshape, permute, expand, pad, shrink, flip, squeeze and chains."""

from case import Case

CASES = [
    Case("reshape", [(2, 6)], lambda x: x.reshape(3, 4)),
]
