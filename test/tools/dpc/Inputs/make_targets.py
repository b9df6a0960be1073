#!/usr/bin/env python3
"""Models and data sets for targets.test: training on targets beyond one
class per sample. OUT/tokens.onnx (Embedding(20, 8), a linear layer to 5
classes per token: [N, 6] ids -> [N, 6, 5]) with OUT/tokens.npy and
OUT/token_targets.npy (each position's class is its id mod 5, a quarter of
them -100, ignored); OUT/pixels.onnx (a 1x1 convolution, [N, 3, 4, 4] ->
[N, 3, 4, 4]) with OUT/pixels.npy and OUT/pixel_targets.npy ([N, 4, 4],
each pixel's class its largest channel); OUT/regress.onnx (Flatten, a
linear layer: [N, 2, 4, 4] -> [N, 3]) with OUT/regress.npy and
OUT/regress_targets.npy (float [N, 3], a linear map of the inputs). Bad
files: OUT/short_targets.npy ([N, 5] for [N, 6]), OUT/float_targets.npy
(float token targets), OUT/int_targets.npy (integer regression targets)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)


def save_model(name, nodes, inputs, output, weights):
    graph = helper.make_graph(
        nodes, name, inputs, [output],
        [numpy_helper.from_array(w.astype(np.float32), n)
         for n, w in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


def linear(fan_in, fan_out):
    bound = 1 / np.sqrt(fan_in)
    return (rng.uniform(-bound, bound, (fan_in, fan_out)),
            rng.uniform(-bound, bound, fan_out))


# Per token: [N, 6] ids -> Embedding -> MatMul -> [N, 6, 5].
w, b = linear(8, 5)
save_model(
    "tokens",
    [helper.make_node("Gather", ["embed", "ids"], ["e"]),
     helper.make_node("MatMul", ["e", "w"], ["m"]),
     helper.make_node("Add", ["m", "b"], ["logits"])],
    [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 6])],
    helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 6, 5]),
    {"embed": rng.normal(0, 1, (20, 8)), "w": w, "b": b})
ids = rng.integers(0, 20, (100, 6)).astype(np.int64)
targets = ids % 5
targets[rng.random(targets.shape) < 0.25] = -100
np.save(os.path.join(out, "tokens.npy"), ids)
np.save(os.path.join(out, "token_targets.npy"), targets)
np.save(os.path.join(out, "short_targets.npy"), targets[:, :5])
np.save(os.path.join(out, "float_targets.npy"), targets.astype(np.float32))

# Per pixel: a 1x1 convolution, 3 channels -> 3 classes at dim 1.
save_model(
    "pixels",
    [helper.make_node("Conv", ["x", "w", "b"], ["logits"])],
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4, 4])],
    helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 3, 4, 4]),
    {"w": rng.uniform(-0.5, 0.5, (3, 3, 1, 1)),
     "b": rng.uniform(-0.5, 0.5, 3)})
x = rng.normal(0, 1, (100, 3, 4, 4)).astype(np.float32)
np.save(os.path.join(out, "pixels.npy"), x)
np.save(os.path.join(out, "pixel_targets.npy"), x.argmax(1).astype(np.int64))

# Regression: Flatten, Gemm to 3 floats; targets a linear map of x.
w, b = linear(32, 3)
save_model(
    "regress",
    [helper.make_node("Flatten", ["x"], ["f"]),
     helper.make_node("Gemm", ["f", "w", "b"], ["y"])],
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, 4, 4])],
    helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3]),
    {"w": w, "b": b})
x = rng.normal(0, 1, (100, 2, 4, 4)).astype(np.float32)
y = x.reshape(100, 32) @ rng.normal(0, 0.3, (32, 3)) + 0.5
np.save(os.path.join(out, "regress.npy"), x)
np.save(os.path.join(out, "regress_targets.npy"), y.astype(np.float32))
np.save(os.path.join(out, "int_targets.npy"), np.rint(y).astype(np.int64))
