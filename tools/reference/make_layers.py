#!/usr/bin/env python3
"""torch.nn's layers one at a time: a tiny model per layer, against PyTorch.

Each model is fc_in -> the layer -> fc_out (Linear(6, 12), the layer on
[N, 12] or on a view of it, a Linear to 10 classes), so that the layer's
gradient reaches a parameter on each side. For each, like make_zoo.py (whose
reference format and checks it shares), it writes LAYERS/NAME/:

  dynamo.onnx, legacy.onnx  both of PyTorch 2's exporters (make_zoo's
                export_both: training mode, weights stripped)
  images.npy (the [8, 6] batch), labels.npy, loss.npy, reference/*.npy
                PyTorch's float64 step and float32 spread (make_zoo's
                write_reference), checked by dpc-check-reference --spread;
                a random layer's (dropout variants, RReLU) with dpc's own
                draws (with_dpc_draws, dpc_random.py)

and prints, with --table, the README's table of the layers: how each
exporter writes the layer (the op types of the committed exports, constants
and casts left out) and whether dpc trains it (with --check BIN, from
running dpc on both exports: "yes" or dpc's one-line refusal; without, the
note of LAYERS below).

Run from PyTorch 2's virtual environment (../shared/TOOLCHAIN.md), never CI:
  V/bin/python tools/reference/make_layers.py --out test/reference/layers \\
      [--check build/bin] [--table] [--no-export] [LAYER ...]
"""
import argparse
import copy
import math
import os
import sys

import numpy as np
import onnx
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dpc_random  # noqa: E402
import make_zoo  # noqa: E402
from zoo_allowance import allowance  # noqa: E402

F, WIDTH, CLASSES = 6, 12, 10


class Around(nn.Module):
    """fc_in -> view(-1, *shape) -> layer -> flatten -> fc_out."""

    def __init__(self, layer, shape=(WIDTH,), width=WIDTH, call=None):
        super().__init__()
        # How the layer is applied to the view: layer(x) unless given (a
        # layer with several inputs or outputs).
        self.call = call or (lambda layer, x: layer(x))
        self.fc_in = nn.Linear(F, math.prod(shape))
        self.shape = shape
        self.layer = layer
        if width is None:  # what the layer makes of one sample
            with torch.no_grad():
                width = self.call(layer, torch.zeros(2, *shape))
                width = width.shape[1:].numel()
        self.fc_out = nn.Linear(width, CLASSES)

    def forward(self, x):
        y = self.call(self.layer, self.fc_in(x).view(-1, *self.shape))
        return self.fc_out(y.flatten(1))


class Halves(nn.Module):
    """`combine` of the two halves of the last dim (torch.maximum)."""

    def __init__(self, combine):
        super().__init__()
        self.combine = combine

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return self.combine(a, b)

    def extra_repr(self):
        return self.combine.__name__


class MaximumWith(nn.Module):
    """torch.maximum of x and a learned [4, 1], broadcast along the rest."""

    def __init__(self):
        super().__init__()
        self.bound = nn.Parameter(torch.zeros(4, 1))

    def forward(self, x):
        return torch.maximum(x, self.bound)


class Amax(nn.Module):
    """A max (or `reduce`) over `dim`, keeping it."""

    def __init__(self, dim, reduce=torch.amax):
        super().__init__()
        self.dim, self.reduce = dim, reduce

    def forward(self, x):
        return self.reduce(x, dim=self.dim, keepdim=True)

    def extra_repr(self):
        return f"{self.reduce.__name__}, dim={self.dim}"


class Elementwise(nn.Module):
    """A function of each element (torch.exp)."""

    def __init__(self, function, name):
        super().__init__()
        self.function, self.name = function, name

    def forward(self, x):
        return self.function(x)

    def extra_repr(self):
        return self.name


def around(layer, *args, **kwargs):
    return lambda: Around(layer(), *args, **kwargs)


def halves(layer, x):
    """The layer of the two halves of the last dim (a distance)."""
    return layer(*x.chunk(2, dim=-1))


