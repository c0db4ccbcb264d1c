#!/usr/bin/env python3
"""Runs the test suite on one device (DEV=CL by default) as parallel jobs, one per core.

On PoCL nearly all the time goes into the driver's per-kernel compile, and a process compiles
one kernel at a time (a realize holds the engine's lock while it compiles and runs), so one
`cargo test` uses one core. This builds the test binaries once, splits them into jobs (each
PyTorch-suite group is a job of its own), and runs the jobs longest first on every core. The
driver's disk cache (POCL_CACHE_DIR) is shared, so a kernel two jobs need is built once.

    python3 scripts/device_suite.py [--dev CL] [--features opencl] [--jobs N]

Exits non-zero when any job fails, after printing that job's output; prints a table of job
times either way.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The test binaries run on the device besides the PyTorch suite, with a rough cost in seconds on
# PoCL (2 cores, 2026-12) so the longest start first. A binary missing here runs last.
BINARIES = {
    "reduce": 130,
    "llm": 64,
    "movement": 56,
    "opts_equivalence": 53,
    "dtypes": 53,
    "fuzz_regressions": 25,
    "beam": 23,
    "opencl": 20,
    "decompositions": 20,
    "jit": 9,
    "casts": 7,
    "gguf": 8,
    "symbolic_shapes": 5,
    "assign": 3,
}
# PyTorch-suite groups left to CPU and INTERP (the sweep repeats every op of the other groups
# on more layouts).
SKIP_GROUPS = {"sweep"}
# Seconds per PyTorch-suite case on PoCL, to order the groups among the binaries, and the
# groups whose kernels cost much more than that (attention's f16 kernels take seconds each).
SECONDS_PER_CASE = 0.46
GROUP_SECONDS = {"attention": 45}


def build(features):
    """Builds the test binaries; returns {test target name: executable path}."""
    names = ["torch_ops", *BINARIES]
    cmd = ["cargo", "test", "--features", features, "--no-run", "--message-format=json"]
    for n in names:
        cmd += ["--test", n]
    out = subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    exes = {}
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            if "test" in msg["target"]["kind"]:
                exes[msg["target"]["name"]] = msg["executable"]
    missing = [n for n in names if n not in exes]
    if missing:
        sys.exit(f"device_suite: cargo built no test binary for {missing}")
    return exes


def jobs(exes):
    """(estimated seconds, name, argv) for every job, longest first."""
    out = []
    for name, secs in BINARIES.items():
        out.append((secs, name, [exes[name]]))
    for fixture in sorted((ROOT / "tests/fixtures/torch").glob("*.json")):
        group = fixture.stem
        if group in SKIP_GROUPS:
            continue
        cases = len(json.loads(fixture.read_text())["cases"])
        secs = GROUP_SECONDS.get(group, cases * SECONDS_PER_CASE)
        out.append((secs, f"torch_ops {group}", [exes["torch_ops"], f"{group}::cpu", "--exact"]))
    return sorted(out, key=lambda j: -j[0])


def run(job, env):
    _, name, argv = job
    start = time.monotonic()
    p = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return name, p.returncode, time.monotonic() - start, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dev", default="CL")
    ap.add_argument("--features", default="opencl")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    exes = build(args.features)
    env = dict(os.environ, DEV=args.dev)
    start = time.monotonic()
    failed = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for name, rc, secs, output in pool.map(lambda j: run(j, env), jobs(exes)):
            summary = [l for l in output.splitlines() if l.startswith(("test result:", "torch suite,"))]
            print(f"{secs:7.1f} s  {'ok  ' if rc == 0 else 'FAIL'}  {name}: {'; '.join(summary)}", flush=True)
            if rc != 0:
                failed.append((name, output))
    for name, output in failed:
        print(f"\n===== {name} failed on DEV={args.dev}:\n{output}")
    print(f"device_suite: DEV={args.dev}, {args.jobs} jobs at a time, {time.monotonic() - start:.0f} s, "
          f"{len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
