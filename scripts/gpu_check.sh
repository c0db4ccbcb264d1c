#!/usr/bin/env bash
# The CUDA device on a machine with an NVIDIA GPU: the CUDA test suite (every case against the
# interpreter), the op suite with DEV=CUDA, and bench_core on CUDA and on the CPU, then a table.
#
#   scripts/gpu_check.sh        build with cargo here (needs the crates: network or a filled
#                               ~/.cargo), then run everything
#   scripts/gpu_check.sh pack   on a machine with the crates but no GPU: build the binaries and
#                               pack them, with NVRTC from the wheel, into target/gpu-check/
#                               (under 64 MiB, to carry to a GPU machine that has no network)
#   scripts/gpu_check.sh run    on the GPU machine: run what `pack` made, without cargo
#
# NVRTC is looked for on the system (ldconfig, CUDA_HOME, /usr/local/cuda, Python's nvidia
# packages), then in the packed copy, then installed from PyPI if the network allows.
# GPU_CHECK_TIMEOUT bounds each step (seconds, default 240).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode="${1:-all}"
out="$root/target/gpu-check"
logs="$out/logs"
step_timeout="${GPU_CHECK_TIMEOUT:-240}"
# Test binaries that need neither cargo nor files found through the build's absolute paths.
suites=(cuda cuda_nvrtc ops reduce movement creation dtypes random_ops gradcheck fusion assign set_index jit
  gather_collapse kernel_counts determinism symbolic)

have_nvrtc() {
  ldconfig -p 2>/dev/null | grep -qE 'libnvrtc\.so(\.1[12])? ' && return 0
  local d f
  for d in ${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH//:/ }}; do
    for f in "$d"/libnvrtc.so "$d"/libnvrtc.so.11 "$d"/libnvrtc.so.12; do
      [ -e "$f" ] && return 0
    done
  done
  return 1
}

# Puts a folder holding libnvrtc on LD_LIBRARY_PATH. cudarc looks for libnvrtc.so, .so.12, .so.11
# (not .so.13), so a CUDA 13 NVRTC gets a libnvrtc.so link in a folder of its own.
setup_nvrtc() {
  have_nvrtc && { echo "NVRTC: on the library path"; return 0; }
  local cands=() d f
  [ -n "${CUDA_HOME:-}" ] && cands+=("$CUDA_HOME/lib64")
  cands+=(/usr/local/cuda/lib64 /usr/local/cuda-*/lib64 /usr/local/cuda/targets/x86_64-linux/lib)
  for d in $(python3 -c 'import site,sys; print(" ".join(site.getsitepackages()+[site.getusersitepackages()]))' 2>/dev/null); do
    cands+=("$d/nvidia/cuda_nvrtc/lib" "$d/nvidia/cu13/lib")
  done
  cands+=("$out/nvrtc" "${XDG_CACHE_HOME:-$HOME/.cache}"/ferrograd/nvrtc-cu12-*/nvidia/cuda_nvrtc/lib)
  if [ ! -d "$out/nvrtc" ] && [ -f "$out/nvrtc.tar.xz" ]; then
    mkdir -p "$out/nvrtc" && tar -C "$out/nvrtc" -xJf "$out/nvrtc.tar.xz"
  fi
  for d in "${cands[@]}"; do
    f=$(ls "$d"/libnvrtc.so.1[0-9] "$d"/libnvrtc.so 2>/dev/null | head -1)
    [ -n "$f" ] || continue
    case "$f" in
      *.so.11 | *.so.12 | *.so) export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
      *)
        mkdir -p "$out/nvrtc-link" && ln -sf "$f" "$out/nvrtc-link/libnvrtc.so"
        export LD_LIBRARY_PATH="$out/nvrtc-link:$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        ;;
    esac
    echo "NVRTC: $f"
    return 0
  done
  local dir="${XDG_CACHE_HOME:-$HOME/.cache}/ferrograd/nvrtc-cu12-12.9.86"
  if python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dir" \
    "nvidia-cuda-nvrtc-cu12==12.9.86" 2>/dev/null; then
    export LD_LIBRARY_PATH="$dir/nvidia/cuda_nvrtc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "NVRTC: installed into $dir"
    return 0
  fi
  echo "NVRTC not found: install the CUDA toolkit or nvidia-cuda-nvrtc-cu12, or run '$0 pack' elsewhere" >&2
  return 1
}

# The newest built executable of test target $1 (release profile).
test_binary() {
  ls -t "$root"/target/release/deps/"$1"-* 2>/dev/null | grep -E "/$1-[0-9a-f]+$" | head -1
}

build() {
  cargo test --release --features cuda --no-run "${suites[@]/#/--test=}" &&
    cargo build --release --features cuda --example bench_core
}

