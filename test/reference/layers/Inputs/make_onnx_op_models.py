#!/usr/bin/env python3
"""ONNX's own LRN and LpPool, which neither of PyTorch 2's exporters
writes (both spell LocalResponseNorm with Pad, AveragePool and Pow, and
LPPool with Pow, AveragePool, Sign, Abs and Relu), in the shape of
make_layers.py's models: x [N, 6] -> Gemm (fc_in) -> Reshape to the
layer's view -> the op -> Flatten -> Gemm (fc_out), with the same
parameter names, so that dpc-check-reference can hold a step of each
against PyTorch's step of the layer (layers/NAME/reference).

  lrn.onnx        LRN(size 3, alpha 1e-4, beta 0.75, bias 1) on [N, 4, 3]:
                  local_response_norm's
  lrn_even.onnx   LRN(size 4) on [N, 5, 2, 2]: ONNX's window, 1 channel
                  before and 2 after
  lp_pool1d.onnx  LpPool(p 2, kernel 2, stride 2) on [N, 3, 8]: lp_pool1d's
  lp_pool2d.onnx  LpPool(p 2, 2x2, stride 2) on [N, 3, 4, 4]: lp_pool2d's

Usage: make_onnx_op_models.py OUT_DIR  (Debian's /usr/bin/python3: onnx)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def weight(name, shape):
    return numpy_helper.from_array(np.zeros(shape, np.float32), name)


def model(view, layer, out_width=None):
    width = int(np.prod(view))
    nodes = [
        helper.make_node("Gemm", ["x", "fc_in.weight", "fc_in.bias"], ["h"],
                         transB=1),
        helper.make_node("Reshape", ["h", "shape"], ["view"]),
        layer,
        helper.make_node("Flatten", ["norm"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc_out.weight", "fc_out.bias"],
                         ["logits"], transB=1),
    ]
    inits = [weight("fc_in.weight", (width, 6)), weight("fc_in.bias", (width,)),
             numpy_helper.from_array(np.array([-1, *view], np.int64),
                                     "shape"),
             weight("fc_out.weight", (10, out_width or width)),
             weight("fc_out.bias", (10,))]
    graph = helper.make_graph(
        nodes, "layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["batch", 10])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="make_onnx_op_models")
    m.ir_version = 8
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    def lrn(size):
        return helper.make_node("LRN", ["view"], ["norm"], name="lrn",
                                size=size, alpha=1e-4, beta=0.75, bias=1.0)

    def lp_pool(kernel):
        return helper.make_node("LpPool", ["view"], ["norm"], name="lp_pool",
                                p=2, kernel_shape=kernel, strides=kernel)

    for name, m in {"lrn": model((4, 3), lrn(3)),
                    "lrn_even": model((5, 2, 2), lrn(4)),
                    "lp_pool1d": model((3, 8), lp_pool([2]), 12),
                    "lp_pool2d": model((3, 4, 4), lp_pool([2, 2]), 12),
                    }.items():
        save(m, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
