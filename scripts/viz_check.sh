#!/usr/bin/env bash
# VIZ in a real browser (CI's "VIZ" phase): runs examples/viz with VIZ=1, loads the page it serves
# in headless Chromium and checks what the page's script put there (scripts/viz_check.py), then
# saves screenshots under target/viz/. Installs Debian's chromium when it is missing. Arguments
# go to `cargo build` (CI passes the features its examples were built with, so nothing rebuilds).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -q && apt-get install -y -q chromium
fi
cargo build --release "$@" --example viz
out=target/viz
mkdir -p "$out"
VIZ=1 VIZ_PORT=0 ./target/release/examples/viz >"$out/stdout.txt" 2>"$out/stderr.txt" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
# The page is served once the example's work is done (its kernels compiled and run).
addr=""
for _ in $(seq 600); do
  addr="$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$out/stderr.txt" || true)"
  [ -n "$addr" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.2
done
if [ -z "$addr" ]; then
  echo "viz_check: examples/viz printed no page address"
  cat "$out/stdout.txt" "$out/stderr.txt"
  exit 1
fi
python3 scripts/viz_check.py "$addr" "$out"
