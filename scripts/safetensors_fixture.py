"""Writes tests/fixtures/safetensors/from_python.safetensors with the Python `safetensors`
package (its torch writer, for bfloat16), for tests/safetensors.rs, which checks the values
against constants of its own.

    pip install safetensors numpy torch
    python scripts/safetensors_fixture.py

Every value is exactly representable in its dtype, so the Rust test compares bit for bit.
"""

import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "safetensors", "from_python.safetensors")


def tensors():
    return {
        "f32": np.array([[1.5, -2.25, 3.0], [0.0, 1e-3, -65504.0]], dtype=np.float32),
        "f64": np.array([0.1, -1e300, 2.5], dtype=np.float64),
        "f16": np.array([[0.5, -1.0], [65504.0, 6.103515625e-05]], dtype=np.float16),
        "i64": np.array([-(2**62), 0, 2**40 + 7, -1], dtype=np.int64),
        "i32": np.arange(-6, 6, dtype=np.int32).reshape(2, 3, 2),
        "i16": np.array([-32768, 32767], dtype=np.int16),
        "i8": np.array([-128, 5, 127], dtype=np.int8),
        "u8": np.array([0, 7, 255], dtype=np.uint8),
        "u16": np.array([65535, 1], dtype=np.uint16),
        "u32": np.array([4294967295, 2], dtype=np.uint32),
        "u64": np.array([18446744073709551615, 3], dtype=np.uint64),
        "bool": np.array([[True, False, True]], dtype=np.bool_),
        "scalar": np.array(42.0, dtype=np.float32),  # 0-d
        "empty": np.zeros((2, 0), dtype=np.float32),
        "layer.0.weight": np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32),
    }


def main():
    import torch
    from safetensors import safe_open
    from safetensors.torch import save_file

    t = {k: torch.from_numpy(v) for k, v in tensors().items()}
    # numpy has no bfloat16; torch does. These values are exact in bfloat16.
    t["bf16"] = torch.tensor([1.0, -0.5, 3.140625, 256.0], dtype=torch.bfloat16)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    save_file(t, OUT, metadata={"format": "pt", "written_by": "scripts/safetensors_fixture.py"})
    # Read back with the package as a self-check.
    with safe_open(OUT, framework="pt") as f:
        for k in f.keys():
            assert torch.equal(f.get_tensor(k), t[k]), k
        assert set(f.keys()) == set(t)
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes, {len(t)} tensors)")


if __name__ == "__main__":
    main()
