"""dpc.compile of a torch.nn.Module: exported in training form (batch norm
kept), trained one epoch on Fashion-MNIST; its state_dict holds the
module's parameter names and shapes and loads back into the module, which
then predicts as dpc does.

usage: check_torch_module.py WORK_DIR
"""
import gzip
import os
import sys

import numpy as np
import torch
from torch import nn

import dpc

work = sys.argv[1]
directory = "/usr/share/datasets/fashion-mnist/"


def fashion_mnist(kind, count):
    images = gzip.open(directory + kind + "-images-idx3-ubyte.gz").read()
    labels = gzip.open(directory + kind + "-labels-idx1-ubyte.gz").read()
    x = np.frombuffer(images, np.uint8, offset=16).reshape(-1, 1, 28, 28)
    y = np.frombuffer(labels, np.uint8, offset=8).astype(np.int64)
    return x[:count], y[:count]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 14 * 14, 10)

    def forward(self, x):
        return self.fc(self.pool(self.bn1(self.conv1(x)).relu()).flatten(1))


torch.manual_seed(0)
module = Net().eval()
x, y = fashion_mnist("train", 12000)
x_test, y_test = fashion_mnist("t10k", 2000)
plan = dpc.compile(module, torch.zeros(2, 1, 28, 28), batch=64, devices=2)
assert not module.training, "compile changed the module's mode"
history = plan.train((x, y), epochs=1, test=(x_test, y_test), lr=0.05)
print("test accuracy %.2f" % history[-1]["test_acc"])
assert history[-1]["test_acc"] > 0.7, history

state = plan.state_dict()
expected = {n: tuple(t.shape) for n, t in module.state_dict().items()
            if not n.endswith("num_batches_tracked")}
assert {n: v.shape for n, v in state.items()} == expected, (state.keys(),
                                                            expected)
module.load_state_dict({n: torch.from_numpy(v) for n, v in state.items()},
                       strict=False)
module.eval()
with torch.no_grad():
    reference = module(torch.from_numpy(x_test[:500]).float() / 255).numpy()
logits = plan.predict(x_test[:500])
assert np.allclose(logits, reference, atol=1e-4), abs(logits - reference).max()
print("torch module ok")
