#!/usr/bin/env python3
"""Two tiny models exported the way PyTorch 2 users type it,
torch.onnx.export(model, (x,), f, dynamic_shapes=...): the dynamo exporter
with its optimizer on. test/frontend/onnx/default-export.test reads them.

- default_export_dropout.onnx: a clamp and a dropout, whose bounds and
  ratio the exporter writes as float initializers (constants to dpc);
- default_export_bn_folded.onnx: conv -> batch norm, which the optimizer
  folds into the convolution (FuseBatchNormIntoConv) even in training mode:
  dpc must refuse it, naming the module and the export flags that keep it.

Run from PyTorch 2's virtual environment (../shared/TOOLCHAIN.md), never CI:
  V/bin/python tools/models/make_default_exports.py --out test/frontend/onnx/Inputs
"""
import argparse
import os

import torch
from torch import nn


class ClampDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 5)
        self.drop = nn.Dropout(0.2)
        self.fc2 = nn.Linear(5, 3)

    def forward(self, x):
        return self.fc2(self.drop(torch.clamp(self.fc1(x), -1.0, 1.0)))


class ConvBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.bn = nn.BatchNorm2d(2)
        self.fc = nn.Linear(2 * 4 * 4, 3)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    out = parser.parse_args().out
    torch.manual_seed(0)
    batch = torch.export.Dim("batch")
    for name, model, x in [
            ("default_export_dropout", ClampDropout(), torch.randn(4, 6)),
            ("default_export_bn_folded", ConvBn(), torch.randn(4, 1, 4, 4))]:
        model.train()
        torch.onnx.export(model, (x,), os.path.join(out, name + ".onnx"),
                          dynamic_shapes=({0: batch},))


if __name__ == "__main__":
    main()