def unpool(layer, x):
    """The layer of MaxPool2d(2)'s output and indices."""
    return layer(*nn.functional.max_pool2d(x, 2, return_indices=True))


def recurrent(layer):
    """A batch-first recurrent layer on [N, 3, 4]: its output sequence."""
    return around(layer, (3, 4), None, call=lambda layer, x: layer(x)[0])


class DpcDropout(nn.Module):
    """A dropout variant with dpc's draws (dpc_random.py, site 0, the first
    step), for the reference step: one draw per element or per channel
    (dim 1), and AlphaDropout's affine form as PyTorch's alpha_dropout
    computes it (kept a x + alpha a p, dropped alpha a (p - 1))."""

    def __init__(self, p, per_channel, alpha):
        super().__init__()
        self.p, self.per_channel, self.alpha = p, per_channel, alpha

    def forward(self, x):
        rows, p = x.shape[0], self.p
        draws = x.shape[1] if self.per_channel else x[0].numel()
        keep = torch.from_numpy(dpc_random.keep(rows, draws, p, 0)).to(
            x.dtype).reshape((rows, draws) + (1,) * (x.dim() - 2)
                             if self.per_channel else x.shape)
        if not self.alpha:
            return x * (keep / (1 - p))
        alpha = 1.7580993408473766  # SELU's scale times its alpha
        a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
        b = (keep - 1) * (alpha * a) + alpha * a * p
        return x * (keep * a) + b


class DpcRReLU(nn.Module):
    """RReLU in training with dpc's draws (site 0, the first step): the
    slope of element i of a row is lower + (upper - lower) u_i."""

    def __init__(self, lower, upper):
        super().__init__()
        self.lower, self.upper = lower, upper

    def forward(self, x):
        u = dpc_random.uniform(x.shape[0], x[0].numel(), 0)
        slope = torch.from_numpy(self.lower + (self.upper - self.lower) * u)
        slope = slope.to(x.dtype).reshape(x.shape)
        return torch.where(x > 0, x, x * slope)


def with_dpc_draws(model):
    """The model for the reference step: a random layer with dpc's draws."""
    if isinstance(model.layer, nn.RReLU):
        model = copy.deepcopy(model)
        model.layer = DpcRReLU(model.layer.lower, model.layer.upper)
        return model
    kinds = {nn.Dropout1d: (True, False), nn.Dropout2d: (True, False),
             nn.Dropout3d: (True, False), nn.AlphaDropout: (False, True),
             nn.FeatureAlphaDropout: (True, True)}
    kind = kinds.get(type(model.layer))
    if kind is None:
        return model
    model = copy.deepcopy(model)
    model.layer = DpcDropout(model.layer.p, *kind)
    return model


# The dropout variants: the legacy exporter refuses them in training.
PER_CHANNEL = ("yes (dynamo); the legacy exporter refuses "
               "aten::feature_dropout in training")
ALPHA = "yes (dynamo); the legacy exporter refuses it in training"

