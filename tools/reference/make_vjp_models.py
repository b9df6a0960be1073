#!/usr/bin/env python3
"""Tiny ONNX models, one per op of issue 13, for finite-difference checks.

Each model puts trainable parameters before and after one op (or the few
ops PyTorch writes for it), so that dpc-check-gradients, comparing the
train step's parameter gradients with central differences of its loss,
checks the op's vector-Jacobian product as dpc composes it (import, the
differentiation rule, the lowering and the kernels). test/reference/vjp.test
runs them. Written by PyTorch 2's legacy exporter (opset 17) in training
mode with their (tiny) weights; the test sets hash weights anyway.

Run from PyTorch 2's virtual environment (../shared/TOOLCHAIN.md), never CI:
  V/bin/python tools/reference/make_vjp_models.py --out test/reference/vjp
"""
import argparse
import os
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
from export_torch2 import export  # noqa: E402

F = 6  # features per sample of the vector models


class Between(nn.Module):
    """fc_in -> body -> flatten -> fc_out: parameters on both sides, so the
    op's gradient with respect to its input and (if any) its own parameters
    both reach a parameter."""

    def __init__(self, body, shape, width):
        super().__init__()
        self.fc_in = nn.Linear(F, int(torch.tensor(shape).prod()))
        self.shape = shape
        self.body = body
        self.fc_out = nn.Linear(width, 3)

    def forward(self, x):
        y = self.body(self.fc_in(x).view(-1, *self.shape))
        return self.fc_out(y.flatten(1))


class Lambda(nn.Module):
    def __init__(self, fn, **params):
        super().__init__()
        self.fn = fn
        for name, shape in params.items():
            setattr(self, name, nn.Parameter(torch.randn(*shape)))

    def forward(self, x):
        return self.fn(self, x)


def between(fn, shape, width, **params):
    return lambda: Between(Lambda(fn, **params), shape, width)


def conv_model(body, width):
    return lambda: nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), body,
                                 nn.Flatten(), nn.Linear(width, 3))


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 4)
        self.fc = nn.Linear(4, 3)

    def forward(self, tokens):
        return self.fc(self.embed(tokens).mean(dim=1))


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 5, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(10, 3)

    def forward(self, x):
        y, _ = self.lstm(x)  # every step: both directions' weights count
        return self.fc(y.mean(dim=1))


class ClassToken(nn.Module):
    """ViT's class token: a [1, 1, D] parameter expanded to the batch."""

    def __init__(self):
        super().__init__()
        self.token = nn.Parameter(torch.randn(1, 1, 3))
        self.fc_in = nn.Linear(F, 6)
        self.fc_out = nn.Linear(9, 3)

    def forward(self, x):
        y = self.fc_in(x).view(-1, 2, 3)
        t = self.token.expand(y.shape[0], -1, -1)
        return self.fc_out(torch.cat([t, y], dim=1).flatten(1))


