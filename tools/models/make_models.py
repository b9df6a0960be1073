#!/usr/bin/python3
"""Build dpc's reference ONNX models with onnx.helper and numpy (no torch).

Runs at build time in CI, so it depends only on Debian's python3-onnx and
python3-numpy. Every model is written as DIR/NAME.onnx, checked with
onnx.checker and onnx.shape_inference, and reported on one line.

Opsets 18 to 21 are written as PyTorch 2's default (dynamo) exporter writes
them: IR version 10, and the global average pool as ReduceMean with its axes
as an input. Debian's ONNX 1.12 cannot check those: the model is checked in
its opset-17 form, and written in the newer one.

Models (initializer names follow torch state_dict names where natural):
  mlp        Flatten, Gemm 784->256, Relu, Gemm 256->10          (1x28x28)
  lenet      d2l LeNet with Sigmoid, Xavier-uniform init          (1x28x28)
  lenet_relu d2l LeNet with Relu, Xavier-uniform init             (1x28x28)
  resnet18   d2l ResNet-18 (3x3 stem, no max-pool), 10 classes    (1x28x28)
  resnet18_narrow  the same with 8 stem channels instead of 64: fast
             enough for multi-step equivalence tests               (1x28x28)
  resnet50   torchvision ResNet-50 v1.5, 1000 classes             (3x224x224)

Usage:
  make_models.py --out DIR [--models NAME,...] [--opset N (11..21)]
                 [--batch N | --symbolic-batch] [--no-weights] [--seed S]
"""

import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BN_EPSILON = 1e-5
# ONNX's momentum weighs the old running value: 1 - torch's momentum (0.1).
BN_MOMENTUM = 0.9
# Initializers with more elements than this are externalized by --no-weights
# (the same rule tools/models/export_torch.py uses for checked-in files).
STRIP_THRESHOLD = 64
STRIPPED_LOCATION = "stripped.bin"