pack() {
  build || exit 1
  rm -rf "$out" && mkdir -p "$out/bin"
  local s b
  for s in "${suites[@]}"; do
    b=$(test_binary "$s") && [ -n "$b" ] && cp "$b" "$out/bin/$s"
  done
  cp target/release/examples/bench_core "$out/bin/bench_core"
  strip "$out"/bin/* 2>/dev/null || true
  local lib
  lib=$(ls -d "${XDG_CACHE_HOME:-$HOME/.cache}"/ferrograd/nvrtc-cu12-*/nvidia/cuda_nvrtc/lib 2>/dev/null | head -1)
  if [ -z "$lib" ]; then
    python3 -m pip install --quiet --disable-pip-version-check --no-deps \
      --target "${XDG_CACHE_HOME:-$HOME/.cache}/ferrograd/nvrtc-cu12-12.9.86" "nvidia-cuda-nvrtc-cu12==12.9.86" || exit 1
    lib="${XDG_CACHE_HOME:-$HOME/.cache}/ferrograd/nvrtc-cu12-12.9.86/nvidia/cuda_nvrtc/lib"
  fi
  echo "packing NVRTC from $lib (xz, a few minutes)"
  tar -C "$lib" -cf - libnvrtc.so.12 $(cd "$lib" && ls libnvrtc-builtins.so.*) | xz -9 -T0 >"$out/nvrtc.tar.xz"
  tar -C "$out" -cf - bin | xz -9 -T0 >"$out/bin.tar.xz" && rm -rf "$out/bin"
  du -sh "$out"
  echo "carry target/gpu-check to the GPU machine and run: bash scripts/gpu_check.sh run"
}

results=()
# run NAME CMD...: runs a step with a timeout, logs it, and records a table row.
run_step() {
  local name="$1"
  shift
  local log="$logs/$name.log" t0 rc summary
  t0=$(date +%s)
  timeout "$step_timeout" "$@" >"$log" 2>&1
  rc=$?
  summary=$(grep -E '^test result:' "$log" | tail -1 | sed -E 's/^test result: ([a-zA-Z]+)\. ([0-9]+) passed; ([0-9]+) failed.*/\1: \2 passed, \3 failed/')
  [ $rc -eq 124 ] && summary="TIMEOUT after ${step_timeout}s"
  [ -z "$summary" ] && summary="exit $rc"
  results+=("$(printf '%-22s %-34s %5ss' "$name" "$summary" $(($(date +%s) - t0)))")
  if [ $rc -ne 0 ]; then
    echo "--- $name failed (exit $rc); last lines of $log:"
    grep -E 'panicked|FAILED|failed|error' "$log" | head -15
  fi
}

check() {
  local bin="$1"
  mkdir -p "$logs"
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "nvidia-smi: not found"
  setup_nvrtc || exit 1
  if [ "$bin" = cargo ]; then
    echo "== build (release, --features cuda)"
    build >"$logs/build.log" 2>&1 || {
      tail -30 "$logs/build.log"
      exit 1
    }
  fi
  exe() { if [ "$bin" = cargo ]; then test_binary "$1"; else echo "$out/bin/$1"; fi; }
  local opened
  opened=$(DEBUG=1 DEV=CUDA FERROGRAD_DEV_CHILD=1 "$(exe cuda)" --exact dev_env_child --nocapture 2>&1 | grep -E 'CUDA|error' | head -3)
  echo "== CUDA: $opened"
  run_step "cuda (vs INTERP)" "$(exe cuda)" --test-threads=1
  run_step "cuda_nvrtc" env FERROGRAD_REQUIRE_NVRTC=1 "$(exe cuda_nvrtc)"
  local s
  for s in "${suites[@]:2}"; do
    [ -x "$(exe "$s")" ] && run_step "DEV=CUDA $s" env DEV=CUDA "$(exe "$s")" --test-threads=4
  done
  # NV: the same GPU with the PTX renderer's kernels.
  for s in ops reduce dtypes fusion jit; do
    [ -x "$(exe "$s")" ] && run_step "DEV=NV $s" env DEV=NV "$(exe "$s")" --test-threads=4
  done
  local bench
  bench=$(if [ "$bin" = cargo ]; then echo "$root/target/release/examples/bench_core"; else echo "$out/bin/bench_core"; fi)
  run_step "bench_core CUDA" env DEV=CUDA "$bench"
  # TinyJit's replay step by step, for the before/after of CUDA graphs.
  run_step "bench_core CUDA, no graphs" env DEV=CUDA JIT_GRAPH=0 "$bench"
  run_step "bench_core CPU" env DEV=CPU "$bench"

  echo
  echo "== results"
  printf '%-22s %-34s %6s\n' check result time
  printf '%s\n' "${results[@]}"
  echo
  echo "== bench_core (CUDA, then CPU)"
  grep -E '^(device|framework|cached|TinyJit|\(\()' "$logs/bench_core CUDA.log" "$logs/bench_core CPU.log" 2>/dev/null |
    sed -E 's#^.*/bench_core ([A-Z]+)\.log:#\1  #'
  grep -E '^TinyJit' "$logs/bench_core CUDA, no graphs.log" 2>/dev/null | sed -E 's#^#CUDA (JIT_GRAPH=0)  #'
  echo "logs: $logs"
}

case "$mode" in
  all) check cargo ;;
  pack) pack ;;
  run)
    [ -f "$out/bin.tar.xz" ] || {
      echo "no $out/bin.tar.xz: run '$0 pack' first" >&2
      exit 1
    }
    [ -d "$out/bin" ] || tar -C "$out" -xJf "$out/bin.tar.xz"
    check packed
    ;;
  *)
    echo "usage: $0 [all|pack|run]" >&2
    exit 2
    ;;
esac
