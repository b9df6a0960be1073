#!/usr/bin/env python3
"""Writes small ONNX models whose ops changed form across opsets.

Usage: make_versioned_models.py OUT_DIR    (Debian's /usr/bin/python3)

Pad takes `axes` as an input from opset 18; Dropout's ratio and
training_mode are inputs from opset 12; ReduceMean takes its axes as an
attribute before opset 18 and as an input from it on. Opset 18+ models get
IR version 10, as PyTorch 2's default exporter writes them.
"""
from onnx import TensorProto, helper
from write_models import write_models


def model(nodes, in_shape, out_shape, opset):
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
    m = helper.make_model(graph, producer_name="make_versioned_models",
                          opset_imports=[helper.make_opsetid("", opset)])
    if opset >= 18:
        m.ir_version = 10
    return m


def ints(name, values):
    return helper.make_node(
        "Constant", [], [name],
        value=helper.make_tensor(name, TensorProto.INT64, [len(values)],
                                 values))


def floats(name, value):
    return helper.make_node(
        "Constant", [], [name],
        value=helper.make_tensor(name, TensorProto.FLOAT, [], [value]))


MODELS = {
    # Split's sizes: an input at opset 13, equal parts from num_outputs at
    # 18; Concat joins the parts back in another order.
    "split_13": model(
        [ints("sizes", [1, 3]),
         helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
         helper.make_node("Concat", ["b", "a"], ["y"], axis=-1)],
        ["batch", 4], ["batch", 4], 13),
    "split_18": model(
        [helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2),
         helper.make_node("Concat", ["b", "a"], ["y"], axis=1)],
        ["batch", 4], ["batch", 4], 18),
    # Transpose keeps the batch at dim 0 ...
    "transpose": model(
        [helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])],
        ["batch", 3, 4, 5], ["batch", 4, 5, 3], 13),
    # ... or moves the batch (the default permutation reverses every dim).
    "transpose_batch": model(
        [helper.make_node("Transpose", ["x"], ["y"], name="t")],
        ["batch", 3], [3, "batch"], 13),
    # Clip's bounds are optional inputs from opset 11: both, then only max.
    "clip_13": model(
        [floats("lo", -1.0), floats("hi", 2.5),
         helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
        ["batch", 4], ["batch", 4], 13),
    "clip_max_only_13": model(
        [floats("hi", 6.0), helper.make_node("Clip", ["x", "", "hi"], ["y"])],
        ["batch", 4], ["batch", 4], 13),
    # ONNX's HardSigmoid defaults (alpha 0.2, beta 0.5: the op's too) and
    # HardSwish.
    "hard_13": model(
        [helper.make_node("HardSigmoid", ["x"], ["h"]),
         helper.make_node("HardSwish", ["h"], ["y"])],
        ["batch", 4], ["batch", 4], 14),
    # Gelu is an op from opset 20, with the tanh approximation as an option.
    "gelu_20": model(
        [helper.make_node("Gelu", ["x"], ["g"]),
         helper.make_node("Gelu", ["g"], ["y"], approximate="tanh")],
        ["batch", 4], ["batch", 4], 20),
    # Dropout: ratio and training_mode are inputs from opset 12 (without
    # training_mode, or with it false, the identity); before, ratio is an
    # attribute and the op trains. The mask output stays unread.
    "dropout_13": model(
        [floats("ratio", 0.25),
         helper.make_node("Constant", [], ["train"],
                          value=helper.make_tensor("train", TensorProto.BOOL,
                                                   [], [True])),
         helper.make_node("Dropout", ["x", "ratio", "train"], ["d", "mask"]),
         helper.make_node("Dropout", ["d", "ratio"], ["e"]),
         helper.make_node("Dropout", ["e"], ["y"])],
        ["batch", 4], ["batch", 4], 13),
    "dropout_11": model(
        [helper.make_node("Dropout", ["x"], ["d"], ratio=0.1),
         helper.make_node("Dropout", ["d"], ["y"])],
        ["batch", 4], ["batch", 4], 11),
    "dropout_mask_read": model(
        [helper.make_node("Dropout", ["x"], ["d", "mask"], ratio=0.1),
         helper.make_node("Identity", ["mask"], ["y"])],
        ["batch", 4], ["batch", 4], 11),
    # Stochastic depth as PyTorch 1.13-2's legacy exporter writes it: an
    # [n, 1, 1] fill of the batch's shape, uniform noise, < keep, / keep.
    "stochastic_depth": model(
        [ints("zero", [0]), ints("ones", [1, 1]),
         helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
         helper.make_node("Concat", ["n", "ones"], ["mask_shape"], axis=0),
         helper.make_node("ConstantOfShape", ["mask_shape"], ["fill"]),
         helper.make_node("RandomUniformLike", ["fill"], ["noise"]),
         floats("keep", 0.8),
         helper.make_node("Less", ["noise", "keep"], ["bernoulli"]),
         helper.make_node("Cast", ["bernoulli"], ["mask"],
                          to=TensorProto.FLOAT),
         helper.make_node("Div", ["mask", "keep"], ["scaled"]),
         helper.make_node("Mul", ["x", "scaled"], ["y"])],
        ["batch", 3, 4], ["batch", 3, 4], 13),
    # A mask of [n, 1, 4] on [n, 3, 4] (neither per element, row nor
    # channel), and a mask plus one scaling a tensor, are refused.
    "mask_per_column": model(
        [ints("zero", [0]), ints("cols", [1, 4]),
         helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
         helper.make_node("Concat", ["n", "cols"], ["mask_shape"], axis=0),
         helper.make_node("ConstantOfShape", ["mask_shape"], ["fill"]),
         helper.make_node("RandomUniformLike", ["fill"], ["noise"]),
         floats("keep", 0.8),
         helper.make_node("Less", ["noise", "keep"], ["bernoulli"]),
         helper.make_node("Cast", ["bernoulli"], ["mask"],
                          to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "mask"], ["y"], name="mul")],
        ["batch", 3, 4], ["batch", 3, 4], 13),
    "mask_offset": model(
        [helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("ConstantOfShape", ["shape"], ["fill"]),
         helper.make_node("RandomUniformLike", ["fill"], ["noise"]),
         floats("keep", 0.8), floats("one", 1.0),
         helper.make_node("Less", ["noise", "keep"], ["bernoulli"]),
         helper.make_node("Cast", ["bernoulli"], ["mask"],
                          to=TensorProto.FLOAT),
         helper.make_node("Add", ["mask", "one"], ["shifted"]),
         helper.make_node("Mul", ["x", "shifted"], ["y"], name="mul")],
        ["batch", 4], ["batch", 4], 13),
    # Col2Im (torch.nn.Fold) with stride 2 is refused.
    "col2im_strided": model(
        [ints("image", [3, 3]), ints("block", [1, 1]),
         helper.make_node("Col2Im", ["x", "image", "block"], ["y"],
                          name="col2im", strides=[2, 2])],
        ["batch", 2, 4], ["batch", 2, 3, 3], 18),
    # Noise used for anything but a mask is refused.
    "noise_misused": model(
        [helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("ConstantOfShape", ["shape"], ["fill"]),
         helper.make_node("RandomUniformLike", ["fill"], ["noise"]),
         helper.make_node("Add", ["x", "noise"], ["y"], name="add")],
        ["batch", 4], ["batch", 4], 13),
    # GELU as PyTorch's legacy exporter writes it; division by a constant
    # becomes a product with its reciprocal, and other division is refused.
    "gelu_erf_13": model(
        [floats("sqrt2", 1.4142135381698608), floats("one", 1.0),
         floats("half", 0.5),
         helper.make_node("Div", ["x", "sqrt2"], ["d"]),
         helper.make_node("Erf", ["d"], ["e"]),
         helper.make_node("Add", ["e", "one"], ["a"]),
         helper.make_node("Mul", ["x", "a"], ["m"]),
         helper.make_node("Mul", ["m", "half"], ["y"])],
        ["batch", 4], ["batch", 4], 13),
    "erf_13": model([helper.make_node("Erf", ["x"], ["y"])],
                    ["batch", 4], ["batch", 4], 13),
    "div_tensor": model(
        [helper.make_node("Div", ["x", "x"], ["y"], name="div")],
        ["batch", 4], ["batch", 4], 13),
    # LayerNormalization is an op from opset 17: over the last two dims
    # here, with its statistics outputs left unread.
    "layer_norm_17": model(
        [helper.make_node("Constant", [], ["scale"],
                          value=helper.make_tensor("scale", TensorProto.FLOAT,
                                                   [3, 4], [1.0] * 12)),
         helper.make_node("LayerNormalization", ["x", "scale"],
                          ["y", "mean", "invstd"], axis=-2, epsilon=1e-6)],
        ["batch", 3, 4], ["batch", 3, 4], 17),
    "layer_norm_batch_axis": model(
        [helper.make_node("Constant", [], ["scale"],
                          value=helper.make_tensor("scale", TensorProto.FLOAT,
                                                   [4], [1.0] * 4)),
         helper.make_node("LayerNormalization", ["x", "scale"], ["y"],
                          axis=0, name="ln")],
        [2, 4], [2, 4], 17),
    # Pads only H and W (axes -2, -1)    # Pads only H and W (axes -2, -1): 1 before and 2 after H, 3 and 4 on W.
    "pad_axes_18": model(
        [ints("pads", [1, 3, 2, 4]), ints("axes", [-2, -1]),
         helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"])],
        ["batch", 2, 4, 4], ["batch", 2, 7, 11], 18),
    # The spatial mean without the kept dims: [n, c].
    "reduce_mean_13": model(
        [helper.make_node("ReduceMean", ["x"], ["y"], axes=[2, 3],
                          keepdims=0)],
        ["batch", 3, 4, 4], ["batch", 3], 13),
    "reduce_mean_18": model(
        [ints("axes", [3, 2]),
         helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)],
        ["batch", 3, 4, 4], ["batch", 3], 18),
}


if __name__ == "__main__":
    write_models(MODELS)
