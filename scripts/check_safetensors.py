"""Checks that the Python `safetensors` package reads the file ferrograd writes
(tests/fixtures/safetensors/from_ferrograd.safetensors, made and kept current by
`cargo test --test safetensors`) and that every value is what tests/safetensors.rs put in.

    pip install safetensors numpy
    python scripts/check_safetensors.py [path]

Exit status 0 when everything matches, 1 (with a list of the problems) otherwise.
"""

import os
import sys

import numpy as np
from safetensors import deserialize, safe_open

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(ROOT, "tests", "fixtures", "safetensors", "from_ferrograd.safetensors")

# name -> (safetensors dtype, numpy array of the expected values); the same constants as
# `ferrograd_dict()` in tests/safetensors.rs.
EXPECTED = {
    "f32": ("F32", np.array([[1.5, -2.25, 3.0], [0.0, 1e-3, -65504.0]], dtype=np.float32)),
    "f64": ("F64", np.array([0.1, -1e300, 2.5], dtype=np.float64)),
    "f16": ("F16", np.array([[0.5, -1.0], [65504.0, 6.103515625e-05]], dtype=np.float16)),
    "bf16": ("BF16", np.array([1.0, -0.5, 3.140625, 256.0], dtype=np.float32)),
    "i8": ("I8", np.array([-128, 5, 127], dtype=np.int8)),
    "i16": ("I16", np.array([-32768, 32767], dtype=np.int16)),
    "i32": ("I32", np.arange(-6, 6, dtype=np.int32).reshape(2, 3, 2)),
    "i64": ("I64", np.array([-(2**62), 0, 2**40 + 7, -1], dtype=np.int64)),
    "u8": ("U8", np.array([0, 7, 255], dtype=np.uint8)),
    "u16": ("U16", np.array([65535, 1], dtype=np.uint16)),
    "u32": ("U32", np.array([4294967295, 2], dtype=np.uint32)),
    "u64": ("U64", np.array([18446744073709551615, 3], dtype=np.uint64)),
    "bool": ("BOOL", np.array([[True, False, True]], dtype=np.bool_)),
    "scalar": ("F32", np.array(42.0, dtype=np.float32)),
    "empty": ("F32", np.zeros((2, 0), dtype=np.float32)),
    "layer.0.weight": ("F32", np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)),
    # Computed lazily in Rust (arange * 2 + 1) and a transposed view: saved in row-major order.
    "computed": ("F32", np.array([[1.0, 3.0, 5.0], [7.0, 9.0, 11.0]], dtype=np.float32)),
    "transposed": ("F32", np.array([[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]], dtype=np.float32)),
}
METADATA = {"format": "ferrograd", "note": "written by tests/safetensors.rs"}


def bf16_to_f32(raw):
    bits = np.frombuffer(bytes(raw), dtype="<u2").astype(np.uint32) << 16
    return bits.view(np.float32)


def check(path):
    problems = []
    # 1. The package's own parser and validator: header, dtypes, shapes, offsets, raw bytes.
    with open(path, "rb") as f:
        parsed = {name: info for name, info in deserialize(f.read())}
    if set(parsed) != set(EXPECTED):
        problems.append(f"tensor names {sorted(parsed)} != {sorted(EXPECTED)}")
    for name, (dtype, want) in EXPECTED.items():
        info = parsed.get(name)
        if info is None:
            continue
        if info["dtype"] != dtype:
            problems.append(f"{name}: dtype {info['dtype']} != {dtype}")
        if list(info["shape"]) != list(want.shape):
            problems.append(f"{name}: shape {info['shape']} != {list(want.shape)}")
        if dtype == "BF16":
            have = bf16_to_f32(info["data"]).reshape(info["shape"])
            if not np.array_equal(have, want):
                problems.append(f"{name}: values {have.tolist()} != {want.tolist()}")
    # 2. The loader users call (numpy has no bfloat16, which part 1 covers).
    with safe_open(path, framework="np") as f:
        if f.metadata() != METADATA:
            problems.append(f"metadata {f.metadata()} != {METADATA}")
        for name, (dtype, want) in EXPECTED.items():
            if dtype == "BF16" or name not in parsed:
                continue
            have = f.get_tensor(name)
            if have.dtype != want.dtype or have.shape != want.shape or not np.array_equal(have, want):
                problems.append(f"{name}: got {have.dtype} {have.shape} {have.tolist()}, want {want.dtype} {want.shape} {want.tolist()}")
    return problems


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    try:
        problems = check(path)
    except Exception as e:  # a file the package rejects is a failure too
        problems = [f"the safetensors package could not read it: {type(e).__name__}: {e}"]
    if problems:
        print(f"FAIL {path}:")
        for p in problems:
            print(f"  {p}")
        sys.exit(1)
    print(f"OK {path}: {len(EXPECTED)} tensors match")


if __name__ == "__main__":
    main()
