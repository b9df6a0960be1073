#!/usr/bin/env python3
"""Reference data for ops whose ONNX form needs PyTorch 2's exporter.

Like make_reference.py (same files: model.onnx, images.npy, labels.npy,
loss.npy, grad/, after/), exported by PyTorch 2's default exporter with a
dynamic batch, for:
  activations  an MLP through every activation whose gradient reads its
               input: ReLU6 (Clip), Hardswish, Hardsigmoid, GELU and GELU's
               tanh approximation (PyTorch 1.13's exporter writes GELU as an
               Erf expression; PyTorch 2's writes the Gelu op, opset 20)
  permute      a ShuffleNet channel shuffle (view, transpose(1, 2), view)
               and a channels-last permute, whose shapes the exporter
               computes from the batch (Shape, Gather, Concat)
  join         ShuffleNet v2 / DenseNet joins: chunk into two halves
               (Split), one half through a convolution, and a torch.cat of
               the parts along the channels, one part twice
  dropout      a CNN with Dropout after a convolution and after a linear
               layer, exported in training mode; the reference step drops
               what dpc's counter-based mask drops (seed 0, first optimizer
               step, site k for the k-th Dropout: Philox4x32-10 as in
               runtime/kernels/KernelMath.h, reimplemented here), so one
               step matches PyTorch with dropout on
  layernorm    the zoo's MLP with LayerNorm, GELU and Dropout, and a
               LayerNorm over the last two dims of a [n, 4, 8] view
  chlast       a ConvNeXt block: channels-last permute, LayerNorm, linear
               layers on [n, h, w, c] (MatMul of a 4-D operand), GELU, a
               layer scale; also exported by the legacy exporter
               (chlast_legacy: GELU as Div, Erf, Add, Mul, Mul)
  linear_nd    two linear layers on a channels-last [n, 7, 7, c] tensor
               (legacy exporter, MatMul of 4-D operands): the weight
               gradients read the layers' inputs through folded transposes
               and row merges, which must keep those buffers alive
  slice        channel slices of a tensor (Slice; the channels no slice
               reads get a zero gradient) and a channel picked by index
               (Gather of a scalar, as ViT picks its class token), from
               both exporters (slice_legacy)
  embedding    a token classifier: int64 token ids [n, 6] through an
               nn.Embedding (Gather on the table), two of them picking
               the same row, flattened into a linear layer
  padding      the embedding classifier with padding_idx = 3 (PyTorch
               leaves that row without gradient), the padding id 3 in
               several places; the file keeps the FX call in each Gather's
               metadata (pkg.torch.onnx.fx_node), where alone the default
               exporter records padding_idx
  meanpool     token ids embedded and mean-pooled over the sequence
               (ReduceMean over axis 1: a sum and a scale, whose gradient
               broadcasts back), and a kept-dim mean over the features
  stochdepth   residual blocks with torchvision's StochasticDepth (row
               mode, as EfficientNet and ConvNeXt use it): the exporters
               write it as uniform noise < keep, divided by keep, times x;
               dpc imports it as a row-wise dropout, and the reference
               drops the rows dpc's mask drops

Run from PyTorch 2's virtual environment (../shared/TOOLCHAIN.md):
  V/bin/python tools/reference/make_reference_torch2.py --out test/reference \
      [NAME ...]
The files are committed; the tests need no torch.
"""
import argparse
import os
import sys
import warnings

import numpy as np
import onnx
import torch
import torchvision
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dpc_random  # noqa: E402
from make_reference import BATCH, save_step  # noqa: E402


def activations():
    width = 32
    layers = [nn.Flatten(), nn.Linear(784, width)]
    for act in (nn.ReLU6(), nn.Hardswish(), nn.Hardsigmoid(), nn.GELU(),
                nn.GELU(approximate="tanh")):
        layers += [act, nn.Linear(width, width)]
    layers[-1] = nn.Linear(width, 10)
    return nn.Sequential(*layers)


class Permute(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 1)
        self.fc = nn.Linear(8 * 7 * 7, 10)

    def forward(self, x):
        y = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 4)
        n, c, h, w = y.shape
        # ShuffleNet's channel shuffle over 2 groups.
        y = y.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)
        y = self.conv2(y).permute(0, 2, 3, 1)  # channels last
        return self.fc(y.reshape(n, -1))


