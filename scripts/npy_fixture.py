"""NumPy files for tests/npy.rs: every dtype ferrograd holds in C order, Fortran order, big-endian
byte order, a 0-d and an empty array, format version 2.0, and .npz archives (stored and
deflated). The values are the ones `expected()` in tests/npy.rs computes.

    python scripts/npy_fixture.py   # writes tests/fixtures/npy/ (needs numpy)
"""
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "npy"
CODES = ["b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]


def value(code, shape=(3, 4)):
    i = np.arange(int(np.prod(shape))).reshape(shape)
    if code == "b1":
        return i % 3 == 0
    if code[0] == "u":
        return (i * 7).astype(code)
    if code[0] == "i":
        return (i * 5 - 20).astype(code)
    return (i * 0.75 - 2.5).astype(code)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for code in CODES:
        np.save(OUT / f"c_{code}.npy", value(code))
    np.save(OUT / "fortran_f4.npy", np.asfortranarray(value("f4")))
    np.save(OUT / "fortran_f8_3d.npy", np.asfortranarray(value("f8", (2, 3, 4))))
    np.save(OUT / "big_i4.npy", value("i4").astype(">i4"))
    np.save(OUT / "big_f8.npy", value("f8").astype(">f8"))
    np.save(OUT / "scalar.npy", np.float32(3.5))
    np.save(OUT / "empty.npy", np.zeros((0, 3), np.float32))
    with open(OUT / "v2_i2.npy", "wb") as f:
        np.lib.format.write_array(f, value("i2"), version=(2, 0))
    np.savez(OUT / "arrays.npz", a=value("f4"), b=value("i8"))
    np.savez_compressed(OUT / "compressed.npz", a=value("f4"), b=value("i8"))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
