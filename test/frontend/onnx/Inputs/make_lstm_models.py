#!/usr/bin/env python3
"""Writes ONNX LSTM models in the forms exporters write them: sequence first
(layout 0) behind a Transpose of the batch-first input, the zero initial
state a batch-dependent ConstantOfShape, the output transposed back; and
the variants dpc imports too (bidirectional with biases and Y_h, layout 1)
or refuses (clip), and a sequence-first value read by an elementwise op.

Usage: make_lstm_models.py OUT_DIR    (Debian's /usr/bin/python3)
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper
from write_models import write_models

STEPS, FEATURES, HIDDEN = 3, 4, 5


def ints(name, values):
    return helper.make_node(
        "Constant", [], [name],
        value=helper.make_tensor(name, TensorProto.INT64, [len(values)],
                                 values))


def weights(directions, bias=True):
    rng = np.random.default_rng(0)

    def init(name, shape):
        return numpy_helper.from_array(
            rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)
    inits = [init("W", [directions, 4 * HIDDEN, FEATURES]),
             init("R", [directions, 4 * HIDDEN, HIDDEN])]
    if bias:
        inits.append(init("B", [directions, 8 * HIDDEN]))
    return inits


def zero_state(directions, element=TensorProto.FLOAT):
    """The legacy exporter's h0: zeros of [directions, batch, HIDDEN]."""
    return [helper.make_node("Shape", ["x"], ["shape"]),
            ints("zero", [0]),
            helper.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
            ints("d", [directions]), ints("h", [HIDDEN]),
            helper.make_node("Concat", ["d", "n", "h"], ["state_shape"],
                             axis=0),
            helper.make_node(
                "ConstantOfShape", ["state_shape"], ["h0"],
                value=helper.make_tensor("v", element, [1], [0]))]


def model(nodes, out_shape, inits, opset=17):
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["batch", STEPS, FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        inits)
    return helper.make_model(graph, producer_name="make_lstm_models",
                             opset_imports=[helper.make_opsetid("", opset)])


def seq_first(extra_attrs=None, after=None):
    """x -> Transpose -> LSTM (zero state) -> Squeeze -> Transpose -> the
    last step, as torch.onnx.export writes nn.LSTM(batch_first=True)."""
    attrs = dict(hidden_size=HIDDEN, **(extra_attrs or {}))
    nodes = zero_state(1) + [
        helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
        helper.make_node("LSTM", ["xt", "W", "R", "B", "", "h0", "h0"],
                         ["Y"], **attrs),
        ints("one", [1]),
        helper.make_node("Squeeze", ["Y", "one"], ["ys"]),
    ]
    nodes += after or [
        helper.make_node("Transpose", ["ys"], ["yb"], perm=[1, 0, 2]),
        helper.make_node("Constant", [], ["last"],
                         value=helper.make_tensor("last", TensorProto.INT64,
                                                  [], [-1])),
        helper.make_node("Gather", ["yb", "last"], ["y"], axis=1)]
    return nodes


MODELS = {
    "lstm_seq_first": model(seq_first(), ["batch", HIDDEN], weights(1)),
    # Both directions, the last hidden states [2, batch, H] flattened per
    # sample; no biases, no initial state.
    "lstm_bidirectional": model(
        [helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
         helper.make_node("LSTM", ["xt", "W", "R"], ["", "Y_h"],
                          hidden_size=HIDDEN, direction="bidirectional"),
         helper.make_node("Transpose", ["Y_h"], ["hb"], perm=[1, 0, 2]),
         ints("flat", [0, -1]),
         helper.make_node("Reshape", ["hb", "flat"], ["y"])],
        ["batch", 2 * HIDDEN], weights(2, bias=False)),
    # Batch first in ONNX itself (opset 14's layout attribute).
    "lstm_layout1": model(
        [helper.make_node("LSTM", ["x", "W", "R", "B"], ["Y"],
                          hidden_size=HIDDEN, layout=1),
         ints("shape", [0, STEPS * HIDDEN]),
         helper.make_node("Reshape", ["Y", "shape"], ["y"])],
        ["batch", STEPS * HIDDEN], weights(1), opset=14),
    # The dynamo exporter's forms: the zero state an Expand of a scalar to
    # a batch-dependent shape, sliced; its Shape read; the output moved
    # back by Transpose and Reshape.
    "lstm_expand_state": model(
        [helper.make_node("Shape", ["x"], ["n"], start=0, end=1),
         ints("one", [1]), ints("h", [HIDDEN]),
         helper.make_node("Concat", ["one", "n", "h"], ["state_shape"],
                          axis=0),
         helper.make_node("Constant", [], ["zero"],
                          value=helper.make_tensor("zero", TensorProto.FLOAT,
                                                   [], [0.0])),
         helper.make_node("Expand", ["zero", "state_shape"], ["zeros"]),
         ints("s0", [0]), ints("s1", [1]),
         helper.make_node("Slice", ["zeros", "s0", "s1", "s0"], ["h0"]),
         helper.make_node("Shape", ["zeros"], ["width"], start=2, end=3),
         helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
         helper.make_node("LSTM", ["xt", "W", "R", "B", "", "h0", "h0"],
                          ["Y"], hidden_size=HIDDEN),
         helper.make_node("Transpose", ["Y"], ["yt"], perm=[0, 2, 1, 3]),
         ints("steps", [STEPS]), ints("minus_one", [-1]),
         helper.make_node("Concat", ["steps", "minus_one", "width"],
                          ["merged"], axis=0),
         helper.make_node("Reshape", ["yt", "merged"], ["ym"]),
         helper.make_node("Transpose", ["ym"], ["y"], perm=[1, 0, 2])],
        ["batch", STEPS, HIDDEN], weights(1)),
    # The batch-dependent zeros read as a tensor.
    # A fill read by another op: a float one is its value repeated for
    # each sample; an integer one has no nn tensor.
    "fill_read": model(
        zero_state(1) + [helper.make_node("Add", ["h0", "h0"], ["y"])],
        [1, "batch", HIDDEN], []),
    "fill_misuse": model(
        zero_state(1, TensorProto.INT64)
        + [helper.make_node("Cast", ["h0"], ["h0f"], to=TensorProto.FLOAT),
           helper.make_node("Add", ["h0f", "h0f"], ["y"])],
        [1, "batch", HIDDEN], []),
    "lstm_clip": model(seq_first({"clip": 1.0}), ["batch", HIDDEN],
                       weights(1)),
    # The sequence-first output read by an elementwise op.
    "lstm_relu_seq_first": model(
        seq_first(after=[helper.make_node("Relu", ["ys"], ["y"])]),
        [STEPS, "batch", HIDDEN], weights(1)),
}


if __name__ == "__main__":
    write_models(MODELS)
