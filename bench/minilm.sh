#!/usr/bin/env bash
# all-MiniLM-L6-v2 (the real weights, scripts/fetch_minilm.py) in ferrograd (examples/bert.rs
# --bench) and PyTorch (bench/minilm_torch.py, 2 threads): warm forward at batch 8x60 and 32x64.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${BENCH_VENV:-.bench-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet numpy torch transformers
fi
DIR="$(python3 scripts/fetch_minilm.py)"
cargo build --release --features tokenizers --example bert
echo "== $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(date -u +%F)"
echo "== ferrograd"
MINILM_DIR="$DIR" ./target/release/examples/bert --bench | tee /tmp/minilm_ferrograd.txt
echo "== PyTorch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)') (2 threads)"
"$VENV/bin/python" bench/minilm_torch.py "$DIR" | tee /tmp/minilm_torch.txt
python3 - <<'PY'
import re
def read(p):
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^minilm (\S+): ([0-9.]+) ms", open(p).read(), re.M)}
f, t = read("/tmp/minilm_ferrograd.txt"), read("/tmp/minilm_torch.txt")
for k in f:
    print(f"minilm {k}: {f[k] / t[k]:.2f}x PyTorch's time")
PY
