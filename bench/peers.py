"""The work of `cargo run --release --example bench`, run through NumPy, PyTorch and tinygrad, then
one table: each benchmark, ferrograd, each peer, and ferrograd's ratio to the best peer and to
the machine limit (FMA peak for compute, STREAM triad for memory). Run by bench/peers.sh."""
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def best_of(reps, f):
    f()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


MNIST_STEP = "beautiful_mnist train step, batch 512"


def torch_mnist_step():
    import torch
    import torch.nn.functional as F
    from mnist_torch import Model  # the same model as the full run (bench/mnist_torch.py)

    model = Model()
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    x, y = torch.rand(512, 1, 28, 28), torch.randint(0, 10, (512,))

    def step():
        with torch.enable_grad():
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            loss.item()

    return 512 / best_of(5, step)


def tinygrad_mnist_step():
    from tinygrad import Tensor, TinyJit, nn

    class Model:
        def __init__(self):
            self.l1, self.l2, self.bn1 = nn.Conv2d(1, 32, 5), nn.Conv2d(32, 32, 5), nn.BatchNorm(32)
            self.l3, self.l4, self.bn2 = nn.Conv2d(32, 64, 3), nn.Conv2d(64, 64, 3), nn.BatchNorm(64)
            self.l5 = nn.Linear(576, 10)

        def __call__(self, x):
            x = self.bn1(self.l2(self.l1(x).relu()).relu()).max_pool2d(2)
            x = self.bn2(self.l4(self.l3(x).relu()).relu()).max_pool2d(2)
            return self.l5(x.flatten(1))

    model = Model()
    opt = nn.optim.Adam(nn.state.get_parameters(model))
    x, y = Tensor.rand(512, 1, 28, 28).realize(), Tensor.randint(512, high=10).realize()

    from tinygrad.helpers import Context

    @TinyJit
    def step():
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = model(x).sparse_categorical_crossentropy(y).backward()
            return loss.realize(*opt.schedule_step())

    for _ in range(3):
        step()
    return 512 / best_of(3, lambda: step().item())


def numpy_bench():
    import numpy as np
    out = {}
    for n in (256, 512, 1024, 2048):
        a, b = np.random.rand(n, n).astype(np.float32), np.random.rand(n, n).astype(np.float32)
        out[f"matmul {n}x{n}x{n} f32"] = 2 * n**3 / best_of(3, lambda: a @ b) / 1e9
    n = 16 << 20
    a, b, c = (np.random.rand(n).astype(np.float32) for _ in range(3))
    out["((a*b+c).relu()*2).sum() 16M f32"] = 12 * n / best_of(3, lambda: (np.maximum(a * b + c, 0) * 2).sum()) / 1e9
    return out


def torch_bench():
    import torch
    torch.set_grad_enabled(False)
    out = {}
    for n in (256, 512, 1024, 2048):
        a, b = torch.rand(n, n), torch.rand(n, n)
        out[f"matmul {n}x{n}x{n} f32"] = 2 * n**3 / best_of(3, lambda: a @ b) / 1e9
    x, w = torch.rand(64, 32, 28, 28), torch.rand(64, 32, 3, 3)
    conv = torch.nn.functional.conv2d
    out["conv2d 64x32x28x28 * 64x32x3x3 f32"] = 2 * 64 * 64 * 26 * 26 * 32 * 9 / best_of(3, lambda: conv(x, w)) / 1e9
    n = 16 << 20
    a, b, c = torch.rand(n), torch.rand(n), torch.rand(n)
    out["((a*b+c).relu()*2).sum() 16M f32"] = 12 * n / best_of(3, lambda: ((a * b + c).relu() * 2).sum()) / 1e9
    out[MNIST_STEP] = torch_mnist_step()
    return out