class GraphBuilder:
    """Accumulates nodes and initializers; hands out unique value names."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.initializers = []
        self.counters = {}
        self.opset = 13

    def fresh(self, hint):
        n = self.counters.get(hint, 0)
        self.counters[hint] = n + 1
        return hint if n == 0 else f"{hint}_{n}"

    def param(self, name, array):
        self.initializers.append(
            numpy_helper.from_array(np.ascontiguousarray(array, np.float32),
                                    name))
        return name

    def node(self, op, inputs, hint=None, **attrs):
        out = self.fresh(hint or op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out],
                                           name=out, **attrs))
        return out

    # -- Layers ---------------------------------------------------------

    def conv(self, x, prefix, cin, cout, k, stride=1, pad=0, bias=True,
             init="kaiming_fan_out"):
        shape = (cout, cin, k, k)
        fan_in, fan_out = cin * k * k, cout * k * k
        if init == "kaiming_fan_out":
            # nn.init.kaiming_normal_(mode="fan_out", nonlinearity="relu")
            w = self.rng.normal(0.0, math.sqrt(2.0 / fan_out), shape)
        elif init == "xavier":
            w = xavier_uniform(self.rng, shape, fan_in, fan_out)
        else:
            raise ValueError(init)
        inputs = [x, self.param(prefix + ".weight", w)]
        if bias:
            inputs.append(self.param(prefix + ".bias", np.zeros(cout)))
        return self.node("Conv", inputs, hint=prefix.replace(".", "_"),
                         kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4)

    def batch_norm(self, x, prefix, channels):
        # Scale 1, bias 0, running mean 0, running var 1, in training form
        # as PyTorch's legacy exporter writes it in training mode: the
        # updated statistics as extra outputs (before opset 14 with the
        # batch statistics; from 14 with training_mode=1). PyTorch 2's
        # exporter (opset 18+) writes the inference form.
        inputs = [
            x,
            self.param(prefix + ".weight", np.ones(channels)),
            self.param(prefix + ".bias", np.zeros(channels)),
            self.param(prefix + ".running_mean", np.zeros(channels)),
            self.param(prefix + ".running_var", np.ones(channels)),
        ]
        attrs = dict(epsilon=BN_EPSILON, momentum=BN_MOMENTUM)
        if self.opset >= 18:
            return self.node("BatchNormalization", inputs,
                             hint=prefix.replace(".", "_"), **attrs)
        out = self.fresh(prefix.replace(".", "_"))
        statistics = 4 if self.opset < 14 else 2
        if self.opset >= 14:
            attrs["training_mode"] = 1
        self.nodes.append(helper.make_node(
            "BatchNormalization", inputs,
            [out] + [f"{out}_statistics_{i}" for i in range(statistics)],
            name=out, **attrs))
        return out

    def linear(self, x, prefix, fin, fout, init):
        shape = (fout, fin)
        if init == "normal001":
            w = self.rng.normal(0.0, 0.01, shape)
            b = np.zeros(fout)
        elif init == "xavier":
            w = xavier_uniform(self.rng, shape, fin, fout)
            b = np.zeros(fout)
        elif init == "torch_default":
            # nn.Linear.reset_parameters: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
            bound = 1.0 / math.sqrt(fin)
            w = self.rng.uniform(-bound, bound, shape)
            b = self.rng.uniform(-bound, bound, fout)
        else:
            raise ValueError(init)
        return self.node("Gemm", [x, self.param(prefix + ".weight", w),
                                  self.param(prefix + ".bias", b)],
                         hint=prefix.replace(".", "_"), transB=1)

    def global_pool(self, x):
        """The mean over H and W, kept as 1 x 1."""
        if self.opset < 18:
            return self.node("GlobalAveragePool", [x])
        axes = self.fresh("axes")
        self.nodes.append(helper.make_node(
            "Constant", [], [axes],
            value=helper.make_tensor(axes, TensorProto.INT64, [2], [-1, -2])))
        return self.node("ReduceMean", [x, axes], keepdims=1)

    def act(self, x, op):
        return self.node(op, [x])


def xavier_uniform(rng, shape, fan_in, fan_out):
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-bound, bound, shape)


# -- Models -------------------------------------------------------------
# Each builder takes (GraphBuilder, input name) and returns
# (output name, input shape without batch, number of classes).


def build_mlp(g, x):
    h = g.node("Flatten", [x], axis=1)
    h = g.linear(h, "fc1", 784, 256, "normal001")
    h = g.act(h, "Relu")
    return g.linear(h, "fc2", 256, 10, "normal001")


def build_lenet(g, x, act="Sigmoid"):
    h = g.act(g.conv(x, "conv1", 1, 6, 5, pad=2, init="xavier"), act)
    h = g.node("AveragePool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = g.act(g.conv(h, "conv2", 6, 16, 5, init="xavier"), act)
    h = g.node("AveragePool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = g.node("Flatten", [h], axis=1)
    h = g.act(g.linear(h, "fc1", 400, 120, "xavier"), act)
    h = g.act(g.linear(h, "fc2", 120, 84, "xavier"), act)
    return g.linear(h, "fc3", 84, 10, "xavier")


def d2l_residual(g, x, prefix, cin, cout, stride, use_1x1conv):
    """d2l's Residual: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut)."""
    y = g.conv(x, prefix + ".conv1", cin, cout, 3, stride, 1, bias=False)
    y = g.act(g.batch_norm(y, prefix + ".bn1", cout), "Relu")
    y = g.conv(y, prefix + ".conv2", cout, cout, 3, 1, 1, bias=False)
    y = g.batch_norm(y, prefix + ".bn2", cout)
    if use_1x1conv:
        x = g.conv(x, prefix + ".conv3", cin, cout, 1, stride, 0, bias=False)
    return g.act(g.node("Add", [y, x]), "Relu")


def build_resnet18(g, x, width=64):
    h = g.conv(x, "conv1", 1, width, 3, 1, 1, bias=False)
    h = g.act(g.batch_norm(h, "bn1", width), "Relu")
    cin = width
    for stage, cout in enumerate([width, 2 * width, 4 * width, 8 * width],
                                 start=1):
        for i in range(2):
            first = i == 0 and stage > 1
            h = d2l_residual(g, h, f"layer{stage}.{i}", cin if first else cout,
                             cout, 2 if first else 1, first)
        cin = cout
    h = g.global_pool(h)
    h = g.node("Flatten", [h], axis=1)
    return g.linear(h, "fc", 8 * width, 10, "torch_default")


def bottleneck(g, x, prefix, cin, width, stride, downsample):
    """torchvision Bottleneck (v1.5: the stride is on the 3x3 conv)."""
    cout = width * 4
    y = g.conv(x, prefix + ".conv1", cin, width, 1, bias=False)
    y = g.act(g.batch_norm(y, prefix + ".bn1", width), "Relu")
    y = g.conv(y, prefix + ".conv2", width, width, 3, stride, 1, bias=False)
    y = g.act(g.batch_norm(y, prefix + ".bn2", width), "Relu")
    y = g.conv(y, prefix + ".conv3", width, cout, 1, bias=False)
    y = g.batch_norm(y, prefix + ".bn3", cout)
    if downsample:
        x = g.conv(x, prefix + ".downsample.0", cin, cout, 1, stride,
                   bias=False)
        x = g.batch_norm(x, prefix + ".downsample.1", cout)
    return g.act(g.node("Add", [y, x]), "Relu")


