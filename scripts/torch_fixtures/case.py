"""One PyTorch-checked op case: its inputs, its computation and its fixture record.

See scripts/TORCH_SUITE_FORMAT.md for the contract the Rust harness (tests/torch_ops.rs) reads.
"""

import math
import re
import zlib

import numpy as np
import torch

DTYPES = {
    "bool": torch.bool,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "uint16": torch.uint16,
    "uint32": torch.uint32,
    "uint64": torch.uint64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
NAME_RE = re.compile(r"^[a-z0-9_]+$")


def _per_input(value, n, what):
    """A scalar applies to every input; a list gives one value per input."""
    if isinstance(value, (list, tuple)):
        assert len(value) == n, f"{what}: {len(value)} values for {n} inputs"
        return list(value)
    return [value] * n


class Case:
    """A PyTorch computation on generated inputs, checked against ferrograd by the Rust harness.

    `low`, `high` and `dtypes` may be one value for all inputs or a list with one per input;
    `vals` is a list with one entry per input: explicit values (nested or flat) or None (random).
    """

    def __init__(self, name, shapes, fn, low=-2.0, high=2.0, dtype="float32", grad=True, atol=1e-6,
                 rtol=1e-3, grad_atol=1e-4, grad_rtol=1e-3, vals=None, dtypes=None):
        assert NAME_RE.match(name), f"case name {name!r} is not snake_case"
        self.name = name
        self.shapes = [tuple(s) for s in shapes]
        self.fn = fn
        n = len(self.shapes)
        self.lows = _per_input(low, n, name)
        self.highs = _per_input(high, n, name)
        self.dtypes = _per_input(dtypes if dtypes is not None else dtype, n, name)
        for d in self.dtypes:
            assert d in DTYPES, f"{name}: unknown dtype {d!r}"
        self.vals = vals if vals is not None else [None] * n
        assert len(self.vals) == n, f"{name}: {len(self.vals)} vals for {n} inputs"
        self.grad = grad
        self.atol, self.rtol, self.grad_atol, self.grad_rtol = atol, rtol, grad_atol, grad_rtol

    def inputs(self):
        """The input tensors: explicit `vals`, else uniform draws from one RandomState seeded by
        crc32(name), taken in input order (floats: uniform in [low, high); ints: floor of that;
        bools: the uniform draw > 0)."""
        rng = np.random.RandomState(zlib.crc32(self.name.encode()))
        out = []
        for shape, lo, hi, dt, v in zip(self.shapes, self.lows, self.highs, self.dtypes, self.vals):
            tdt = DTYPES[dt]
            if v is not None:
                arr = np.array(v, dtype=np.float64 if tdt.is_floating_point else object).reshape(shape)
                if tdt == torch.bool:
                    t = torch.tensor(arr.astype(bool).tolist(), dtype=torch.bool).reshape(shape)
                elif tdt.is_floating_point:
                    t = torch.tensor(arr, dtype=torch.float64).to(tdt)
                else:
                    t = torch.tensor([int(x) for x in arr.reshape(-1)], dtype=torch.int64).to(tdt).reshape(shape)
            else:
                u = rng.uniform(lo, hi, size=shape)
                if tdt == torch.bool:
                    t = torch.tensor(u > 0, dtype=torch.bool)
                elif tdt.is_floating_point:
                    t = torch.tensor(u, dtype=torch.float64).to(tdt)
                else:
                    t = torch.tensor(np.floor(u).astype(np.int64), dtype=torch.int64).to(tdt)
            out.append(t.reshape(shape).contiguous())
        return out

    def run(self):
        """Runs the case in PyTorch; returns its fixture record (a dict in the JSON layout)."""
        xs = self.inputs()
        leaves = [x.clone().requires_grad_(self.grad and x.dtype.is_floating_point) for x in xs]
        out = self.fn(*leaves)
        assert isinstance(out, torch.Tensor), f"{self.name}: fn returned {type(out).__name__}, not a Tensor"
        grads = [None] * len(xs)
        if self.grad and out.dtype.is_floating_point and any(x.requires_grad for x in leaves):
            if out.requires_grad:
                out.sum().backward()
            grads = [(x.grad if x.grad is not None else torch.zeros_like(x)) if x.requires_grad else None
                     for x in leaves]
        return {
            "name": self.name,
            "inputs": [encode(x) for x in xs],
            "output": encode(out.detach()),
            "grads": [None if g is None else encode(g) for g in grads],
            "atol": self.atol,
            "rtol": self.rtol,
            "grad_atol": self.grad_atol,
            "grad_rtol": self.grad_rtol,
        }


SHORT_TYPES = {torch.float32: np.float32, torch.float16: np.float16}


def _short(v, np_type):
    """The shortest decimal that reads back as `v` in `np_type`, even when the reader's f64
    parse is one ulp off (then rounded to the dtype); else `v` itself (exact in f64)."""
    d = float(str(np_type(v)))
    near = [d, math.nextafter(d, math.inf), math.nextafter(d, -math.inf)]
    return d if all(float(np_type(x)) == v for x in near) else v


def _float(v, np_type=None):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return _short(v, np_type) if np_type is not None else v


def encode(t):
    """A tensor as `{"shape", "dtype", "data"}` with flat row-major data (float32 and float16
    values as their shortest decimals: the reader rounds what it parses to the dtype)."""
    dt = DTYPE_NAMES[t.dtype]
    flat = t.detach().contiguous().reshape(-1)
    if t.dtype == torch.bool:
        data = [bool(v) for v in flat.tolist()]
    elif t.dtype.is_floating_point:
        np_type = SHORT_TYPES.get(t.dtype)
        data = [_float(float(v), np_type) for v in flat.double().tolist()]
    else:
        data = [int(v) for v in flat.tolist()]
    return {"shape": list(t.shape), "dtype": dt, "data": data}
