"""Loads `dpc export -o weights.npz` into the matching PyTorch module.

usage: check_torch_npz.py MODEL WEIGHTS.npz EVAL.json LOGITS.npy [--subset N]

MODEL is mlp or lenet_relu (tools/models/make_models.py's, written here as
the torch modules with the same state_dict names), bn_cnn or drop_mlp
(export_models.py).
The arrays load with load_state_dict(strict=True) -- only batch norm's
num_batches_tracked, which ONNX has no counterpart of, may be missing --
and the module in eval mode, on the Fashion-MNIST test set (the first N
images) scaled as dpc scales it, predicts what `dpc eval --json` counted,
image for image, with logits within 1e-4 of `dpc predict`'s.
Prints "torch ok: ..." or the failure, exit 1.
"""
import argparse
import gzip
import json
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_models import BnCnn, DropMlp  # noqa: E402

FASHION_MNIST = "/usr/share/datasets/fashion-mnist/"


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(784, 256), nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(self.fc1(x.flatten(1)).relu())


class LeNetRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2 = nn.Linear(400, 120), nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)
        self.pool = nn.AvgPool2d(2, 2)

    def forward(self, x):
        x = self.pool(self.conv1(x).relu())
        x = self.pool(self.conv2(x).relu()).flatten(1)
        return self.fc3(self.fc2(self.fc1(x).relu()).relu())


MODELS = {"mlp": Mlp, "lenet_relu": LeNetRelu, "bn_cnn": BnCnn,
          "drop_mlp": DropMlp}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("weights")
    parser.add_argument("eval")
    parser.add_argument("logits")
    parser.add_argument("--subset", type=int, default=0)
    args = parser.parse_args()

    module = MODELS[args.model]()
    weights = np.load(args.weights)
    state = {name: torch.from_numpy(weights[name]) for name in weights.files}
    missing = [name for name in module.state_dict() if name not in state]
    if any(not name.endswith("num_batches_tracked") for name in missing):
        fail(f"the .npz lacks {missing}")
    for name in missing:
        state[name] = module.state_dict()[name]
    module.load_state_dict(state, strict=True)
    module.eval()

    images = np.frombuffer(
        gzip.open(FASHION_MNIST + "t10k-images-idx3-ubyte.gz").read(),
        np.uint8, offset=16).reshape(-1, 1, 28, 28)
    labels = np.frombuffer(
        gzip.open(FASHION_MNIST + "t10k-labels-idx1-ubyte.gz").read(),
        np.uint8, offset=8)
    if args.subset:
        images, labels = images[:args.subset], labels[:args.subset]
    x = images.astype(np.float32) * (np.float32(1) / np.float32(255))
    with torch.no_grad():
        logits = module(torch.from_numpy(x)).numpy()

    expected = np.load(args.logits)
    evaluation = json.load(open(args.eval))
    diff = float(np.max(np.abs(logits - expected)))
    if diff > 1e-4:
        fail(f"logits differ from dpc predict's by {diff:.3g} > 1e-4")
    predicted = logits.argmax(axis=1)
    if not np.array_equal(predicted, expected.argmax(axis=1)):
        fail("predictions differ from dpc predict's")
    correct = int((predicted == labels).sum())
    if evaluation["samples"] != len(labels) or correct != evaluation["correct"]:
        fail(f"{correct} of {len(labels)} correct, dpc eval's "
             f"{evaluation['correct']} of {evaluation['samples']}")
    print(f"torch ok: {args.model}, accuracy {correct / len(labels):.4f} as "
          f"dpc eval's, logits within {diff:.2g}")


if __name__ == "__main__":
    main()