def build_resnet50(g, x):
    h = g.conv(x, "conv1", 3, 64, 7, 2, 3, bias=False)
    h = g.act(g.batch_norm(h, "bn1", 64), "Relu")
    h = g.node("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2],
               pads=[1, 1, 1, 1])
    cin = 64
    for stage, (width, blocks) in enumerate(
            [(64, 3), (128, 4), (256, 6), (512, 3)], start=1):
        for i in range(blocks):
            stride = 2 if i == 0 and stage > 1 else 1
            h = bottleneck(g, h, f"layer{stage}.{i}", cin, width, stride,
                           downsample=i == 0)
            cin = width * 4
    h = g.global_pool(h)
    h = g.node("Flatten", [h], axis=1)
    return g.linear(h, "fc", 2048, 1000, "torch_default")


MODELS = {
    # name: (builder, input shape without batch, classes)
    "mlp": (build_mlp, (1, 28, 28), 10),
    "lenet": (build_lenet, (1, 28, 28), 10),
    "lenet_relu": (lambda g, x: build_lenet(g, x, "Relu"), (1, 28, 28), 10),
    "resnet18": (build_resnet18, (1, 28, 28), 10),
    "resnet18_narrow": (lambda g, x: build_resnet18(g, x, 8), (1, 28, 28), 10),
    "resnet50": (build_resnet50, (3, 224, 224), 1000),
}


def strip_weights(model, threshold=STRIP_THRESHOLD):
    """Externalize the data of every initializer with > threshold elements.

    Dims and data type stay; the bytes are dropped and the tensor points at
    a file that does not exist, so the model is only good for import tests.
    """
    for t in model.graph.initializer:
        if math.prod(t.dims) <= threshold:
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


def make_model(name, opset, batch, seed):
    builder, in_shape, classes = MODELS[name]
    # One generator per model, so a model does not depend on --models order.
    g = GraphBuilder(np.random.default_rng(seed))
    g.opset = opset
    out = builder(g, "x")
    # The last node computes the result: give it the public output name.
    assert g.nodes[-1].output[0] == out
    g.nodes[-1].output[0] = "logits"
    graph = helper.make_graph(
        g.nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       [batch, *in_shape])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       [batch, classes])],
        initializer=g.initializers)
    model = helper.make_model(
        graph, producer_name="dpc make_models.py",
        opset_imports=[helper.make_opsetid("", opset)])
    if opset >= 18:
        model.ir_version = 10  # as PyTorch 2's dynamo exporter writes
    return model


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--models", default=",".join(MODELS),
                   help="comma-separated subset of: " + ",".join(MODELS))
    p.add_argument("--opset", type=int, default=13,
                   help="default ONNX opset (11..21, default 13)")
    b = p.add_mutually_exclusive_group()
    b.add_argument("--batch", type=int,
                   help="static batch size (default: symbolic 'batch')")
    b.add_argument("--symbolic-batch", action="store_true",
                   help="symbolic batch dimension named 'batch' (default)")
    p.add_argument("--no-weights", action="store_true",
                   help="externalize initializers with > %d elements "
                        "(dims/dtype kept, data dropped)" % STRIP_THRESHOLD)
    p.add_argument("--seed", type=int, default=0, help="numpy seed")
    args = p.parse_args(argv)

    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        p.error("unknown model(s): %s (known: %s)"
                % (",".join(unknown), ",".join(MODELS)))
    if not 11 <= args.opset <= 21:
        p.error("--opset must be in 11..21")
    if args.batch is not None and args.batch < 1:
        p.error("--batch must be positive")
    batch = args.batch if args.batch is not None else "batch"

    os.makedirs(args.out, exist_ok=True)
    for name in names:
        model = make_model(name, args.opset, batch, args.seed)
        # ONNX 1.12 knows opsets up to 17: check the same graph there.
        checked = make_model(name, min(args.opset, 17), batch, args.seed)
        onnx.checker.check_model(checked, full_check=True)
        onnx.shape_inference.infer_shapes(checked, check_type=True,
                                          strict_mode=True)
        if args.no_weights:
            # After this the checker would look for stripped.bin: the model
            # was checked above, and stripping changes no dims or types.
            strip_weights(model)
        path = os.path.join(args.out, name + ".onnx")
        # Plain serialization: onnx.save would try to resolve external data.
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        params = sum(math.prod(t.dims) for t in model.graph.initializer)
        print(f"wrote {path}: opset {args.opset}, "
              f"{len(model.graph.node)} nodes, {params} parameters, "
              f"{os.path.getsize(path)} bytes"
              + (" (weights stripped)" if args.no_weights else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
