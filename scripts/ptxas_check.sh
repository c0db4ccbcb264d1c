#!/usr/bin/env bash
# The PTX renderer's check that needs no GPU (for CI): NVIDIA's ptxas, from the
# `nvidia-cuda-nvcc-cu12` wheel, assembles every kernel the PTX renderer writes for the
# representative set, for sm_80 and sm_90 (tests/ptx_ptxas.rs).
#
# The wheel is installed once into a cache folder; PTXAS names another ptxas.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${NVCC_VERSION:-12.9.86}"
dir="${NVCC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferrograd/nvcc-cu12-$version}"
if [ -z "${PTXAS:-}" ]; then
  PTXAS="$dir/nvidia/cuda_nvcc/bin/ptxas"
  if [ ! -x "$PTXAS" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dir" \
      "nvidia-cuda-nvcc-cu12==$version"
  fi
fi
export PTXAS
# Fail instead of skipping when ptxas cannot run after all.
FERROGRAD_REQUIRE_PTXAS=1 cargo test --test ptx_ptxas
