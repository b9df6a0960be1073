#!/usr/bin/python3
"""Export real torch.onnx.export graphs that dpc's ONNX importer must accept.

Needs Debian's python3-torch (1.13; torchvision is not required: the models
are defined here with torchvision's / d2l's module names, so initializer
names are the torch state_dict names).

Each SPEC is MODEL:OPSETS:MODES, e.g. resnet18:11,13,17:eval,train, and
writes OUT/MODEL_opsetN_MODE.onnx for every opset and mode. Without SPECs,
the set checked in under test/frontend/onnx/Inputs/ is written.

  eval    training=TrainingMode.EVAL, torch's default constant folding:
          torch fuses every BatchNormalization into the preceding Conv
          (with or without constant folding)
  evalbn  model.eval(), training=TrainingMode.PRESERVE, no folding: keeps
          BatchNormalization in inference form (torch then deduplicates
          equal initializers through Identity nodes)
  train   training=TrainingMode.TRAINING, do_constant_folding=False:
          BatchNormalization in training form

The batch dimension is dynamic ("batch") on the input "x" and the output
"logits". Initializers with more than --strip-threshold elements lose their
data (dims and dtype kept, data_location EXTERNAL pointing at a file that
does not exist) unless the model is small (mlp, lenet) or --keep-weights is
given, so the files stay small enough for git. A summary of node op types
(and BatchNormalization forms) is printed per file.

Usage:
  export_torch.py --out DIR [--keep-weights] [--strip-threshold N]
                  [--summary FILE.md] [SPEC ...]
"""

import argparse
import collections
import io
import math
import os
import sys
import warnings

import onnx
import torch
from onnx import TensorProto
from torch import nn
from torch.nn import functional as F

DEFAULT_SPECS = [
    "resnet18:11,13,17:eval,train",
    "resnet18:13,17:evalbn",
    "resnet50:13:eval,train",
    "resnet50:17:train",
    "mlp:13:eval",
    "lenet:13:eval",
]
STRIPPED_LOCATION = "stripped.bin"


# -- d2l models (nn.Sequential, as in the d2l book) ------------------------


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def lenet():
    return nn.Sequential(
        nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(),
        nn.Linear(120, 84), nn.Sigmoid(),
        nn.Linear(84, 10))


class Residual(nn.Module):
    """d2l.Residual (d2l.torch), unchanged: its convs keep their bias."""

    def __init__(self, input_channels, num_channels, use_1x1conv=False,
                 strides=1):
        super().__init__()
        self.conv1 = nn.Conv2d(input_channels, num_channels, kernel_size=3,
                               padding=1, stride=strides)
        self.conv2 = nn.Conv2d(num_channels, num_channels, kernel_size=3,
                               padding=1)
        if use_1x1conv:
            self.conv3 = nn.Conv2d(input_channels, num_channels,
                                   kernel_size=1, stride=strides)
        else:
            self.conv3 = None
        self.bn1 = nn.BatchNorm2d(num_channels)
        self.bn2 = nn.BatchNorm2d(num_channels)

    def forward(self, X):
        Y = F.relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        Y += X
        return F.relu(Y)


def resnet18(num_classes=10, in_channels=1):
    """The slightly modified ResNet-18 of d2l's multi-GPU chapter (seed)."""
    def resnet_block(in_channels, out_channels, num_residuals,
                     first_block=False):
        blk = []
        for i in range(num_residuals):
            if i == 0 and not first_block:
                blk.append(Residual(in_channels, out_channels,
                                    use_1x1conv=True, strides=2))
            else:
                blk.append(Residual(out_channels, out_channels))
        return nn.Sequential(*blk)

    # Smaller kernel, stride and padding; no max-pool.
    net = nn.Sequential(
        nn.Conv2d(in_channels, 64, kernel_size=3, stride=1, padding=1),
        nn.BatchNorm2d(64),
        nn.ReLU())
    net.add_module("resnet_block1", resnet_block(64, 64, 2, first_block=True))
    net.add_module("resnet_block2", resnet_block(64, 128, 2))
    net.add_module("resnet_block3", resnet_block(128, 256, 2))
    net.add_module("resnet_block4", resnet_block(256, 512, 2))
    net.add_module("global_avg_pool", nn.AdaptiveAvgPool2d((1, 1)))
    net.add_module("fc", nn.Sequential(nn.Flatten(),
                                       nn.Linear(512, num_classes)))
    return net


