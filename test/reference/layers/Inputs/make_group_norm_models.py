#!/usr/bin/env python3
"""ONNX's own GroupNormalization, which neither of PyTorch 2's exporters
writes (both spell GroupNorm with InstanceNormalization), in the shape of
make_layers.py's group_norm model: x [N, 6] -> Gemm (fc_in) -> Reshape to
[N, 4, 3, 2] -> GroupNormalization(2 groups) -> Flatten -> Gemm (fc_out),
with the same parameter names, so that dpc-check-reference can hold a step
of it against PyTorch's GroupNorm step (layers/group_norm/reference).

  group_norm_op21.onnx  opset 21: scale and bias per channel ([4])
  group_norm_op18.onnx  opset 18: scale and bias per group ([2])
  group_norm_groups.onnx  3 groups of 4 channels: refused

Usage: make_group_norm_models.py OUT_DIR  (Debian's /usr/bin/python3: onnx)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def weight(name, shape):
    return numpy_helper.from_array(np.zeros(shape, np.float32), name)


def model(opset, groups, per_norm):
    nodes = [
        helper.make_node("Gemm", ["x", "fc_in.weight", "fc_in.bias"], ["h"],
                         transB=1),
        helper.make_node("Reshape", ["h", "shape"], ["view"]),
        helper.make_node("GroupNormalization",
                         ["view", "layer.weight", "layer.bias"], ["norm"],
                         name="group_norm", num_groups=groups, epsilon=1e-5),
        helper.make_node("Flatten", ["norm"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc_out.weight", "fc_out.bias"],
                         ["logits"], transB=1),
    ]
    inits = [weight("fc_in.weight", (24, 6)), weight("fc_in.bias", (24,)),
             numpy_helper.from_array(np.array([-1, 4, 3, 2], np.int64),
                                     "shape"),
             weight("layer.weight", (per_norm,)),
             weight("layer.bias", (per_norm,)),
             weight("fc_out.weight", (10, 24)), weight("fc_out.bias", (10,))]
    graph = helper.make_graph(
        nodes, "group_norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["batch", 10])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_group_norm_models")
    m.ir_version = 10 if opset >= 21 else 8
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, m in {"group_norm_op21": model(21, 2, 4),
                    "group_norm_op18": model(18, 2, 2),
                    "group_norm_groups": model(21, 3, 4)}.items():
        save(m, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