# name: (constructor, input: "vector" [N, F], "image" [N, 2, 4, 4],
#        "tokens" [N, 5] in [0, 11), "sequence" [N, 3, 4][, "dynamo": the
#        default exporter instead of the legacy one])
MODELS = {
    "concat": (between(lambda m, y: torch.cat([y, y * m.w], dim=2),
                       (2, 3), 12, w=(2, 3)), "vector"),
    "split": (between(lambda m, y: torch.mul(*torch.split(y, [2, 2], dim=2)),
                      (2, 4), 4), "vector"),
    "slice": (between(lambda m, y: y[:, 1:3, 2:], (3, 5), 6), "vector"),
    "transpose": (between(lambda m, y: (y.transpose(1, 2) @ m.w),
                          (2, 3), 6, w=(2, 2)), "vector"),
    "maxpool": (conv_model(nn.MaxPool2d(2), 16), "image"),
    "dropout": (between(lambda m, y: nn.functional.dropout(y, 0.5),
                        (8,), 8), "vector"),
    "layernorm": (lambda: Between(nn.LayerNorm(4), (2, 4), 8), "vector"),
    "gelu": (lambda: Between(nn.GELU(), (8,), 8), "vector"),
    "gelu_tanh": (lambda: Between(nn.GELU("tanh"), (8,), 8), "vector"),
    "erf": (between(lambda m, y: torch.erf(y), (8,), 8), "vector"),
    "clip": (between(lambda m, y: y.clamp(-0.3, 0.4), (8,), 8), "vector"),
    "relu6": (lambda: Between(nn.ReLU6(), (8,), 8), "vector"),
    "hardswish": (lambda: Between(nn.Hardswish(), (8,), 8), "vector"),
    "hardsigmoid": (lambda: Between(nn.Hardsigmoid(), (8,), 8), "vector"),
    "silu": (lambda: Between(nn.SiLU(), (8,), 8), "vector"),
    "leaky_relu": (lambda: Between(nn.LeakyReLU(0.1), (8,), 8), "vector"),
    "elu": (lambda: Between(nn.ELU(0.7), (8,), 8), "vector"),
    "selu": (lambda: Between(nn.SELU(), (8,), 8), "vector"),
    "celu": (lambda: Between(nn.CELU(0.8), (8,), 8), "vector"),
    "softplus": (lambda: Between(nn.Softplus(2.0), (8,), 8), "vector"),
    "mish": (lambda: Between(nn.Mish(), (8,), 8), "vector"),
    "softsign": (lambda: Between(nn.Softsign(), (8,), 8), "vector"),
    "log_sigmoid": (lambda: Between(nn.LogSigmoid(), (8,), 8), "vector"),
    "tanhshrink": (lambda: Between(nn.Tanhshrink(), (8,), 8), "vector"),
    "prelu": (lambda: Between(nn.PReLU(2), (2, 4), 8), "vector"),
    "softmin": (lambda: Between(nn.Softmin(dim=1), (8,), 8), "vector"),
    "glu": (lambda: Between(nn.GLU(), (8,), 4), "vector"),
    "hardshrink": (lambda: Between(nn.Hardshrink(0.3), (8,), 8), "vector"),
    "softshrink": (lambda: Between(nn.Softshrink(0.3), (8,), 8), "vector"),
    # The legacy exporter refuses a threshold other than 0.
    "threshold": (lambda: Between(nn.Threshold(0.1, -1.0), (8,), 8),
                  "vector", "dynamo"),
    "softmax_axis1": (between(lambda m, y: y.softmax(dim=1), (3, 4), 12),
                      "vector"),
    "batch_matmul": (between(lambda m, y: y @ y.transpose(1, 2), (3, 4), 9),
                     "vector"),
    "class_token": (ClassToken, "vector"),
    "embedding": (Tokens, "tokens"),
    "squeeze": (between(lambda m, y: (y.unsqueeze(1) * m.w).squeeze(1),
                        (4,), 4, w=(1, 1, 4)), "vector"),
    "reduce_mean": (between(lambda m, y: y.mean(dim=2), (3, 4), 3),
                    "vector"),
    "reduce_sum": (between(lambda m, y: y.sum(dim=1), (3, 4), 4), "vector"),
    "pow": (between(lambda m, y: y.pow(2) + y.pow(3), (8,), 8), "vector"),
    "broadcast_mul": (between(lambda m, y: y * m.w, (2, 4), 8, w=(4,)),
                      "vector"),
    "div": (between(lambda m, y: y / 3.0, (8,), 8), "vector"),
    "div_tensor": (between(lambda m, y: y / (y * y + 1) / (m.w * m.w + 0.5),
                           (2, 4), 8, w=(2, 4)), "vector"),
    "sub": (between(lambda m, y: y - m.w, (2, 4), 8, w=(1, 4)), "vector"),
    "grouped_conv": (conv_model(nn.Conv2d(4, 4, 3, padding=1, groups=2), 64),
                     "image"),
    "depthwise_conv": (conv_model(nn.Conv2d(4, 4, 3, groups=4), 16), "image"),
    "global_avgpool": (conv_model(nn.AdaptiveAvgPool2d(1), 4), "image"),
    "adaptive_avgpool": (conv_model(nn.AdaptiveAvgPool2d(2), 16), "image"),
    "lstm": (Lstm, "sequence"),
}


def example(kind):
    if kind == "tokens":
        return torch.randint(0, 11, (2, 5))
    shape = {"vector": (2, F), "image": (2, 2, 4, 4),
             "sequence": (2, 3, 4)}[kind]
    return torch.randn(*shape)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("models", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models:
        torch.manual_seed(0)
        make, kind, *exporter = MODELS[name]
        export(make().train(), example(kind),
               os.path.join(args.out, name + ".onnx"),
               dynamo=exporter == ["dynamo"], strip=None)


if __name__ == "__main__":
    main()
