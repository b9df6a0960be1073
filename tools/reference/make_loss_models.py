#!/usr/bin/env python3
"""Reference steps for the losses beyond one class label per sample.

Writes OUT/NAME/ as make_reference.py does (model.onnx, images.npy,
labels.npy, loss.npy, grad/, after/: one torch.optim.SGD step), for:
  loss_mse     a regression MLP [N, 6] -> [N, 3], MSE against float targets
  loss_bce     a multi-label MLP [N, 6] -> [N, 4], BCE with logits and a
               pos_weight (1, 2, 0.5, 3), 0/1 float targets
  loss_tokens  a per-token model: [N, 8] -> linear -> [N, 4 tokens, 5
               classes] (the classes last, as a language model's logits),
               cross-entropy with ignore_index -100 (sample 0 has 1 ignored
               token, sample 1 none, others 2), label smoothing 0.1
  loss_pixels  a per-pixel segmenter: a 1x1 convolution [N, 2, 3, 3] ->
               [N, 3, 3, 3] (classes at dim 1), cross-entropy with class
               weights (1, 2, 0.5) and ignore_index 255
Run with PyTorch 2: /work/torchvenv/bin/python tools/reference/
make_loss_models.py --out test/reference. The files are committed.
"""
import argparse
import os

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

BATCH = 6
LR = 0.1


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 20)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))).reshape(-1, 4, 5)


def mlp(inputs, outputs):
    return nn.Sequential(nn.Linear(inputs, 12), nn.Tanh(),
                         nn.Linear(12, outputs))


def save(out, name, model, inputs, targets, loss_fn):
    directory = os.path.join(out, name)
    os.makedirs(os.path.join(directory, "grad"), exist_ok=True)
    os.makedirs(os.path.join(directory, "after"), exist_ok=True)
    torch.onnx.export(model, (inputs,), os.path.join(directory, "model.onnx"),
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                      opset_version=17, do_constant_folding=False,
                      dynamo=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    loss = loss_fn(model(inputs))
    loss.backward()
    np.save(os.path.join(directory, "images.npy"), inputs.numpy())
    labels = targets.numpy()
    labels = labels.astype(np.int32 if labels.dtype == np.int64
                           else np.float32)
    np.save(os.path.join(directory, "labels.npy"), labels)
    np.save(os.path.join(directory, "loss.npy"),
            np.array(loss.item(), dtype=np.float32))
    for param_name, param in model.named_parameters():
        np.save(os.path.join(directory, "grad", param_name + ".npy"),
                param.grad.numpy())
    optimizer.step()
    for param_name, param in model.named_parameters():
        np.save(os.path.join(directory, "after", param_name + ".npy"),
                param.detach().numpy())
    print(f"{directory}: loss {loss.item():.6f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    out = parser.parse_args().out
    torch.manual_seed(0)

    x = torch.randn(BATCH, 6)
    y = torch.randn(BATCH, 3)
    save(out, "loss_mse", mlp(6, 3), x, y, lambda o: F.mse_loss(o, y))

    labels = (torch.rand(BATCH, 4) > 0.5).float()
    pos = torch.tensor([1.0, 2.0, 0.5, 3.0])
    save(out, "loss_bce", mlp(6, 4), x, labels,
         lambda o: F.binary_cross_entropy_with_logits(o, labels,
                                                      pos_weight=pos))

    tokens = torch.randint(0, 5, (BATCH, 4))
    tokens[0, 3] = -100
    for row in range(2, BATCH):
        tokens[row, row % 4] = tokens[row, (row + 1) % 4] = -100
    save(out, "loss_tokens", Tokens(), torch.randn(BATCH, 8), tokens,
         lambda o: F.cross_entropy(o.permute(0, 2, 1), tokens,
                                   ignore_index=-100, label_smoothing=0.1))

    pixels = torch.randint(0, 3, (BATCH, 3, 3))
    pixels[1, 0, 0] = pixels[4, 2, 1] = pixels[4, 1, 1] = 255
    weight = torch.tensor([1.0, 2.0, 0.5])
    save(out, "loss_pixels", nn.Conv2d(2, 3, 1), torch.randn(BATCH, 2, 3, 3),
         pixels,
         lambda o: F.cross_entropy(o, pixels, weight=weight,
                                   ignore_index=255))


if __name__ == "__main__":
    main()