# name: (model, what dpc does with it where it does not train it)
LAYERS = {
    "relu": (around(nn.ReLU), ""),
    "leaky_relu": (around(lambda: nn.LeakyReLU(0.1)), ""),
    "elu": (around(lambda: nn.ELU(0.7)), ""),
    "selu": (around(nn.SELU), ""),
    "celu": (around(lambda: nn.CELU(0.8)), ""),
    "gelu": (around(nn.GELU), ""),
    "gelu_tanh": (around(lambda: nn.GELU("tanh")), ""),
    "silu": (around(nn.SiLU), ""),
    "mish": (around(nn.Mish), ""),
    "softplus": (around(nn.Softplus), ""),
    "softplus_beta": (around(lambda: nn.Softplus(2.0, 3.0)),
                      "yes (dynamo); legacy: trains what the file says, "
                      "which drops the threshold (not PyTorch's step)"),
    "softsign": (around(nn.Softsign), ""),
    "sigmoid": (around(nn.Sigmoid), ""),
    "tanh": (around(nn.Tanh), ""),
    "log_sigmoid": (around(nn.LogSigmoid), ""),
    "tanhshrink": (around(nn.Tanhshrink), ""),
    "hardtanh": (around(lambda: nn.Hardtanh(-0.5, 0.7)), ""),
    "relu6": (around(nn.ReLU6), ""),
    "hardsigmoid": (around(nn.Hardsigmoid), ""),
    "hardswish": (around(nn.Hardswish), ""),
    "hardshrink": (around(lambda: nn.Hardshrink(0.3)), ""),
    "softshrink": (around(lambda: nn.Softshrink(0.3)), ""),
    "threshold": (around(lambda: nn.Threshold(0.1, -1.0)),
                  "yes (dynamo); the legacy exporter refuses it"),
    "prelu": (around(lambda: nn.PReLU(4), (4, 3)), ""),
    "rrelu": (around(nn.RReLU),
              "yes (legacy); the dynamo exporter cannot export it"),
    "glu": (around(nn.GLU, width=WIDTH // 2), ""),
    "softmax": (around(lambda: nn.Softmax(dim=1)), ""),
    "softmin": (around(lambda: nn.Softmin(dim=1)), ""),
    "softmax2d": (around(nn.Softmax2d, (3, 2, 2)), ""),
    "log_softmax": (around(lambda: nn.LogSoftmax(dim=1)), ""),
    # Convolutions and pooling over one spatial dim ([N, C, L]).
    "conv1d": (around(lambda: nn.Conv1d(4, 6, 3, padding=1), (4, 6),
                      None), ""),
    "conv1d_grouped": (around(lambda: nn.Conv1d(4, 6, 3, stride=2, padding=2,
                                                dilation=2, groups=2,
                                                bias=False), (4, 8), None),
                       ""),
    "max_pool1d": (around(lambda: nn.MaxPool1d(3, stride=2, padding=1),
                          (3, 8), None), ""),
    "avg_pool1d": (around(lambda: nn.AvgPool1d(3, stride=2, padding=1),
                          (3, 8), None), ""),
    "adaptive_avg_pool1d": (around(lambda: nn.AdaptiveAvgPool1d(4), (3, 8),
                                   None),
                            "yes (dynamo); the legacy exporter refuses it "
                            "(the batch is dynamic)"),
    # Transposed convolutions (1-D on [N, C, L], as Conv1d).
    "conv_transpose1d": (around(lambda: nn.ConvTranspose1d(4, 3, 3, stride=2,
                                                           padding=1),
                                (4, 5), None), ""),
    "conv_transpose2d": (around(lambda: nn.ConvTranspose2d(3, 4, (2, 3)),
                                (3, 3, 2), None), ""),
    "conv_transpose2d_strided": (
        around(lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                          output_padding=1, dilation=2,
                                          groups=2, bias=False),
               (4, 3, 2), None), ""),
    # Normalizations per sample.
    "group_norm": (around(lambda: nn.GroupNorm(2, 4), (4, 3, 2), None), ""),
    "group_norm_plain": (around(lambda: nn.GroupNorm(3, 6, affine=False),
                                (6, 4), None), ""),
    "instance_norm1d": (around(lambda: nn.InstanceNorm1d(4, affine=True),
                               (4, 6), None), ""),
    "instance_norm2d": (around(lambda: nn.InstanceNorm2d(3), (3, 2, 2),
                               None),
                        "yes (dynamo); the legacy exporter refuses it "
                        "without affine (unknown channel size)"),
    "batch_norm1d": (around(lambda: nn.BatchNorm1d(12)), ""),
    "batch_norm1d_3d": (around(lambda: nn.BatchNorm1d(4), (4, 3), None), ""),
    "batch_norm2d": (around(lambda: nn.BatchNorm2d(3), (3, 2, 2), None), ""),
    "batch_norm3d": (around(lambda: nn.BatchNorm3d(2), (2, 3, 2, 2), None),
                     ""),
    "layer_norm": (around(lambda: nn.LayerNorm(12)), ""),
    "layer_norm_2d": (around(lambda: nn.LayerNorm((3, 4)), (3, 4), None),
                      ""),
    # Linear layers and views.
    "linear": (around(lambda: nn.Linear(12, 8), width=8), ""),
    "linear_nobias": (around(lambda: nn.Linear(12, 8, bias=False), width=8),
                      ""),
    "bilinear": (around(lambda: nn.Bilinear(6, 6, 5), width=5,
                        call=lambda layer, x: layer(x[:, :6], x[:, 6:])), "yes (dynamo); the legacy exporter refuses aten::bilinear"),
    "identity": (around(nn.Identity), ""),
    "flatten": (around(nn.Flatten, (3, 4)), ""),
    "unflatten": (around(lambda: nn.Unflatten(1, (3, 4))), ""),
    "channel_shuffle": (around(lambda: nn.ChannelShuffle(2), (4, 3), None),
                        "yes (dynamo); the legacy exporter refuses aten::channel_shuffle"),
    # 2-D convolutions and pooling ([N, C, H, W]).
    "conv2d": (around(lambda: nn.Conv2d(3, 4, 3, padding=1), (3, 2, 2),
                      None), ""),
    "conv2d_depthwise": (around(lambda: nn.Conv2d(4, 4, 3, stride=2,
                                                  padding=1, groups=4),
                                (4, 3, 3), None), ""),
    "conv2d_dilated": (around(lambda: nn.Conv2d(2, 3, 2, dilation=2,
                                                padding=(1, 2), bias=False),
                              (2, 3, 2), None), ""),
    "max_pool2d": (around(lambda: nn.MaxPool2d(2), (3, 2, 2), None), ""),
    "max_pool2d_ceil": (around(lambda: nn.MaxPool2d(3, stride=2,
                                                    ceil_mode=True),
                               (2, 5, 5), None), ""),
    "avg_pool2d": (around(lambda: nn.AvgPool2d(2), (3, 2, 2), None), ""),
    "avg_pool2d_pad": (around(lambda: nn.AvgPool2d(3, stride=2, padding=1,
                                                   count_include_pad=False),
                              (3, 2, 2), None), ""),
    "adaptive_avg_pool2d": (around(lambda: nn.AdaptiveAvgPool2d(1),
                                   (3, 2, 2), None), ""),
    "adaptive_avg_pool2d_2x2": (around(lambda: nn.AdaptiveAvgPool2d(2),
                                       (3, 2, 2), None), "yes (dynamo); the legacy exporter refuses it (the batch is dynamic)"),
    "adaptive_max_pool2d": (around(lambda: nn.AdaptiveMaxPool2d(1),
                                   (3, 2, 2), None), ""),
    "adaptive_max_pool1d": (around(lambda: nn.AdaptiveMaxPool1d(1), (3, 8),
                                   None), ""),
    # 3-D convolutions, pooling and normalizations ([N, C, D, H, W]).
    "conv3d": (around(lambda: nn.Conv3d(2, 2, 2), (2, 3, 2, 2), None), ""),
    "conv3d_strided": (around(lambda: nn.Conv3d(4, 6, 3, stride=(2, 1, 2),
                                                padding=(1, 2, 1),
                                                dilation=(1, 2, 1),
                                                groups=2),
                              (4, 3, 4, 4), None), ""),
    "conv_transpose3d": (around(lambda: nn.ConvTranspose3d(
        2, 4, 3, stride=2, padding=1, output_padding=1, groups=2),
        (2, 2, 3, 2), None), ""),
    "max_pool3d": (around(lambda: nn.MaxPool3d(2), (2, 2, 3, 2), None), ""),
    "max_pool3d_ceil": (around(lambda: nn.MaxPool3d(3, stride=2, padding=1,
                                                    ceil_mode=True),
                               (2, 4, 5, 4), None), ""),
    "max_pool3d_dilated": (around(lambda: nn.MaxPool3d(
        2, stride=1, padding=(1, 0, 1), dilation=(2, 1, 2)), (2, 4, 3, 4),
        None), ""),
    "avg_pool3d": (around(lambda: nn.AvgPool3d(2), (2, 2, 3, 2), None), ""),
    "avg_pool3d_ceil": (around(lambda: nn.AvgPool3d(3, stride=2, padding=1,
                                                    ceil_mode=True),
                               (2, 4, 5, 4), None), ""),
    "avg_pool3d_pad": (around(lambda: nn.AvgPool3d(
        (1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1),
        count_include_pad=False), (2, 2, 3, 4), None), ""),
    "adaptive_avg_pool3d": (around(lambda: nn.AdaptiveAvgPool3d(1),
                                   (2, 2, 3, 2), None), ""),
    "adaptive_max_pool3d": (around(lambda: nn.AdaptiveMaxPool3d(1),
                                   (2, 2, 3, 2), None), ""),
    "instance_norm3d": (around(lambda: nn.InstanceNorm3d(2, affine=True),
                               (2, 3, 2, 2), None), ""),
    # Padding, shuffles and upsampling.
    "zero_pad2d": (around(lambda: nn.ZeroPad2d((1, 0, 2, 1)), (3, 2, 2),
                          None), ""),
    "constant_pad1d": (around(lambda: nn.ConstantPad1d(2, 0.5), (3, 4),
                              None), ""),
    "reflection_pad2d": (around(lambda: nn.ReflectionPad2d(1), (3, 2, 2),
                                None), ""),
    "replication_pad2d": (around(lambda: nn.ReplicationPad2d(1), (3, 2, 2),
                                 None), ""),
    "circular_pad1d": (around(lambda: nn.CircularPad1d(1), (3, 4), None),
                       ""),
    "reflection_pad1d": (around(lambda: nn.ReflectionPad1d((3, 1)), (3, 4),
                                None), ""),
    "replication_pad3d": (around(lambda: nn.ReplicationPad3d((1, 0, 0, 2, 1,
                                                              1)),
                                 (2, 2, 2, 3), None), ""),
    "pixel_shuffle": (around(lambda: nn.PixelShuffle(2), (4, 1, 3), None),
                      ""),
    "pixel_unshuffle": (around(lambda: nn.PixelUnshuffle(2), (1, 2, 6),
                               None), ""),
    "upsample_nearest": (around(lambda: nn.Upsample(scale_factor=2),
                                (3, 2, 2), None), ""),
    "upsample_bilinear": (around(lambda: nn.Upsample(scale_factor=2,
                                                     mode="bilinear"),
                                 (3, 2, 2), None), ""),
    "upsample_nearest_size": (around(lambda: nn.Upsample(size=(3, 5)),
                                     (3, 2, 2), None), ""),
    "upsample_bicubic": (around(lambda: nn.Upsample(scale_factor=2,
                                                    mode="bicubic"),
                                (3, 2, 2), None), ""),
    "upsample_bilinear_corners": (around(
        lambda: nn.Upsample(scale_factor=2, mode="bilinear",
                            align_corners=True), (3, 2, 2), None), ""),
    # Recurrent layers and attention (batch first: [N, T, features]).
    "rnn": (recurrent(lambda: nn.RNN(4, 5, batch_first=True)), ""),
    "lstm": (recurrent(lambda: nn.LSTM(4, 5, batch_first=True)), ""),
    "lstm_bidirectional": (recurrent(lambda: nn.LSTM(
        4, 3, num_layers=2, bidirectional=True, batch_first=True)), ""),
    "rnn_relu": (recurrent(lambda: nn.RNN(4, 5, nonlinearity="relu",
                                          batch_first=True)), ""),
    "gru": (recurrent(lambda: nn.GRU(4, 5, batch_first=True)), ""),
    "gru_bidirectional": (recurrent(lambda: nn.GRU(
        4, 3, num_layers=2, bidirectional=True, batch_first=True)), ""),
    "multihead_attention": (around(
        lambda: nn.MultiheadAttention(4, 2, batch_first=True), (3, 4), None,
        call=lambda layer, x: layer(x, x, x, need_weights=False)[0]), ""),
    "transformer_decoder_layer": (around(
        lambda: nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0,
                                           batch_first=True),
        (3, 4), None, call=lambda layer, x: layer(x, x)), ""),
    "transformer_encoder_layer": (around(
        lambda: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0,
                                           batch_first=True),
        (3, 4), None), ""),
    # Element-wise math and the layers built from it.
    "rms_norm": (around(lambda: nn.RMSNorm(WIDTH)),
                 "yes (dynamo); the legacy exporter refuses it (no "
                 "aten::rms_norm at opset 17)"),
    "rms_norm_2d": (around(lambda: nn.RMSNorm((3, 4)), (3, 4)),
                    "yes (dynamo); the legacy exporter refuses it (no "
                    "aten::rms_norm at opset 17)"),
    "local_response_norm": (around(lambda: nn.LocalResponseNorm(3), (4, 3),
                                   None), ""),
    "lp_pool1d": (around(lambda: nn.LPPool1d(2, 2), (3, 8), None), ""),
    "lp_pool2d": (around(lambda: nn.LPPool2d(2, 2), (3, 4, 4), None), ""),
    "maximum": (around(lambda: Halves(torch.maximum), width=WIDTH // 2), ""),
    "minimum": (around(lambda: Halves(torch.minimum), width=WIDTH // 2), ""),
    "maximum_broadcast": (around(MaximumWith, (4, 3), None), ""),
    "amax": (around(lambda: Amax(2), (4, 3), None), ""),
    "amin": (around(lambda: Amax(2, torch.amin), (4, 3), None), ""),
    "exp": (around(lambda: Elementwise(torch.exp, "exp")), ""),
    "sqrt": (around(lambda: Elementwise(
        lambda x: torch.sqrt(x * x + 0.5), "sqrt(x^2 + 0.5)")), ""),
    "sin_cos": (around(lambda: Elementwise(
        lambda x: torch.sin(x) + torch.cos(x), "sin + cos")), ""),
    # More padding: the other ranks and modes.
    "zero_pad1d": (around(lambda: nn.ZeroPad1d((1, 2)), (3, 4), None), ""),
    "zero_pad3d": (around(lambda: nn.ZeroPad3d(1), (2, 2, 2, 3), None), ""),
    "constant_pad2d": (around(lambda: nn.ConstantPad2d((1, 0, 2, 1), -0.5),
                              (3, 2, 2), None), ""),
    "constant_pad3d": (around(lambda: nn.ConstantPad3d((1, 0, 0, 1, 1, 0),
                                                       0.5),
                              (2, 2, 2, 3), None), ""),
    "circular_pad2d": (around(lambda: nn.CircularPad2d((1, 0, 1, 1)),
                              (3, 2, 2), None), ""),
    "reflection_pad3d": (around(lambda: nn.ReflectionPad3d(1), (2, 2, 2, 3),
                                None), ""),
    "replication_pad1d": (around(lambda: nn.ReplicationPad1d((2, 1)),
                                 (3, 4), None), ""),
    "lp_pool3d": (around(lambda: nn.LPPool3d(2, 2), (2, 2, 2, 4), None), ""),
    # Distances between the two halves of each row of [N, 3, 4].
    "cosine_similarity": (around(lambda: nn.CosineSimilarity(dim=2), (3, 4),
                                 None, call=halves), ""),
    "pairwise_distance": (around(nn.PairwiseDistance, (3, 4), None,
                                 call=halves),
                          "yes (dynamo); legacy: trains what the file says, "
                          "whose root is Pow(sum, 1 / (p + eps)) (not "
                          "PyTorch's step)"),
    # One step of a recurrent cell on [N, 4], its state starting at zero.
    "rnn_cell": (around(lambda: nn.RNNCell(4, 5), (4,), None), ""),
    "lstm_cell": (around(lambda: nn.LSTMCell(4, 5), (4,), None,
                         call=lambda layer, x: layer(x)[0]), ""),
    "gru_cell": (around(lambda: nn.GRUCell(4, 5), (4,), None), ""),
    # Sliding blocks: im2col and its inverse.
    "unfold": (around(lambda: nn.Unfold(2), (3, 3, 3), None), ""),
    "fold": (around(lambda: nn.Fold((3, 3), 2), (12, 4), None),
             "yes (dynamo); the legacy exporter refuses aten::col2im at "
             "opset 17"),
    "max_unpool2d": (around(lambda: nn.MaxUnpool2d(2), (3, 2, 4), None,
                            call=unpool),
                     "no: refused (MaxPool's indices read by a node); the "
                     "legacy exporter fails on it"),
    "fractional_max_pool2d": (around(lambda: nn.FractionalMaxPool2d(
        2, output_size=2), (3, 3, 3), None),
                              "no: neither exporter writes it (legacy: no "
                              "aten::fractional_max_pool2d at opset 17)"),
    # A bag of 12 fixed ids per sample, weighted by the row (the weights'
    # gradient reaches fc_in).
    "embedding_bag": (around(lambda: nn.EmbeddingBag(10, 4, mode="sum"),
                             width=None, call=lambda layer, x: layer(
                                 (torch.arange(x.shape[1]) % 10).expand(
                                     x.shape[0], -1),
                                 per_sample_weights=x)),
                      "no: refused (dynamo: a Range over the batch for the "
                      "bags' offsets; legacy: ReduceProd, then a Loop)"),
    # Dropout variants in training; the reference step drops what dpc's
    # draws drop (DpcDropout).
    "dropout1d": (around(lambda: nn.Dropout1d(0.5), (3, 4), None),
                  PER_CHANNEL),
    "dropout2d": (around(lambda: nn.Dropout2d(0.5), (3, 2, 2), None),
                  PER_CHANNEL),
    "dropout3d": (around(lambda: nn.Dropout3d(0.5), (2, 2, 2, 3), None),
                  PER_CHANNEL),
    "alpha_dropout": (around(lambda: nn.AlphaDropout(0.5)), ALPHA),
    "feature_alpha_dropout": (around(lambda: nn.FeatureAlphaDropout(0.5),
                                     (3, 2, 2), None), ALPHA),
}

# How the table names a layer whose repr spans lines or hides an option.
DESCRIPTIONS = {
    "avg_pool3d_ceil":
        "AvgPool3d(kernel_size=3, stride=2, padding=1, ceil_mode=True)",
    "avg_pool3d_pad": "AvgPool3d(kernel_size=(1, 3, 3), stride=(1, 2, 2), "
                      "padding=(0, 1, 1), count_include_pad=False)",
    "upsample_bilinear_corners":
        "Upsample(scale_factor=2.0, mode='bilinear', align_corners=True)",
    "multihead_attention": "MultiheadAttention(4, 2, batch_first=True)",
    "transformer_decoder_layer":
        "TransformerDecoderLayer(4, 2, 8, dropout=0.0, batch_first=True)",
    "transformer_encoder_layer":
        "TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True)",
    "fractional_max_pool2d": "FractionalMaxPool2d(2, output_size=2)",
    "cosine_similarity": "CosineSimilarity(dim=2)",
}

# Op types that only carry constants or types: left out of the table.
PLUMBING = {"Constant", "Cast", "CastLike", "Identity"}


def build(name):
    """The model in training mode with hash:SEED weights."""
    torch.manual_seed(0)
    model = LAYERS[name][0]().train()
    with torch.no_grad():
        for param_name, param in model.named_parameters():
            param.copy_(torch.from_numpy(
                make_zoo.hash_init(param_name, tuple(param.shape))))
    return model


def batch(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    x = torch.from_numpy(rng.uniform(-2, 2, (make_zoo.BATCH, F))
                         .astype(np.float32))
    return x, torch.from_numpy(rng.integers(0, CLASSES, make_zoo.BATCH))


def layer_ops(path):
    """The op types the export writes for the layer (between fc_in's
    Gemm/MatMul+Add and fc_out's), in order, without plumbing."""
    if not os.path.exists(path):
        return "(the exporter refuses it)"
    m = onnx.load(path, load_external_data=False)
    ops = [n.op_type for n in m.graph.node if n.op_type not in PLUMBING]
    # Drop the two Linears (Gemm, or MatMul + Add) and the view/flatten.
    shape_ops = {"Reshape", "Flatten", "Shape", "Gather", "Unsqueeze",
                 "Concat", "Slice", "Squeeze"}
    linear = [i for i, op in enumerate(ops) if op in ("Gemm", "MatMul")]
    if len(linear) >= 2:
        ops = ops[linear[0] + 1:linear[-1]]
    if ops and ops[0] == "Add":  # fc_in's bias
        ops = ops[1:]
    ops = [op for op in ops if op not in shape_ops]
    # Runs of one op (an unrolled recurrence's) as op×count.
    runs = []
    for op in ops:
        if runs and runs[-1][0] == op:
            runs[-1][1] += 1
        else:
            runs.append([op, 1])
    words = [op if n == 1 else f"{op}×{n}" for op, n in runs]
    if len(words) > 12:  # a composite layer's: its first ops and the count
        words = words[:12] + [f"… ({len(ops)} ops)"]
    return " ".join(words) or "(nothing)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--check", metavar="BIN")
    parser.add_argument("--no-export", action="store_true",
                        help="keep the existing files")
    parser.add_argument("--table", action="store_true",
                        help="print the README's table")
    parser.add_argument("layers", nargs="*", default=list(LAYERS))
    args = parser.parse_args()
    torch.set_num_threads(2)
    rows, both = [], 0
    for name in args.layers:
        directory = os.path.join(args.out, name)
        os.makedirs(directory, exist_ok=True)
        model = build(name)
        x, y = batch(name)
        verdicts = {}
        if not args.no_export:
            reference = with_dpc_draws(model)
            torch.manual_seed(0)
            f32 = make_zoo.step(reference, x, y, torch.float32)
            torch.manual_seed(0)
            f64 = make_zoo.step(reference, x, y, torch.float64)
            allowances, note = allowance(reference, x, y)
            make_zoo.write_reference(directory, name, x, y, f32, f64,
                                     allowances)
            make_zoo.export_both(model, x[:2], directory, "vector")
            print(f"{name}: loss {f32[0]:.6f} (float64 {f64[0]:.6f}); "
                  f"{note}", flush=True)
            if args.check:
                for line in make_zoo.check(args.check, directory, name, f32,
                                           f64):
                    print("  " + line, flush=True)
                    export_name = line.split(":")[0].split("/")[1]
                    verdicts[export_name] = line.split(":", 1)[1].split(
                        ";")[0].strip()
        ops = {e: layer_ops(os.path.join(directory, e + ".onnx"))
               for e in ("legacy", "dynamo")}
        if verdicts:
            status = "; ".join(f"{e}: {v}" for e, v in verdicts.items()
                               if v != "pass") or "yes, both exports"
        else:
            status = LAYERS[name][1] or "yes, both exports"
        layer = DESCRIPTIONS.get(name, repr(model.layer))
        rows.append(f"| `{layer}` | {ops['legacy']} | {ops['dynamo']} "
                    f"| {status} |")
        both += status == "yes, both exports"
    if args.table:
        print(f"{both} of {len(rows)} train with both exporters' files "
              f"(make_layers.py --table):\n")
        print("| layer | legacy export (opset 17) | dynamo export | "
              "dpc trains it |")
        print("|---|---|---|---|")
        print("\n".join(rows))


if __name__ == "__main__":
    main()
