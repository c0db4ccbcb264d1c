"""Writes the PyTorch fixtures of the op suite: tests/fixtures/torch/<group>.json.

Usage: python scripts/torch_fixtures/gen.py [group ...]   (no group: every cases_<group>.py here)

Each group module defines CASES = [Case(...), ...]; every case runs in PyTorch (CPU, one thread)
and its inputs, output and gradients are written deterministically, one case per line, so a
re-run without changes gives the same bytes. See scripts/TORCH_SUITE_FORMAT.md.
"""

import importlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(ROOT, "tests", "fixtures", "torch")

sys.path.insert(0, HERE)

import torch  # noqa: E402


def all_groups():
    return sorted(f[len("cases_"):-len(".py")] for f in os.listdir(HERE)
                  if f.startswith("cases_") and f.endswith(".py"))


def generate(group):
    mod = importlib.import_module(f"cases_{group}")
    cases = mod.CASES
    names = [c.name for c in cases]
    dups = sorted({n for n in names if names.count(n) > 1})
    assert not dups, f"group {group}: duplicate case names {dups}"
    records = []
    for c in cases:
        torch.manual_seed(0)
        try:
            records.append(c.run())
        except Exception as e:
            raise RuntimeError(f"group {group}, case {c.name}: {e}") from e
    lines = [json.dumps(r, separators=(",", ":"), allow_nan=False) for r in records]
    text = '{"group":' + json.dumps(group) + ',"cases":[\n' + ",\n".join(lines) + "\n]}\n"
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, f"{group}.json")
    with open(path, "w") as f:
        f.write(text)
    print(f"{group}: {len(records)} cases -> {os.path.relpath(path, ROOT)} ({len(text)} bytes)")


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    groups = sys.argv[1:] or all_groups()
    for g in groups:
        generate(g)


if __name__ == "__main__":
    main()