# -- torchvision ResNet-50 (v1.5), same module names as torchvision --------


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1,
                               bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1,
                               bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, layers=(3, 4, 6, 3), num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3,
                               bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * Bottleneck.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out",
                                        nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * Bottleneck.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * Bottleneck.expansion, 1,
                          stride=stride, bias=False),
                nn.BatchNorm2d(planes * Bottleneck.expansion))
        layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * Bottleneck.expansion
        layers += [Bottleneck(self.inplanes, planes)
                   for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def resnet50():
    return ResNet()


def xavier_init(module):
    if isinstance(module, (nn.Linear, nn.Conv2d)):
        nn.init.xavier_uniform_(module.weight)
        nn.init.zeros_(module.bias)


MODELS = {
    # name: (constructor, input shape without batch, keep full weights)
    "mlp": (mlp, (1, 28, 28), True),
    "lenet": (lambda: lenet().apply(xavier_init), (1, 28, 28), True),
    "resnet18": (resnet18, (1, 28, 28), False),
    "resnet50": (resnet50, (3, 224, 224), False),
}
MODES = {
    # name: (export's training argument, model.train(...), constant folding)
    "eval": (torch.onnx.TrainingMode.EVAL, False, True),
    "evalbn": (torch.onnx.TrainingMode.PRESERVE, False, False),
    "train": (torch.onnx.TrainingMode.TRAINING, True, False),
}


# -- Export, strip, summarize ---------------------------------------------


def export(name, opset, mode):
    ctor, in_shape, _ = MODELS[name]
    torch.manual_seed(0)
    model = ctor()
    training, train_flag, fold = MODES[mode]
    model.train(train_flag)
    x = torch.randn(2, *in_shape)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        # In training mode torch drops each BatchNorm's in-place
        # num_batches_tracked += 1 and says so once per layer.
        warnings.filterwarnings("ignore", "ONNX Preprocess - Removing")
        torch.onnx.export(
            model, x, buf, opset_version=opset, training=training,
            do_constant_folding=fold, input_names=["x"],
            output_names=["logits"],
            dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
    return onnx.load_from_string(buf.getvalue())


def strip_weights(model, threshold, names=None):
    """Drop the data of initializers with > threshold elements (and, given
    `names`, only of those named there); keep the dims and data type, and
    point them at a nonexistent external file."""
    stripped = 0
    for t in model.graph.initializer:
        if math.prod(t.dims) <= threshold or (names is not None and
                                              t.name not in names):
            continue
        nbytes = len(t.raw_data) if t.HasField("raw_data") else \
            math.prod(t.dims) * 4
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        for key, value in (("location", STRIPPED_LOCATION), ("offset", "0"),
                           ("length", str(nbytes))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        stripped += 1
    return stripped


def summarize(model):
    """Op-type counts, plus each distinct BatchNormalization form."""
    ops = collections.Counter(n.op_type for n in model.graph.node)
    bn_forms = collections.Counter()
    for n in model.graph.node:
        if n.op_type == "BatchNormalization":
            attrs = ", ".join(
                f"{a.name}={onnx.helper.get_attribute_value(a):.6g}"
                for a in sorted(n.attribute, key=lambda a: a.name))
            used = sum(1 for o in n.output if o)
            bn_forms[f"{len(n.input)} inputs, {used} outputs, {attrs}"] += 1
    return ops, bn_forms


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("specs", nargs="*", metavar="SPEC",
                   help="MODEL:OPSETS:MODES, e.g. resnet18:11,13:eval,train "
                        "(default: %s)" % " ".join(DEFAULT_SPECS))
    p.add_argument("--keep-weights", action="store_true",
                   help="never strip initializer data")
    p.add_argument("--strip-threshold", type=int, default=64,
                   help="strip initializers with more elements (default 64)")
    p.add_argument("--summary", help="also write the op summary (markdown)")
    args = p.parse_args(argv)

    jobs = []
    for spec in args.specs or DEFAULT_SPECS:
        try:
            name, opsets, modes = spec.split(":")
            opsets = [int(o) for o in opsets.split(",")]
        except ValueError:
            p.error(f"bad SPEC '{spec}': expected MODEL:OPSETS:MODES")
        modes = modes.split(",")
        if name not in MODELS:
            p.error(f"unknown model '{name}' (known: {','.join(MODELS)})")
        for m in modes:
            if m not in MODES:
                p.error(f"unknown mode '{m}' (known: {','.join(MODES)})")
        jobs += [(name, o, m) for o in opsets for m in modes]

    os.makedirs(args.out, exist_ok=True)
    lines = [f"torch {torch.__version__}, onnx {onnx.__version__}", ""]
    for name, opset, mode in jobs:
        model = export(name, opset, mode)
        onnx.checker.check_model(model, full_check=True)
        stripped = 0
        if not (args.keep_weights or MODELS[name][2]):
            stripped = strip_weights(model, args.strip_threshold)
        path = os.path.join(args.out, f"{name}_opset{opset}_{mode}.onnx")
        # Plain serialization: onnx.save would try to resolve external data.
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        ops, bn_forms = summarize(model)
        print(f"wrote {path}: {os.path.getsize(path)} bytes, "
              f"{len(model.graph.node)} nodes, "
              f"{len(model.graph.initializer)} initializers "
              f"({stripped} stripped)")
        lines.append(f"{os.path.basename(path)}: "
                     + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
        lines += [f"  BatchNormalization x{v}: {k}"
                  for k, v in sorted(bn_forms.items())]
    print("\n".join(lines))
    if args.summary:
        with open(args.summary, "w") as f:
            f.write("```\n" + "\n".join(lines) + "\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
