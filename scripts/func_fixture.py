"""Reference values for ferrograd's functional transforms, computed with torch.func in float64:
grad, vjp, jvp, jacrev, jacfwd, hessian and vmap(grad) on small functions covering elementwise
ops, movement ops, reductions, matmul and convolution. Every input is stored with the result.

    python scripts/func_fixture.py   # writes tests/fixtures/func.json (needs torch, numpy)
"""
import json
import pathlib

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

torch.set_default_dtype(torch.float64)
rng = np.random.RandomState(0)


def rand(*shape):
    return torch.tensor(rng.uniform(-1, 1, shape))


def flat(t):
    return {"shape": list(t.shape), "data": t.detach().reshape(-1).tolist()}


def mlp(x, w):  # elementwise, broadcast, reduce, matmul
    h = torch.tanh(x @ w) * torch.exp(-x * x).sum(1, keepdim=True)
    return h.sum() + (w**3).sum()


def movement(x):  # pad, flip, permute, expand, shrink, reduce
    p = F.pad(x, (1, 2, 0, 1)).flip(0).permute(1, 0)
    return (p[1:4].unsqueeze(0).expand(2, 3, 4) * x.sum()).sin()


def conv(img, k):  # conv2d, sigmoid, average pool
    y = torch.sigmoid(F.conv2d(img, k, padding=1))
    return F.avg_pool2d(y, 2)


def softmax_attn(q, kk):  # softmax over a matmul, log
    return torch.log_softmax(q @ kk.T / 2.0, dim=-1)


def scalar(x):
    return torch.logsumexp(torch.sin(x) * x.cumsum(0), 0)


def per_example_loss(w, x, y):
    logits = (x @ w).unsqueeze(0)
    return F.cross_entropy(logits, y.unsqueeze(0))


cases = {}
x, w = rand(3, 4), rand(4, 2)
gx, gw = grad(mlp, argnums=(0, 1))(x, w)
cases["grad_mlp"] = {"x": flat(x), "w": flat(w), "gx": flat(gx), "gw": flat(gw)}

xm = rand(3, 4)
out, pull = vjp(movement, xm)
u = rand(*out.shape)
cases["vjp_movement"] = {"x": flat(xm), "u": flat(u), "out": flat(out), "vjp": flat(pull(u)[0])}
t = rand(3, 4)
cases["jvp_movement"] = {"x": flat(xm), "t": flat(t), "jvp": flat(jvp(movement, (xm,), (t,))[1])}

img, k = rand(2, 3, 6, 6), rand(4, 3, 3, 3)
out, pull = vjp(conv, img, k)
u = rand(*out.shape)
vi, vk = pull(u)
ti, tk = rand(2, 3, 6, 6), rand(4, 3, 3, 3)
cases["conv"] = {
    "img": flat(img), "k": flat(k), "u": flat(u), "out": flat(out), "vjp_img": flat(vi), "vjp_k": flat(vk),
    "t_img": flat(ti), "t_k": flat(tk), "jvp": flat(jvp(conv, (img, k), (ti, tk))[1]),
}

q, kk = rand(3, 5), rand(4, 5)
cases["jacobians_attn"] = {
    "q": flat(q), "k": flat(kk), "jacrev": flat(jacrev(softmax_attn, 0)(q, kk)), "jacfwd": flat(jacfwd(softmax_attn, 1)(q, kk)),
}

xs = rand(5)
cases["hessian"] = {"x": flat(xs), "hessian": flat(hessian(scalar)(xs))}

wp, xp = rand(4, 3), rand(6, 4)
yp = torch.tensor([0, 2, 1, 1, 0, 2])
pe = vmap(grad(per_example_loss), in_dims=(None, 0, 0))(wp, xp, yp)
cases["per_example"] = {"w": flat(wp), "x": flat(xp), "y": yp.tolist(), "grads": flat(pe)}

out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "func.json"
out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}) + "\n")
print("wrote", out)
