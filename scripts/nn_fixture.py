"""Reference results for ferrograd's nn layers, computed with PyTorch: for each case, the
module's state dict (names, shapes, dtypes, values; which entries are parameters), the inputs,
the outputs, and the gradients of `sum_k (out_k * w_k).sum()` for fixed random `w_k` with
respect to the inputs and the parameters. BatchNorm in training mode also records its running
statistics after one forward and after a second forward on another input.

    /work/venv-torch/bin/python scripts/nn_fixture.py   # writes tests/fixtures/nn.json
"""
import json
import pathlib

import numpy as np
import torch
import torch.nn as nn

rng = np.random.RandomState(1234)
torch.manual_seed(0)


def entry(t):
    t = t.detach()
    dtype = {torch.float32: "float32", torch.int64: "int64"}[t.dtype]
    return {"shape": list(t.shape), "dtype": dtype, "data": t.flatten().tolist()}


def uniform(shape, lo=-1.0, hi=1.0):
    return torch.tensor(rng.uniform(lo, hi, shape).astype(np.float32))


def randomize(module, nbt=0):
    """Fixed random values for every float tensor of the state dict (running variances
    positive); `num_batches_tracked` set to `nbt`."""
    with torch.no_grad():
        for name, t in module.state_dict().items():
            if name.endswith("num_batches_tracked"):
                t.fill_(nbt)
            elif name.endswith("running_var"):
                t.copy_(uniform(t.shape, 0.5, 1.5))
            else:
                t.copy_(uniform(t.shape))


def state(module):
    return {k: entry(v) for k, v in module.state_dict().items()}


def case(module, inputs, forward=None, train=False, second_input=None, nbt=0, **config):
    """Runs `forward(module, *inputs)` (a tuple of outputs) in train or eval mode and records
    everything the Rust test compares. Float inputs get gradients; integer ones do not."""
    forward = forward or (lambda m, *xs: (m(*xs),))
    randomize(module, nbt)
    module.train(train)
    before = state(module)
    params = dict(module.named_parameters())
    xs = [x.clone().requires_grad_(x.dtype.is_floating_point) for x in inputs]
    outs = forward(module, *xs)
    ws = [uniform(o.shape) for o in outs]
    after = state(module)
    sum(((o * w).sum() for o, w in zip(outs, ws))).backward()
    rec = {
        "config": config,
        "train": train,
        "state": before,
        "params": sorted(params),
        "inputs": [entry(x) for x in xs],
        "outputs": [entry(o) for o in outs],
        "w": [entry(w) for w in ws],
        "input_grads": [entry(x.grad) if x.grad is not None else None for x in xs],
        "param_grads": {k: entry(p.grad) for k, p in params.items()},
    }
    if train and any(k.startswith("running") for k in before):
        rec["state_after"] = after
        with torch.no_grad():
            forward(module, second_input)
        rec["second_input"] = entry(second_input)
        rec["state_after2"] = state(module)
    return rec


def lstm_step(m, x, h=None, c=None):
    return m(x) if h is None else m(x, (h, c))


cases = {}
cases["linear_bias"] = case(nn.Linear(5, 3), [uniform((4, 5))], in_features=5, out_features=3, bias=True)
cases["linear_1d_input"] = case(nn.Linear(4, 2), [uniform((4,))], in_features=4, out_features=2, bias=True)
cases["linear_nobias"] = case(nn.Linear(5, 3, bias=False), [uniform((2, 3, 5))], in_features=5, out_features=3,
                              bias=False)
cases["conv1d"] = case(nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=1, groups=2), [uniform((2, 4, 9))],
                       cin=4, cout=6, k=3, stride=2, padding=1, dilation=1, groups=2, bias=True)
cases["conv2d_basic"] = case(nn.Conv2d(3, 4, 3), [uniform((2, 3, 6, 5))],
                             cin=3, cout=4, k=3, stride=1, padding=0, dilation=1, groups=1, bias=True)
cases["conv2d_stride_pad"] = case(nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False), [uniform((2, 3, 7, 6))],
                                  cin=3, cout=4, k=3, stride=2, padding=1, dilation=1, groups=1, bias=False)
cases["conv2d_dilation_groups"] = case(nn.Conv2d(4, 6, 3, stride=1, padding=2, dilation=2, groups=2),
                                       [uniform((2, 4, 7, 7))],
                                       cin=4, cout=6, k=3, stride=1, padding=2, dilation=2, groups=2, bias=True)
cases["conv_transpose2d"] = case(nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1),
                                 [uniform((2, 3, 4, 5))],
                                 cin=3, cout=4, k=3, stride=2, padding=1, output_padding=1, groups=1, bias=True)
cases["conv_transpose2d_groups"] = case(nn.ConvTranspose2d(4, 6, 3, stride=1, padding=0, groups=2, bias=False),
                                        [uniform((1, 4, 3, 4))],
                                        cin=4, cout=6, k=3, stride=1, padding=0, output_padding=0, groups=2,
                                        bias=False)
