"""Writes tests/fixtures/gguf/quants.gguf with the `gguf` package's writer: one tensor per GGML
type ferrograd reads, each followed by `<name>.ref`, the same values dequantized by the `gguf`
package's own dequantizer (float32), for tests/gguf.rs. Also metadata of every value type.

    pip install gguf numpy
    python3 scripts/gguf_fixtures.py

Q4_0..Q8_0 hold real quantizations of random floats (the package can quantize them); the
K-quants (which it cannot quantize) hold random blocks whose f16 scales are set to small
finite values, so every bit pattern of the packed fields occurs.
"""

import os

import numpy as np
from gguf import GGUFWriter, GGMLQuantizationType as T, quants

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "gguf")

# (type, byte offsets of the f16 scale fields inside a block) for random-block types.
K_QUANTS = [(T.Q2_K, [80, 82]), (T.Q3_K, [108]), (T.Q4_K, [0, 2]), (T.Q5_K, [0, 2]), (T.Q6_K, [208])]
QUANTIZABLE = [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0]


def random_blocks(rng, qtype, shape, scale_offsets):
    block, block_bytes = quants.GGML_QUANT_SIZES[qtype]
    rows = int(np.prod(shape[:-1]))
    n = rows * shape[-1] // block
    raw = rng.integers(0, 256, size=(n, block_bytes), dtype=np.uint8)
    for off in scale_offsets:
        scales = rng.uniform(0.001, 0.1, size=n).astype(np.float16)
        raw[:, off:off + 2] = scales.view(np.uint8).reshape(n, 2)
    return raw.reshape(*shape[:-1], shape[-1] // block * block_bytes)


def main():
    rng = np.random.default_rng(0)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "quants.gguf")
    w = GGUFWriter(path, "ferrograd-test")
    w.add_uint8("test.u8", 200)
    w.add_int8("test.i8", -7)
    w.add_uint16("test.u16", 60000)
    w.add_int16("test.i16", -30000)
    w.add_uint32("test.u32", 4000000000)
    w.add_int32("test.i32", -2000000000)
    w.add_uint64("test.u64", 2**40 + 3)
    w.add_int64("test.i64", -(2**40) - 3)
    w.add_float32("test.f32", 0.25)
    w.add_float64("test.f64", 1e-300)
    w.add_bool("test.bool", True)
    w.add_string("test.string", "ferrograd ✓")
    w.add_array("test.strings", ["a", "bc", ""])
    w.add_array("test.ints", [1, 2, 3])

    def add(name, qtype, raw):
        w.add_tensor(name, raw, raw_dtype=qtype)
        ref = quants.dequantize(raw, qtype).astype(np.float32)
        w.add_tensor(name + ".ref", ref, raw_dtype=T.F32)

    shape = (3, 512)
    for qtype in QUANTIZABLE:
        x = rng.standard_normal(shape).astype(np.float32)
        add(qtype.name.lower(), qtype, quants.quantize(x, qtype))
    for qtype, offsets in K_QUANTS:
        add(qtype.name.lower(), qtype, random_blocks(rng, qtype, shape, offsets))
    # A 3-d tensor: shapes come back in PyTorch's order.
    x = rng.standard_normal((2, 3, 64)).astype(np.float32)
    add("q8_0_3d", T.Q8_0, quants.quantize(x, T.Q8_0))
    x = rng.standard_normal((5, 32)).astype(np.float32)
    add("f16", T.F16, quants.quantize(x, T.F16))
    add("bf16", T.BF16, quants.quantize(x, T.BF16))
    w.add_tensor("f32", x, raw_dtype=T.F32)
    w.add_tensor("i32", np.arange(-3, 3, dtype=np.int32).reshape(2, 3), raw_dtype=T.I32)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
