#!/usr/bin/env bash
# CUDA checks that need no GPU (for CI): NVRTC from the `nvidia-cuda-nvrtc-cu12` wheel compiles
# every kernel the code generator writes for CUDA (tests/cuda_nvrtc.rs), and the CUDA device
# fails cleanly on a machine without a GPU (tests/cuda.rs).
#
# The wheel is installed once into a cache folder (about 230 MB unpacked); NVRTC_DIR overrides it.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${NVRTC_VERSION:-12.9.86}"
dir="${NVRTC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferrograd/nvrtc-cu12-$version}"
lib="$dir/nvidia/cuda_nvrtc/lib"
if [ ! -e "$lib/libnvrtc.so.12" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dir" \
    "nvidia-cuda-nvrtc-cu12==$version"
fi
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Fail instead of skipping when NVRTC cannot be loaded after all.
FERROGRAD_REQUIRE_NVRTC=1 cargo test --features cuda --test cuda_nvrtc --test cuda