cases["batchnorm2d_train"] = case(nn.BatchNorm2d(3, eps=1e-5, momentum=0.1), [uniform((4, 3, 3, 2), -1, 2)],
                                  train=True, second_input=uniform((4, 3, 3, 2), -2, 1),
                                  num_features=3, eps=1e-5, momentum=0.1, affine=True, track=True)
cases["batchnorm2d_eval"] = case(nn.BatchNorm2d(3, eps=1e-3, momentum=0.1), [uniform((2, 3, 3, 4), -1, 2)],
                                 nbt=7, num_features=3, eps=1e-3, momentum=0.1, affine=True, track=True)
cases["batchnorm1d_train"] = case(nn.BatchNorm1d(5, eps=1e-5, momentum=0.1), [uniform((6, 5), -1, 2)],
                                  train=True, second_input=uniform((6, 5), 0, 3),
                                  num_features=5, eps=1e-5, momentum=0.1, affine=True, track=True)
cases["batchnorm1d_ncl_noaffine_train"] = case(nn.BatchNorm1d(4, momentum=0.3, affine=False), [uniform((3, 4, 5), -1, 2)],
                                               train=True, second_input=uniform((3, 4, 5), 0, 2),
                                               num_features=4, eps=1e-5, momentum=0.3, affine=False, track=True)
# Without running statistics, eval mode normalizes with the batch statistics too.
cases["batchnorm2d_no_stats_eval"] = case(nn.BatchNorm2d(3, track_running_stats=False), [uniform((2, 3, 2, 3), -1, 2)],
                                          num_features=3, eps=1e-5, momentum=0.1, affine=True, track=False)
cases["layernorm_1d"] = case(nn.LayerNorm([6], eps=1e-5), [uniform((2, 3, 6), -1, 2)], shape=[6], eps=1e-5, affine=True)
cases["layernorm_2d"] = case(nn.LayerNorm([3, 4], eps=1e-4), [uniform((2, 3, 4), -1, 2)], shape=[3, 4], eps=1e-4, affine=True)
cases["layernorm_noaffine"] = case(nn.LayerNorm([5], elementwise_affine=False), [uniform((3, 5), -1, 2)], shape=[5],
                                   eps=1e-5, affine=False)
cases["groupnorm"] = case(nn.GroupNorm(2, 6, eps=1e-5), [uniform((2, 6, 3, 2), -1, 2)],
                          num_groups=2, num_channels=6, eps=1e-5, affine=True)
cases["groupnorm_ncl_noaffine"] = case(nn.GroupNorm(3, 6, affine=False), [uniform((2, 6, 4), -1, 2)],
                                       num_groups=3, num_channels=6, eps=1e-5, affine=False)
cases["instancenorm2d"] = case(nn.InstanceNorm2d(3), [uniform((2, 3, 4, 3), -1, 2)],
                               num_features=3, eps=1e-5, affine=False)
cases["instancenorm2d_affine"] = case(nn.InstanceNorm2d(3, affine=True), [uniform((2, 3, 4, 3), -1, 2)],
                                      num_features=3, eps=1e-5, affine=True)
cases["instancenorm1d_affine"] = case(nn.InstanceNorm1d(4, affine=True), [uniform((2, 4, 5), -1, 2)],
                                     num_features=4, eps=1e-5, affine=True)
cases["rmsnorm"] = case(nn.RMSNorm(6, eps=1e-6), [uniform((2, 3, 6))], dim=6, eps=1e-6)
# eps=None means float32's machine epsilon; inputs small enough for it to matter.
cases["rmsnorm_default_eps"] = case(nn.RMSNorm(6), [uniform((2, 6), -3e-4, 3e-4)], dim=6)
cases["embedding"] = case(nn.Embedding(7, 4), [torch.tensor([[1, 3, 6], [3, 0, 3]], dtype=torch.int64)],
                          num_embeddings=7, dim=4)
cases["lstmcell_zeros"] = case(nn.LSTMCell(4, 3), [uniform((2, 4))], forward=lstm_step,
                               input_size=4, hidden_size=3, bias=True)
cases["lstmcell_state"] = case(nn.LSTMCell(4, 3), [uniform((2, 4)), uniform((2, 3)), uniform((2, 3))],
                               forward=lstm_step, input_size=4, hidden_size=3, bias=True)
cases["lstmcell_nobias"] = case(nn.LSTMCell(3, 2, bias=False), [uniform((3, 3)), uniform((3, 2)), uniform((3, 2))],
                                forward=lstm_step, input_size=3, hidden_size=2, bias=False)

path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "nn.json"
path.write_text(json.dumps(cases, indent=None, separators=(",", ":")))
print(f"wrote {path} ({path.stat().st_size} bytes, {len(cases)} cases)")
