"""Checks that NumPy reads the files ferrograd writes (tests/fixtures/npy/from_ferrograd.npz and
from_ferrograd_fortran.npy, made and kept current by `cargo test --test npy`) and that every
value is what tests/npy.rs put in.

    python scripts/check_npy.py   # needs numpy; exit status 1 with the problems listed
"""
import pathlib
import sys

import numpy as np

DIR = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "npy"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from npy_fixture import CODES, value  # noqa: E402  (the same values the reading test uses)

problems = []
with np.load(DIR / "from_ferrograd.npz", allow_pickle=False) as z:
    want = {code: value(code) for code in CODES}
    want["transposed"] = value("f4").T
    want["scalar"] = np.array(3.5, np.float32)
    if sorted(z.files) != sorted(want):
        problems.append(f"arrays {sorted(z.files)} != {sorted(want)}")
    for name, w in want.items():
        if name not in z.files:
            continue
        got = z[name]
        if got.dtype != w.dtype or got.shape != w.shape or not np.array_equal(got, w):
            problems.append(f"{name}: got {got.dtype} {got.shape} {got.tolist()}, want {w.dtype} {w.shape} {w.tolist()}")
f = np.load(DIR / "from_ferrograd_fortran.npy", allow_pickle=False)
w = value("f8", (2, 3, 4))
if not (f.flags["F_CONTIGUOUS"] and f.shape == w.shape and np.array_equal(f, w)):
    problems.append(f"from_ferrograd_fortran.npy: Fortran {f.flags['F_CONTIGUOUS']}, {f.shape}, {f.tolist()}")
print("\n".join(problems) if problems else "numpy reads ferrograd's .npy and .npz files: all values match")
sys.exit(1 if problems else 0)
