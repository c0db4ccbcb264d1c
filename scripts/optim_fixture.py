"""Reference trajectories for ferrograd's optimizers: the parameters of a small MLP after each
of three steps, computed with PyTorch (LAMB, which PyTorch lacks, written out with torch ops
following the LAMB paper / tinygrad's formulation).

    python scripts/optim_fixture.py   # writes tests/fixtures/optim.json (needs torch, numpy)
"""
import json
import pathlib

import numpy as np
import torch

rng = np.random.RandomState(0)
init = {
    "w1": rng.uniform(-1, 1, (3, 4)).astype(np.float32),
    "b1": rng.uniform(-1, 1, (3,)).astype(np.float32),
    "w2": rng.uniform(-1, 1, (2, 3)).astype(np.float32),
    "b2": rng.uniform(-1, 1, (2,)).astype(np.float32),
}
x = rng.uniform(-1, 1, (5, 4)).astype(np.float32)
y = rng.uniform(-1, 1, (5, 2)).astype(np.float32)
ORDER = ["w1", "b1", "w2", "b2"]


def loss_fn(p, xt, yt):
    h = torch.relu(xt @ p["w1"].T + p["b1"])
    return ((h @ p["w2"].T + p["b2"] - yt) ** 2).mean()


def lamb_step(params, state, lr, b1, b2, eps, wd):
    state["t"] += 1
    with torch.no_grad():
        for k in ORDER:
            p, g = params[k], params[k].grad
            m = state["m"][k] = b1 * state["m"][k] + (1 - b1) * g
            v = state["v"][k] = b2 * state["v"][k] + (1 - b2) * g * g
            m_hat = m / (1 - b1 ** state["t"])
            v_hat = v / (1 - b2 ** state["t"])
            up = m_hat / (v_hat.sqrt() + eps) + wd * p
            r1, r2 = p.square().sum().sqrt(), up.square().sum().sqrt()
            trust = torch.where(r1 > 0, torch.where(r2 > 0, r1 / r2, 1.0), 1.0)
            p -= lr * trust * up


CONFIGS = {
    "sgd": dict(kind="sgd", lr=0.1),
    "sgd_momentum": dict(kind="sgd", lr=0.1, momentum=0.9),
    "sgd_nesterov": dict(kind="sgd", lr=0.1, momentum=0.9, nesterov=True),
    "sgd_weight_decay": dict(kind="sgd", lr=0.1, momentum=0.9, weight_decay=0.01),
    "adam": dict(kind="adam", lr=0.01),
    "adamw": dict(kind="adamw", lr=0.01, weight_decay=0.1),
    "lamb": dict(kind="lamb", lr=0.01, weight_decay=0.01),
}

out = {"init": {k: v.flatten().tolist() for k, v in init.items()},
       "shapes": {k: list(v.shape) for k, v in init.items()},
       "x": x.flatten().tolist(), "y": y.flatten().tolist(), "configs": {}, "steps": {}}
xt, yt = torch.tensor(x), torch.tensor(y)
for name, cfg in CONFIGS.items():
    params = {k: torch.tensor(v, requires_grad=True) for k, v in init.items()}
    plist = [params[k] for k in ORDER]
    kind = cfg["kind"]
    if kind == "sgd":
        opt = torch.optim.SGD(plist, lr=cfg["lr"], momentum=cfg.get("momentum", 0.0),
                              nesterov=cfg.get("nesterov", False), weight_decay=cfg.get("weight_decay", 0.0))
    elif kind == "adam":
        opt = torch.optim.Adam(plist, lr=cfg["lr"])
    elif kind == "adamw":
        opt = torch.optim.AdamW(plist, lr=cfg["lr"], weight_decay=cfg["weight_decay"])
    else:
        opt = None
        state = {"t": 0, "m": {k: torch.zeros_like(v) for k, v in params.items()},
                 "v": {k: torch.zeros_like(v) for k, v in params.items()}}
    traj = []
    for _ in range(3):
        for p in plist:
            p.grad = None
        loss_fn(params, xt, yt).backward()
        if opt is not None:
            opt.step()
        else:
            lamb_step(params, state, cfg["lr"], 0.9, 0.999, 1e-6, cfg["weight_decay"])
        traj.append({k: params[k].detach().numpy().flatten().tolist() for k in ORDER})
    out["configs"][name] = cfg
    out["steps"][name] = traj

path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "optim.json"
path.write_text(json.dumps(out, indent=1))
print(f"wrote {path}")