class Join(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(12 * 7 * 7, 10)

    def forward(self, x):
        y = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 4)
        a, b = y.chunk(2, dim=1)
        b = torch.relu(self.conv2(b))
        return self.fc(torch.cat([a, b, a], dim=1).flatten(1))


class DpcDropout(nn.Module):
    """nn.Dropout with dpc's mask for rows 0.. of optimizer step 1."""

    def __init__(self, ratio, site, seed=0, step=1, rowwise=False):
        super().__init__()
        self.ratio, self.site, self.seed, self.step = ratio, site, seed, step
        self.rowwise = rowwise

    def forward(self, x):
        rows = x.shape[0]
        cols = 1 if self.rowwise else x[0].numel()
        keep = dpc_random.keep(rows, cols, self.ratio, self.site,
                               seed=self.seed, step=self.step)
        keep = torch.from_numpy(keep).reshape(
            [rows] + [1] * (x.dim() - 1) if self.rowwise else x.shape)
        scale = torch.tensor(1.0 / (1.0 - self.ratio), dtype=torch.float32)
        return torch.where(keep, x * scale, torch.zeros_like(x))


class Dropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.drop1 = nn.Dropout(0.2)
        self.fc1 = nn.Linear(4 * 7 * 7, 32)
        self.drop2 = nn.Dropout(0.5)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        y = nn.functional.max_pool2d(self.drop1(torch.relu(self.conv(x))), 4)
        return self.fc2(self.drop2(torch.relu(self.fc1(y.flatten(1)))))


class LayerNormMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 32)
        self.norm1 = nn.LayerNorm(32)
        self.drop = nn.Dropout(0.1)
        self.norm2 = nn.LayerNorm([4, 8])
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        y = self.drop(nn.functional.gelu(self.norm1(self.fc1(x.flatten(1)))))
        y = self.norm2(y.view(-1, 4, 8))
        return self.fc2(y.flatten(1))


class ChannelsLast(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.norm = nn.LayerNorm(8)
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 8)
        self.scale = nn.Parameter(torch.rand(8, 1, 1) + 0.5)
        self.head = nn.Linear(8 * 7 * 7, 10)

    def forward(self, x):
        y = nn.functional.max_pool2d(self.conv(x), 4)
        z = self.fc2(nn.functional.gelu(self.fc1(self.norm(
            y.permute(0, 2, 3, 1)))))
        y = y + self.scale * z.permute(0, 3, 1, 2)
        return self.head(y.flatten(1))


class LinearNd(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.conv = nn.Conv2d(1, c, 4, stride=4)
        self.fc1 = nn.Linear(c, 4 * c)
        self.fc2 = nn.Linear(4 * c, c)
        self.head = nn.Linear(c * 7 * 7, 10)

    def forward(self, x):
        y = self.conv(x).permute(0, 2, 3, 1)
        y = self.fc2(self.fc1(y)).permute(0, 3, 1, 2)
        return self.head(y.flatten(1))


class Slices(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(5 * 7 * 7, 10)

    def forward(self, x):
        y = nn.functional.max_pool2d(torch.relu(self.conv(x)), 4)
        b = torch.relu(self.conv2(y[:, 2:6])) + y[:, :4]
        c = y[:, 6]
        return self.fc(torch.cat([b.flatten(1), c.flatten(1)], 1))


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 8)
        self.fc = nn.Linear(6 * 8, 10)

    def forward(self, tokens):
        return self.fc(torch.tanh(self.embed(tokens)).flatten(1))


class PaddedTokens(Tokens):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 8, padding_idx=3)


class MeanPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 8)
        self.fc = nn.Linear(8, 10)

    def forward(self, tokens):
        y = self.embed(tokens).mean(1)
        return self.fc(y - y.mean(1, keepdim=True))


