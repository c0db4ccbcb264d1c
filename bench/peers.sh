#!/usr/bin/env bash
# Sets up a Python virtual environment with NumPy, PyTorch and tinygrad 0.14.0 (once), then runs
# the benchmarks through ferrograd and each peer and prints one table (bench/peers.py).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${BENCH_VENV:-.bench-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet numpy torch tinygrad==0.14.0
fi
# NumPy's OpenBLAS runs at full speed only without these (see the machine notes).
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$VENV/bin/python" bench/peers.py