def tinygrad_bench():
    os.environ["DEV"] = "CPU"  # tinygrad on the CPU (it would pick OpenCL where PoCL is installed)
    from tinygrad import Tensor
    out = {}
    for n in (256, 512, 1024, 2048):
        a, b = Tensor.rand(n, n).realize(), Tensor.rand(n, n).realize()
        out[f"matmul {n}x{n}x{n} f32"] = 2 * n**3 / best_of(3, lambda: (a @ b).realize()) / 1e9
    x, w = Tensor.rand(64, 32, 28, 28).realize(), Tensor.rand(64, 32, 3, 3).realize()
    out["conv2d 64x32x28x28 * 64x32x3x3 f32"] = 2 * 64 * 64 * 26 * 26 * 32 * 9 / best_of(3, lambda: x.conv2d(w).realize()) / 1e9
    n = 16 << 20
    a, b, c = (Tensor.rand(n).realize() for _ in range(3))
    out["((a*b+c).relu()*2).sum() 16M f32"] = 12 * n / best_of(3, lambda: ((a * b + c).relu() * 2).sum().realize()) / 1e9
    try:
        out[MNIST_STEP] = tinygrad_mnist_step()
    except Exception as e:  # reported, the other figures still count
        print(f"tinygrad: training step failed ({e})", file=sys.stderr)
    return out


def ferrograd_bench():
    res = subprocess.run(["cargo", "run", "--release", "-q", "--example", "bench"], cwd=ROOT, capture_output=True, text=True, check=True)
    out = {}
    for line in res.stdout.splitlines():
        m = re.match(r"^(.*?)\s+([\d.]+) (GFLOP/s|GB/s|img/s)$", line)
        if m:
            out[m.group(1).strip()] = float(m.group(2))
    return out


def main():
    fg = ferrograd_bench()
    peers = {}
    for name, fn in (("numpy", numpy_bench), ("torch", torch_bench), ("tinygrad", tinygrad_bench)):
        try:
            peers[name] = fn()
        except Exception as e:  # a peer that fails to run is reported, not fatal
            print(f"{name}: failed ({e})", file=sys.stderr)
            peers[name] = {}
    peak, triad = fg.get("FMA peak, all cores"), fg.get("STREAM triad 16M f32, all cores")
    names = [k for k in fg if not k.startswith(("STREAM", "FMA"))]
    cols = ["ferrograd"] + list(peers) + ["vs best peer", "vs limit"]
    print(f"{'benchmark':<40}" + "".join(f"{c:>14}" for c in cols))
    for k in names:
        vals = [peers[p].get(k) for p in peers]
        best = max((v for v in vals if v), default=None)
        limit = None if k == MNIST_STEP else triad if "GB" in k or "sum" in k else peak
        row = [fg[k]] + vals + [fg[k] / best if best else None, fg[k] / limit if limit else None]
        print(f"{k:<40}" + "".join(f"{v:>14.2f}" if v is not None else f"{'-':>14}" for v in row))
    for k in ("STREAM copy 16M f32, all cores", "STREAM triad 16M f32, all cores", "FMA peak, all cores"):
        if k in fg:
            print(f"{k:<40}{fg[k]:>14.1f}")
    mnist_full()


def mnist_full():
    """The whole beautiful_mnist run (70 steps + 7 test evaluations) in ferrograd and PyTorch."""
    if not os.path.isdir(os.environ.get("MNIST_DIR", "")):
        print("beautiful_mnist full run: skipped (set MNIST_DIR to the MNIST files)")
        return
    runs = {
        "ferrograd": ["cargo", "run", "--release", "-q", "--example", "beautiful_mnist"],
        "torch": [sys.executable, os.path.join(ROOT, "bench", "mnist_torch.py")],
    }
    res = {}
    for name, cmd in runs.items():
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
        acc = float(re.search(r"test accuracy: ([\d.]+)%", out).group(1))
        wall = float(re.search(r"wall time for .*: ([\d.]+) s", out).group(1))
        res[name] = (wall, acc)
    (fw, fa), (tw, ta) = res["ferrograd"], res["torch"]
    print(f"beautiful_mnist 70 steps + 7 evals: ferrograd {fw:.1f} s ({fa:.2f}%), torch {tw:.1f} s ({ta:.2f}%), "
          f"ferrograd/torch time {fw / tw:.2f}x")


if __name__ == "__main__":
    main()
