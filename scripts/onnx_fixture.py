"""Writes tests/fixtures/onnx/: real models exported from PyTorch to ONNX, with inputs and the
outputs onnxruntime computes for them (the reference tests/onnx.rs compares with at 1e-5), in
ONNX's test layout (model.onnx, test_data_set_0/{input,output}_K.pb).

- mnist: the beautiful_mnist model (bench/mnist_torch.py's Model) with random weights and
  random batch-norm statistics, in eval mode, batch 4.
- transformer: a pre-norm GPT block (d_model 32, 4 heads, causal attention, GELU MLP) on a
  batch of 2 sequences of 7 tokens.

Usage: .bench-venv/bin/python scripts/onnx_fixture.py   (needs torch, onnx, onnxruntime)
"""

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
from mnist_torch import Model  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "onnx")


def write(name, model, inputs, input_names, output_names):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, inputs, path, input_names=input_names, output_names=output_names,
                      opset_version=17, dynamo=False)
    onnx.checker.check_model(onnx.load(path))
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {n: x.numpy() for n, x in zip(input_names, inputs)}
    outs = sess.run(output_names, feed)
    for k, (n, x) in enumerate(feed.items()):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, n).SerializeToString())
    for k, (n, y) in enumerate(zip(output_names, outs)):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, n).SerializeToString())
    with torch.no_grad():
        ref = model(*inputs)
    print(f"{name}: {os.path.getsize(path)} bytes, onnxruntime vs torch max diff "
          f"{np.abs(outs[0] - ref.numpy()).max():.2e}")


class Block(torch.nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv, self.proj = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)
        self.up, self.down = torch.nn.Linear(dim, 2 * dim), torch.nn.Linear(2 * dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.reshape(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / (c // self.heads) ** 0.5
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.down(torch.nn.functional.gelu(self.up(self.ln2(x))))


def main():
    torch.manual_seed(0)
    mnist = Model()
    for bn in (mnist.bn1, mnist.bn2):
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.data.uniform_(0.5, 1.5)
        bn.bias.data.uniform_(-0.2, 0.2)
    mnist.eval()
    write("mnist", mnist, (torch.rand(4, 1, 28, 28),), ["x"], ["logits"])

    block = Block().eval()
    write("transformer", block, (torch.randn(2, 7, 32),), ["tokens"], ["hidden"])


if __name__ == "__main__":
    main()
