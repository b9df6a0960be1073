#!/usr/bin/env python3
"""Reference data for checking dpc's training step against PyTorch.

For each model (the zoo's MLP and LeNet, and a small conv + batch-norm net
whose data-parallel steps match only with --sync-bn), writes OUT/NAME/:
  model.onnx           the model with its initial weights (torch.onnx.export)
  images.npy           a fixed batch, float32 [N, 1, 28, 28]
  labels.npy           its labels, int32 [N]
  loss.npy             the mean cross-entropy of the batch, float32 []
  grad/<param>.npy     d loss / d param for every parameter
  after/<param>.npy    every parameter after one torch.optim.SGD step

Run with Debian's python3 (python3-torch, python3-onnx):
  /usr/bin/python3 tools/reference/make_reference.py --out test/reference
(--only convbn regenerates the batch-norm net's files alone.)
The files are committed; the tests need no torch.
"""
import argparse
import os
import sys

import numpy as np
import torch
from torch import nn

# The models as export_torch.py defines them (d2l's nn.Sequential versions).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "models"))
from export_torch import lenet, mlp  # noqa: E402

BATCH = 8
LR = 0.1


def convbn():
    # ReLU before the batch norm: torch.onnx.export (eval mode) would fold a
    # batch norm that directly follows a convolution into its weights.
    return nn.Sequential(
        nn.Conv2d(1, 4, kernel_size=3, padding=1), nn.ReLU(),
        nn.BatchNorm2d(4),
        nn.AvgPool2d(kernel_size=4, stride=4),
        nn.Flatten(),
        nn.Linear(4 * 7 * 7, 10))


def init_weights(module):
    # The zoo's inits: N(0, 0.01) for the MLP would hide mistakes in tiny
    # gradients, so both use Xavier here, with nonzero biases.
    if isinstance(module, (nn.Linear, nn.Conv2d)):
        nn.init.xavier_uniform_(module.weight)
        nn.init.uniform_(module.bias, -0.1, 0.1)


def write(out, name, model):
    directory = os.path.join(out, name)
    os.makedirs(os.path.join(directory, "grad"), exist_ok=True)
    os.makedirs(os.path.join(directory, "after"), exist_ok=True)
    model.apply(init_weights)
    images = torch.rand(BATCH, 1, 28, 28)
    labels = torch.randint(0, 10, (BATCH,))

    torch.onnx.export(model, images, os.path.join(directory, "model.onnx"),
                      input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "batch"},
                                    "logits": {0: "batch"}},
                      opset_version=13, do_constant_folding=False)

    save_step(directory, model, images, labels)


def save_step(directory, model, images, labels):
    """Writes the batch, and the loss, gradients and SGD update of one step
    of `model` on it."""
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    np.save(os.path.join(directory, "images.npy"), images.numpy())
    np.save(os.path.join(directory, "labels.npy"),
            labels.numpy().astype(np.int32))
    np.save(os.path.join(directory, "loss.npy"),
            np.array(loss.item(), dtype=np.float32))
    for param_name, param in model.named_parameters():
        np.save(os.path.join(directory, "grad", param_name + ".npy"),
                param.grad.numpy())
    optimizer.step()
    for param_name, param in model.named_parameters():
        np.save(os.path.join(directory, "after", param_name + ".npy"),
                param.detach().numpy())
    print(f"{directory}: loss {loss.item():.6f}, lr {LR}, batch {BATCH}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    # The MLP and LeNet share one seed sequence, so only the batch-norm net,
    # seeded on its own, can be regenerated alone.
    parser.add_argument("--only", choices=["convbn"])
    args = parser.parse_args()
    if not args.only:
        torch.manual_seed(0)
        write(args.out, "mlp", mlp())
        write(args.out, "lenet", lenet())
    if args.only in (None, "convbn"):
        torch.manual_seed(1)
        write(args.out, "convbn", convbn())


if __name__ == "__main__":
    main()
