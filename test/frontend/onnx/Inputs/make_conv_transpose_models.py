#!/usr/bin/env python3
"""Writes ConvTranspose models: forms dpc takes (output_shape) and forms it
refuses, each with one fault.

Usage: make_conv_transpose_models.py OUT_DIR  (Debian's /usr/bin/python3)
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper
from write_models import write_models


def model(w_shape, x_shape, y_shape, **attrs):
    """x [batch, ...] -> ConvTranspose (node 'up') with a ones filter."""
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up",
                            **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["batch", *x_shape])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["batch", *y_shape])],
        [numpy_helper.from_array(np.ones(w_shape, np.float32), "w")])
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13)],
        producer_name="make_conv_transpose_models")


MODELS = {
    # output_shape instead of pads: the full 9 x 9 output cropped to 7 x 5,
    # by 1 + 1 and 2 + 2.
    "output_shape": model((2, 3, 3, 3), (2, 4, 4), (3, 7, 5), strides=[2, 2],
                          output_shape=[7, 5]),
    # The same in 3-D: a full 9 x 9 x 9 output cropped to 5 x 7 x 9.
    "output_shape3d": model((2, 3, 3, 3, 3), (2, 4, 4, 4), (3, 5, 7, 9),
                            strides=[2, 2, 2], output_shape=[5, 7, 9]),
    # Refused: each with one fault.
    "same_upper": model((2, 3, 3, 3), (2, 4, 4), (3, 8, 8), strides=[2, 2],
                        auto_pad="SAME_UPPER"),
    "conv4d": model((2, 3, 1, 1, 1, 1), (2, 2, 2, 2, 2), (3, 2, 2, 2, 2)),
    "output_padding": model((2, 3, 3, 3), (2, 4, 4), (3, 11, 9),
                            strides=[2, 2], output_padding=[2, 0]),
    "kernel_shape": model((2, 3, 3, 3), (2, 4, 4), (3, 6, 6),
                          kernel_shape=[3, 2]),
    "output_shape_odd": model((2, 3, 3, 3), (2, 4, 4), (3, 8, 9),
                              strides=[2, 2], output_shape=[8, 9]),
    "output_shape_large": model((2, 3, 3, 3), (2, 4, 4), (3, 10, 9),
                                strides=[2, 2], output_shape=[10, 9]),
    "output_shape_zero": model((2, 3, 3, 3), (2, 4, 4), (3, 1, 9),
                               strides=[2, 2], output_shape=[0, 9]),
}


if __name__ == "__main__":
    write_models(MODELS)
