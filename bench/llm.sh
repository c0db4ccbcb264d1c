#!/usr/bin/env bash
# The LLM benchmark: a random-weight model of LLaMA-3.2-1B's shape (16 layers, f32, made once by
# transformers into LLM_BENCH_DIR), run by ferrograd (examples/llama.rs --bench) and PyTorch
# (bench/llm_torch.py, 2 threads) on the same weights: prefill of a 512-token prompt, 128 greedy
# tokens with a KV cache, time to first token, peak RSS. LAYERS=n for a smaller model; DTYPE=bf16
# (or f16) for 16-bit weights.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${BENCH_VENV:-.bench-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet numpy torch transformers
fi
LAYERS="${LAYERS:-16}"
DTYPE="${DTYPE:-f32}"
SUFFIX=$([ "$DTYPE" = f32 ] && echo "" || echo "-$DTYPE")
DIR="${LLM_BENCH_DIR:-${FERROGRAD_CACHE:-$HOME/.cache/ferrograd}/bench/llama-1b-shape-${LAYERS}L$SUFFIX}"
ARGS=(--prompt-len "${PROMPT_LEN:-512}" --tokens "${TOKENS:-128}")
"$VENV/bin/python" bench/llm_torch.py make "$DIR" --layers "$LAYERS" --dtype "$DTYPE"
cargo build --release --example llama
echo "== $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, $(date -u +%F)"
echo "== ferrograd"
./target/release/examples/llama --bench "$DIR" "${ARGS[@]}" | tee /tmp/llm_ferrograd.txt
echo "== PyTorch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)') (2 threads)"
"$VENV/bin/python" bench/llm_torch.py run "$DIR" "${ARGS[@]}" | tee /tmp/llm_torch.txt
echo "== ferrograd / PyTorch"
python3 - <<'PY'
import re
def read(p):
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(prefill|decode|first token|peak rss): ([0-9.]+)", open(p).read(), re.M)}
f, t = read("/tmp/llm_ferrograd.txt"), read("/tmp/llm_torch.txt")
for k in ["prefill", "decode"]:
    print(f"{k}: {f[k] / t[k]:.2f}x PyTorch's speed")
for k in ["first token", "peak rss"]:
    print(f"{k}: {f[k] / t[k]:.2f}x PyTorch's")
PY