class StochDepth(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
        self.depth1 = torchvision.ops.StochasticDepth(0.3, "row")
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.depth2 = torchvision.ops.StochasticDepth(0.6, "row")
        self.fc = nn.Linear(4 * 7 * 7, 10)

    def forward(self, x):
        y = nn.functional.max_pool2d(torch.relu(self.conv0(x)), 4)
        y = y + self.depth1(torch.relu(self.conv1(y)))
        y = y + self.depth2(torch.relu(self.conv2(y)))
        return self.fc(y.flatten(1))


def write(out, name, model, training=False, legacy=False, images=None,
          keep_fx_nodes=False):
    directory = os.path.join(out, name)
    os.makedirs(os.path.join(directory, "grad"), exist_ok=True)
    os.makedirs(os.path.join(directory, "after"), exist_ok=True)
    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(module.weight, gain=2.0)
            nn.init.uniform_(module.bias, -0.5, 0.5)
        if isinstance(module, nn.LayerNorm):
            nn.init.uniform_(module.weight, 0.5, 1.5)
            nn.init.uniform_(module.bias, -0.5, 0.5)
    if images is None:
        images = torch.rand(BATCH, 1, 28, 28) * 4 - 2
    labels = torch.randint(0, 10, (BATCH,))
    path = os.path.join(directory, "model.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if legacy:
            torch.onnx.export(
                model, (images,), path, dynamo=False, opset_version=17,
                input_names=["x"], output_names=["logits"],
                do_constant_folding=False, dynamic_axes={"x": {0: "batch"}},
                training=torch.onnx.TrainingMode.TRAINING)
        else:
            torch.onnx.export(
                model, (images,), path, dynamo=True, optimize=False,
                input_names=["x"], output_names=["logits"],
                dynamic_shapes=({0: torch.export.Dim("batch")},),
                training=torch.onnx.TrainingMode.TRAINING
                if training else torch.onnx.TrainingMode.EVAL)
    m = onnx.load(path)
    for node in m.graph.node:
        kept = [(p.key, p.value) for p in node.metadata_props
                if keep_fx_nodes and p.key == "pkg.torch.onnx.fx_node"]
        del node.metadata_props[:]
        for key, value in kept:
            node.metadata_props.add(key=key, value=value)
    del m.metadata_props[:]
    onnx.save(m, path)

    if training:  # the step with dpc's masks, site by site in export order
        sites = [n for n, m in model.named_modules()
                 if isinstance(m, (nn.Dropout,
                                   torchvision.ops.StochasticDepth))]
        for site, name in enumerate(sites):
            module = getattr(model, name)
            if isinstance(module, nn.Dropout):
                setattr(model, name, DpcDropout(module.p, site))
            else:  # ratio 1 - keep, as float decimals (dpc's importer)
                keep = float(str(np.float32(1.0 - module.p)))
                ratio = float(str(np.float32(1.0 - keep)))
                setattr(model, name, DpcDropout(ratio, site, rowwise=True))
    save_step(directory, model, images, labels)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("names", nargs="*", help="only these (default: all)")
    args = parser.parse_args()

    def wanted(name):
        return not args.names or name in args.names

    def make(name, seed, model, **options):
        if wanted(name):
            torch.manual_seed(seed)
            write(args.out, name, model(), **options)

    make("activations", 2, activations)
    make("permute", 3, Permute)
    make("join", 4, Join)
    make("dropout", 5, lambda: Dropout().train(), training=True)
    make("layernorm", 6, lambda: LayerNormMlp().train(), training=True)
    make("stochdepth", 7, lambda: StochDepth().train(), training=True)
    torch.manual_seed(10)
    tokens = torch.randint(0, 50, (BATCH, 6))
    tokens[1, 2] = tokens[0, 0]  # one row's gradient from two places
    if wanted("embedding"):
        write(args.out, "embedding", Tokens(), images=tokens)
    padded = tokens.clone()
    padded[0, 1] = padded[2, 3] = padded[5, 5] = 3  # the padding row
    make("padding", 12, PaddedTokens, images=padded, keep_fx_nodes=True)
    if wanted("meanpool"):
        torch.manual_seed(11)
        write(args.out, "meanpool", MeanPool(),
              images=torch.randint(0, 50, (BATCH, 6)))
    make("linear_nd", 1, LinearNd, legacy=True)
    for legacy in (False, True):
        make("slice_legacy" if legacy else "slice", 9, Slices, legacy=legacy)
    for legacy in (False, True):
        make("chlast_legacy" if legacy else "chlast", 8, ChannelsLast,
             legacy=legacy)

if __name__ == "__main__":
    main()
