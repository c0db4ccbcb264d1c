"""beautiful_mnist in PyTorch, as examples/beautiful_mnist.rs does it: 70 steps of batch 512
sampled with randint, Adam lr 0.001, a test evaluation on the 10,000 test images every 10
steps, wall time for the steps and evaluations. MNIST from MNIST_DIR (the four *-ubyte.gz
files). Run by bench/peers.sh next to `cargo run --release --example beautiful_mnist`. With
SAVE=path the trained model's state dict is written there with torch.save (the checkpoint
tests/torch_load.rs evaluates in ferrograd: `STEPS=20 SAVE=tests/fixtures/torch_load/mnist.pt`)."""
import gzip
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def load(name, offset):
    path = os.path.join(os.environ.get("MNIST_DIR", "../shared/data/mnist"), name)
    with gzip.open(path) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.bn1 = nn.Conv2d(1, 32, 5), nn.Conv2d(32, 32, 5), nn.BatchNorm2d(32)
        self.l3, self.l4, self.bn2 = nn.Conv2d(32, 64, 3), nn.Conv2d(64, 64, 3), nn.BatchNorm2d(64)
        self.l5 = nn.Linear(576, 10)

    def forward(self, x):
        x = F.max_pool2d(self.bn1(F.relu(self.l2(F.relu(self.l1(x))))), 2)
        x = F.max_pool2d(self.bn2(F.relu(self.l4(F.relu(self.l3(x))))), 2)
        return self.l5(x.flatten(1))


def main():
    torch.manual_seed(int(os.environ.get("SEED", "1")))
    x_train = torch.tensor(load("train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28))
    y_train = torch.tensor(load("train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    x_test = torch.tensor(load("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28))
    y_test = torch.tensor(load("t10k-labels-idx1-ubyte.gz", 8).astype(np.int64))
    model = Model()
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    steps = int(os.environ.get("STEPS", "70"))

    def evaluate():
        model.eval()
        with torch.no_grad():
            acc = (model(x_test.float()).argmax(1) == y_test).float().mean().item() * 100
        model.train()
        return acc

    start = time.perf_counter()
    for i in range(steps):
        samples = torch.randint(0, x_train.shape[0], (512,))
        opt.zero_grad()
        loss = F.cross_entropy(model(x_train[samples].float()), y_train[samples])
        loss.backward()
        opt.step()
        loss.item()
        if i % 10 == 9:
            evaluate()
    wall = time.perf_counter() - start
    acc = evaluate()
    print(f"test accuracy: {acc:.2f}%")
    print(f"wall time for {steps} steps (with {steps // 10} test evaluations): {wall:.1f} s")
    if os.environ.get("SAVE"):
        torch.save(model.state_dict(), os.environ["SAVE"])
        with open(os.environ["SAVE"] + ".json", "w") as f:
            f.write(f'{{"steps": {steps}, "test_accuracy": {acc:.4f}, "torch": "{torch.__version__}"}}\n')


if __name__ == "__main__":
    main()
