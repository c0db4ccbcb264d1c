#!/usr/bin/env bash
# Sets up a Python virtual environment with NumPy, PyTorch and tinygrad 0.14.0 (once), then runs
# the benchmarks through ferrograd and each peer and prints one table (bench/peers.py), then the
# whole beautiful_mnist run in ferrograd and PyTorch (bench/mnist_torch.py). BENCH_VENV reuses a
# virtual environment; MNIST_DIR defaults to ../shared/data/mnist.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${BENCH_VENV:-.bench-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet numpy torch tinygrad==0.14.0
fi
# tinygrad's CPU device runs `clang`; Debian ships it as clang-NN only.
if ! command -v clang >/dev/null; then
  versioned="$(compgen -c clang- | grep -E '^clang-[0-9]+$' | sort -V | tail -1 || true)"
  if [ -n "$versioned" ]; then
    shim="$(mktemp -d)"
    ln -s "$(command -v "$versioned")" "$shim/clang"
    export PATH="$shim:$PATH"
  fi
fi
export MNIST_DIR="${MNIST_DIR:-$(cd .. && pwd)/shared/data/mnist}"
# NumPy's OpenBLAS runs at full speed only without these (see the machine notes).
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$VENV/bin/python" bench/peers.py
