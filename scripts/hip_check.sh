#!/usr/bin/env bash
# AMD checks that need no GPU (for CI): hiprtc from Debian's ROCm packages (the compiler the AMD
# device uses, clang's amdgcn-amd-amdhsa target inside comgr) compiles every kernel the code
# generator writes for AMD GPUs to code objects for RDNA 2 and CDNA 2 (tests/hip_compile.rs), and
# the AMD device fails cleanly on a machine without a GPU (tests/hip.rs).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! dpkg -s libamdhip64-5 libhiprtc-builtins5 >/dev/null 2>&1; then
  apt-get update -q && apt-get install -y -q libamdhip64-5 libhiprtc-builtins5
fi
# Fail instead of skipping when hiprtc cannot be loaded after all.
FERROGRAD_REQUIRE_HIPRTC=1 cargo test --features hip --test hip_compile --test hip
