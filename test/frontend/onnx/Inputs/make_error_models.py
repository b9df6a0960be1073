#!/usr/bin/env python3
"""Writes small ONNX models that dpc must reject, each with one fault.

Usage: make_error_models.py OUT_DIR    (Debian's /usr/bin/python3: onnx 1.12)
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
from write_models import write_models


def model(nodes, inputs, outputs, inits=(), opset=13, ir_version=None):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)],
        producer_name="make_error_models")
    if ir_version is not None:
        m.ir_version = ir_version
    return m


def short_weight(name, shape):
    """A float initializer with one value too few for its dims."""
    t = weight(name, shape)
    t.raw_data = t.raw_data[:-4]
    return t


def x(shape=("batch", 4)):
    return helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))


def y(shape=("batch", 4)):
    return helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))


def constant(name, array):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(array, name))


def weight(name, shape):
    return numpy_helper.from_array(np.ones(shape, np.float32), name)


MODELS = {
    # torch.onnx.export(..., export_params=False): the weights are graph
    # inputs with fixed dims, not initializers.
    "weight_as_input": model(
        [helper.make_node("Gemm", ["x", "w"], ["y"], transB=1,
                          name="fc")],
        [x(), helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 4])],
        [y()]),
    # An op dpc does not know.
    "unsupported_op": model(
        [helper.make_node("Sinh", ["x"], ["y"], name="sinh_1")], [x()], [y()]),
    # Too old an opset.
    "opset9": model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [x()], [y()],
        opset=9),
    # Too new an opset, and too new an IR version.
    "opset22": model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [x()], [y()],
        opset=22, ir_version=10),
    "ir11": model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu_1")], [x()], [y()],
        opset=18, ir_version=11),
    # Nodes out of topological order.
    "unsorted": model(
        [helper.make_node("Relu", ["t"], ["y"], name="second"),
         helper.make_node("Relu", ["x"], ["t"], name="first")], [x()], [y()]),
    # An initializer whose data does not fill its dims.
    "short_initializer": model(
        [helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)],
        [x()], [y()], [short_weight("w", (4, 4))]),
    # A mean over the batch (the batch stays open until run time), at
    # opset 18, where the axes are an input.
    "reduce_mean_batch": model(
        [helper.make_node("Constant", [], ["axes"],
                          value=helper.make_tensor("axes", TensorProto.INT64,
                                                   [1], [0])),
         helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean_n")],
        [x(("batch", 4, 2, 2))], [y((1, 4, 2, 2))], opset=18,
        ir_version=10),
    # A sum over the batch, at opset 13, where ReduceSum's axes are an input.
    "reduce_sum_batch": model(
        [helper.make_node("Constant", [], ["axes"],
                          value=helper.make_tensor("axes", TensorProto.INT64,
                                                   [1], [0])),
         helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum_n")],
        [x()], [y((1, 4))]),
    # A power whose exponent is a run-time tensor: only constant ones are.
    "pow_tensor": model(
        [helper.make_node("Pow", ["x", "x"], ["y"], name="pow_1")],
        [x()], [y()]),
    # Weights that do not fit the input: a shape error at the Gemm.
    "bad_shapes": model(
        [helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)],
        [x()], [y(("batch", 3))], [weight("w", (3, 5))]),
    # A symbolic dimension other than the batch.
    "symbolic_channels": model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu_1")],
        [x(("batch", "channels"))], [y(("batch", "channels"))]),
    # A training-mode batch-norm whose running-mean output feeds a node.
    "bn_stats_read": model(
        [helper.make_node("BatchNormalization",
                          ["x", "s", "b", "m", "v"], ["t", "rm", "rv"],
                          name="bn", training_mode=1),
         helper.make_node("Add", ["t", "rm"], ["y"], name="uses_stats")],
        [x(("batch", 4, 2, 2))], [y(("batch", 4, 2, 2))],
        [weight(n, (4,)) for n in "sbmv"], opset=15),
    # A target shape computed from the batch size (Shape folds at import,
    # the batch stays open, so arithmetic on it cannot be followed).
    "batch_arithmetic": model(
        [helper.make_node("Shape", ["x"], ["s"], name="shape_1"),
         helper.make_node("Constant", [], ["one"],
                          value=helper.make_tensor("one", TensorProto.INT64,
                                                   [2], [1, 0])),
         helper.make_node("Add", ["s", "one"], ["t"], name="grow"),
         helper.make_node("Reshape", ["x", "t"], ["y"], name="reshape_1")],
        [x()], [y()]),
    # Twice the batch is followed, but x has only one batch of rows.
    "batch_multiple_mismatch": model(
        [helper.make_node("Shape", ["x"], ["s"], name="shape_1"),
         helper.make_node("Constant", [], ["two"],
                          value=helper.make_tensor("two", TensorProto.INT64,
                                                   [2], [2, 1])),
         helper.make_node("Mul", ["s", "two"], ["t"], name="double"),
         helper.make_node("Reshape", ["x", "t"], ["y"], name="reshape_1")],
        [x()], [y()]),
    # An op that is not shape arithmetic on a tensor computed at run time.
    "expand_tensor": model(
        [helper.make_node("Constant", [], ["shape"],
                          value=helper.make_tensor("shape", TensorProto.INT64,
                                                   [2], [3, 4])),
         helper.make_node("Expand", ["x", "shape"], ["y"], name="expand_1")],
        [x((1, 4))], [y((3, 4))]),
    # Initial weights that are not finite: refused when the plan is written.
    "nan_weight": model(
        [helper.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=1)],
        [x()], [y(("batch", 3))],
        [numpy_helper.from_array(
            np.array([[0, 1, 2, 3], [4, np.nan, 6, 7], [8, 9, 10, 11]],
                     np.float32), "w")]),
    "inf_bias": model(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc",
                          transB=1)],
        [x()], [y(("batch", 3))],
        [weight("w", (3, 4)),
         numpy_helper.from_array(np.array([0, -np.inf, 1], np.float32),
                                 "b")]),
    # What a plan cannot hold, refused when it is compiled (naming the node)
    # rather than when it is loaded: a Pad of 2^40 rows, and an input that
    # is not a batch of [C, H, W] images.
    "huge_pad": model(
        [helper.make_node("Pad", ["x", "pads"], ["p"], name="huge_pad"),
         helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
         helper.make_node("Flatten", ["g"], ["f"], name="flat"),
         helper.make_node("Gemm", ["f", "w"], ["y"], name="fc", transB=1)],
        [x(("batch", 1, 8, 8))], [y(("batch", 3))],
        [numpy_helper.from_array(
            np.array([0, 0, 0, 0, 0, 0, 2**40, 0], np.int64), "pads"),
         weight("w", (3, 1))]),
    "rank5_input": model(
        [helper.make_node("Flatten", ["x"], ["f"], name="flat"),
         helper.make_node("Gemm", ["f", "w"], ["y"], name="fc", transB=1)],
        [x(("batch", 1, 2, 4, 4))], [y(("batch", 3))], [weight("w", (3, 32))]),
    # Resampling that dpc refuses in one line (ops/Resampling.cpp): a
    # reflection wider than the dim allows, cropping by negative pads, an
    # antialiased resize, a pixel shuffle whose channels the block does not
    # divide.
    "reflect_too_wide": model(
        [helper.make_node("Pad", ["x", "pads"], ["y"], name="reflect_1",
                          mode="reflect")],
        [x(("batch", 2, 4))], [y(("batch", 2, 12))],
        [numpy_helper.from_array(np.array([0, 0, 4, 0, 0, 4], np.int64),
                                 "pads")]),
    "pad_crop": model(
        [helper.make_node("Pad", ["x", "pads"], ["y"], name="crop_1")],
        [x(("batch", 2, 4))], [y(("batch", 2, 2))],
        [numpy_helper.from_array(np.array([0, 0, -1, 0, 0, -1], np.int64),
                                 "pads")]),
    "resize_antialias": model(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"],
                          name="resize_1", mode="linear", antialias=1)],
        [x(("batch", 1, 4, 4))], [y(("batch", 1, 2, 2))],
        [numpy_helper.from_array(np.array([1, 1, .5, .5], np.float32),
                                 "scales")], opset=18),
    "depth_to_space_3": model(
        [helper.make_node("DepthToSpace", ["x"], ["y"], name="shuffle_1",
                          blocksize=2, mode="CRD")],
        [x(("batch", 3, 2, 2))], [y(("batch", 1, 4, 4))]),
    # A 4-D convolution.
    "conv4d": model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_1",
                          kernel_shape=[1, 1, 1, 1])],
        [x(("batch", 1, 2, 2, 2, 2))], [y(("batch", 1, 2, 2, 2, 2))],
        [weight("w", (1, 1, 1, 1, 1, 1))]),
    # Division by a constant tensor holding a zero.
    "div_zero": model(
        [constant("d", np.array([2.0, 0.0, 1.0, 1.0], np.float32)),
         helper.make_node("Div", ["x", "d"], ["y"], name="div_1")],
        [x()], [y()]),
    # A run-time tensor cast to another type (no kernel converts one).
    "cast_tensor": model(
        [helper.make_node("Cast", ["x"], ["i"], name="to_int",
                          to=TensorProto.INT64),
         helper.make_node("Cast", ["i"], ["y"], name="to_float",
                          to=TensorProto.FLOAT)], [x()], [y()]),
    # scaled_dot_product_attention's NaN guard, Where(IsNaN(p), 0, p), after
    # a mask (tril with k = -1) that removes every entry of the first row:
    # PyTorch gives zeros there, dpc would not.
    "sdpa_empty_row": model(
        [constant("ones", np.ones((4, 4), np.float32)),
         constant("k", np.array(-1, np.int64)),
         helper.make_node("Trilu", ["ones", "k"], ["kept"], upper=0),
         constant("zero", np.array(0, np.float32)),
         helper.make_node("Equal", ["kept", "zero"], ["masked"]),
         constant("inf", np.array(-np.inf, np.float32)),
         helper.make_node("Where", ["masked", "inf", "zero"], ["mask"]),
         helper.make_node("Add", ["x", "mask"], ["scores"]),
         helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
         helper.make_node("IsNaN", ["p"], ["nan"], name="isnan"),
         helper.make_node("Where", ["nan", "zero", "p"], ["y"],
                          name="guard")],
        [x(("batch", 4, 4))], [y(("batch", 4, 4))], opset=14),
}


if __name__ == "__main__":
    write_models(MODELS)
