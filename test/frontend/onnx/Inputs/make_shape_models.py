#!/usr/bin/env python3
"""Writes ONNX models whose shapes are computed with tensor ops, as
exporters write them; dpc folds that arithmetic at import.

Usage: make_shape_models.py OUT_DIR    (Debian's /usr/bin/python3)
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper
from write_models import write_models


def ints(name, values):
    return helper.make_node(
        "Constant", [], [name],
        value=helper.make_tensor(name, TensorProto.INT64, [len(values)],
                                 values))


def model(nodes, in_shape, out_shape, inits=(), opset=13):
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        list(inits))
    return helper.make_model(graph, producer_name="make_shape_models",
                             opset_imports=[helper.make_opsetid("", opset)])


MODELS = {
    # x.view(x.size(0), -1), the legacy exporter's way: the batch is
    # gathered from the shape, unsqueezed and concatenated with -1.
    "flatten_by_shape": model(
        [helper.make_node("Shape", ["x"], ["s"]),
         ints("zero", [0]),
         helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
         ints("minus_one", [-1]),
         helper.make_node("Concat", ["n", "minus_one"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["y"])],
        ["batch", 3, 4, 4], ["batch", 48]),
    # The batch and one dim sliced from the shape, then a constant dim:
    # [batch, 3, 16]. Squeeze/Unsqueeze round-trip the batch entry.
    "slice_shape": model(
        [helper.make_node("Shape", ["x"], ["s"]),
         ints("starts", [0]), ints("ends", [2]),
         helper.make_node("Slice", ["s", "starts", "ends"], ["head"]),
         ints("sixteen", [16]),
         helper.make_node("Concat", ["head", "sixteen"], ["t"], axis=0),
         helper.make_node("Reshape", ["x", "t"], ["y"])],
        ["batch", 3, 4, 4], ["batch", 3, 16]),
    # A constant computed from Range, Cast, Equal and Where: [0, 5, 2],
    # added to the last dim of x.
    "computed_constant": model(
        [helper.make_node("Constant", [], ["start"],
                          value=helper.make_tensor("start", TensorProto.INT64,
                                                   [], [0])),
         helper.make_node("Constant", [], ["limit"],
                          value=helper.make_tensor("limit", TensorProto.INT64,
                                                   [], [3])),
         helper.make_node("Constant", [], ["delta"],
                          value=helper.make_tensor("delta", TensorProto.INT64,
                                                   [], [1])),
         helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
         helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
         helper.make_node("Constant", [], ["one"],
                          value=helper.make_tensor("one", TensorProto.FLOAT,
                                                   [], [1.0])),
         helper.make_node("Equal", ["rf", "one"], ["is_one"]),
         helper.make_node("Constant", [], ["five"],
                          value=helper.make_tensor("five", TensorProto.FLOAT,
                                                   [], [5.0])),
         helper.make_node("Where", ["is_one", "five", "rf"], ["c"]),
         helper.make_node("Add", ["x", "c"], ["y"])],
        ["batch", 3], ["batch", 3]),
    # A bias-free convolution as PyTorch 2 writes it: a zero bias from
    # ConstantOfShape over the weight's output channels.
    "zero_bias_conv": model(
        [helper.make_node("Shape", ["w"], ["ws"], start=0, end=1),
         helper.make_node("ConstantOfShape", ["ws"], ["b"],
                          value=helper.make_tensor("v", TensorProto.FLOAT,
                                                   [1], [0.0])),
         helper.make_node("Conv", ["x", "w", "b"], ["y"])],
        ["batch", 2, 5, 5], ["batch", 4, 5, 5],
        [numpy_helper.from_array(np.ones((4, 2, 1, 1), np.float32), "w")],
        opset=15),  # Shape's start and end are opset 15's
    # Attention's shapes: the batch moves to dim 1, merges with 2 heads
    # (Mul), comes back from the merged dim (Div) and out of a
    # tensor Unsqueeze/Squeeze; y is [batch, 32].
    "batch_times_heads": model(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
         helper.make_node("Shape", ["t"], ["s"]),
         ints("one", [1]), ints("two", [2]), ints("four", [4]),
         helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
         helper.make_node("Mul", ["n", "two"], ["n2"]),
         helper.make_node("Concat", ["four", "n2", "four"], ["hs"], axis=0),
         helper.make_node("Reshape", ["t", "hs"], ["h"]),
         helper.make_node("Shape", ["h"], ["s2"]),
         helper.make_node("Gather", ["s2", "one"], ["m"], axis=0),
         helper.make_node("Div", ["m", "two"], ["batch"]),
         ints("zero", [0]),
         helper.make_node("Unsqueeze", ["h", "zero"], ["u"]),
         helper.make_node("Squeeze", ["u", "zero"], ["q"]),
         helper.make_node("Transpose", ["q"], ["back"], perm=[1, 0, 2]),
         ints("minus_one", [-1]),
         helper.make_node("Concat", ["batch", "minus_one"], ["ys"], axis=0),
         helper.make_node("Reshape", ["back", "ys"], ["y"])],
        ["batch", 4, 8], ["batch", 32]),
    # ViT's class token: torch.cat([token.expand(n, -1, -1), x], dim=1).
    "class_token": model(
        [helper.make_node("Shape", ["x"], ["s"]),
         ints("zero", [0]),
         helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
         ints("ones", [1, 1]),
         helper.make_node("Concat", ["n", "ones"], ["es"], axis=0),
         helper.make_node("Expand", ["token", "es"], ["t"]),
         helper.make_node("Concat", ["t", "x"], ["y"], axis=1)],
        ["batch", 3, 4], ["batch", 4, 4],
        [numpy_helper.from_array(np.ones((1, 1, 4), np.float32), "token")]),
    # Two parameters that both broadcast ([3, 1] x [1, 4], a rotary
    # embedding's positions times frequencies): the first is widened by
    # ones of [3, 4]. Then the batch's [N, 3, 4] plus that.
    "both_broadcast": model(
        [helper.make_node("Mul", ["a", "b"], ["ab"]),
         helper.make_node("Add", ["ab", "x"], ["y"])],
        ["batch", 3, 4], ["batch", 3, 4],
        [numpy_helper.from_array(np.ones((3, 1), np.float32), "a"),
         numpy_helper.from_array(np.ones((1, 4), np.float32), "b")]),
    # Grouped-query attention's repeat_kv: [N, 2, 1, 4] expanded to
    # [N, 2, 3, 4] (copies along dim 2).
    "repeat_kv": model(
        [helper.make_node("Shape", ["x"], ["s"]),
         ints("zero", [0]),
         helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
         ints("rest", [2, 3, 4]),
         helper.make_node("Concat", ["n", "rest"], ["es"], axis=0),
         helper.make_node("Expand", ["x", "es"], ["y"])],
        ["batch", 2, 1, 4], ["batch", 2, 3, 4]),
    # Mod (the divisor's sign, as Python's %) and Sqrt of constants.
    "mod_sqrt": model(
        [ints("a", [7, -7]),
         ints("three", [3]),
         helper.make_node("Mod", ["a", "three"], ["r"]),
         helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
         helper.make_node("Sqrt", ["rf"], ["c"]),
         helper.make_node("Add", ["x", "c"], ["y"])],
        ["batch", 2], ["batch", 2]),
    # Division by a constant tensor (a per-channel scale): times the
    # reciprocals, which are exact here.
    "div_constant_tensor": model(
        [helper.make_node("Constant", [], ["d"],
                          value=numpy_helper.from_array(
                              np.array([2.0, 4.0, 0.5], np.float32), "d")),
         helper.make_node("Div", ["x", "d"], ["y"])],
        ["batch", 3], ["batch", 3]),
    # x.pow(2) with the exponent a scalar initializer, as PyTorch 2's
    # optimizer writes it (RMSNorm's variance): a constant, not a weight.
    "pow_initializer": model(
        [helper.make_node("Pow", ["x", "two"], ["y"])],
        ["batch", 3], ["batch", 3],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two")]),
    # A bool constant cast to float: true is 1.
    "bool_cast": model(
        [helper.make_node("Constant", [], ["b"],
                          value=numpy_helper.from_array(
                              np.array([True, False, True]), "b")),
         helper.make_node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["x", "bf"], ["y"])],
        ["batch", 3], ["batch", 3]),
    # ConstantOfShape's fill in raw data of each width: a bool (one byte,
    # the legacy exporter's all-true start of Mistral's sliding-window
    # mask), an int32 and a double: 1 + 7 + 0.5 added to x.
    "fill_values": model(
        [ints("three", [3])] + [
            node for name, dtype, value in (
                ("t", TensorProto.BOOL, np.array([True])),
                ("i", TensorProto.INT32, np.array([7], np.int32)),
                ("d", TensorProto.DOUBLE, np.array([0.5])))
            for node in (
                helper.make_node(
                    "ConstantOfShape", ["three"], [name + "_fill"],
                    value=helper.make_tensor(name, dtype, [1],
                                             value.tobytes(), raw=True)),
                helper.make_node("Cast", [name + "_fill"], [name + "_f"],
                                 to=TensorProto.FLOAT))] +
        [helper.make_node("Add", ["t_f", "i_f"], ["ti"]),
         helper.make_node("Add", ["ti", "d_f"], ["c"]),
         helper.make_node("Add", ["x", "c"], ["y"])],
        ["batch", 3], ["batch", 3]),
}


def bert_embeddings():
    """Hugging Face BERT's embeddings: token ids, plus position ids and
    token-type ids sliced from int64 buffers, the latter expanded to the
    batch. y = word(x) + position(arange) + token_type(0)."""
    shape = [helper.make_node("Shape", ["x"], ["s"]),
             ints("zero", [0]), ints("one", [1]), ints("four", [4]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Concat", ["n", "four"], ["ns"], axis=0)]
    nodes = shape + [
        helper.make_node("Slice", ["position_ids", "zero", "four", "one"],
                         ["pos"]),
        helper.make_node("Slice", ["token_type_ids", "zero", "four", "one"],
                         ["types"]),
        helper.make_node("Expand", ["types", "ns"], ["types_n"]),
        helper.make_node("Gather", ["word", "x"], ["w"]),
        helper.make_node("Gather", ["position", "pos"], ["p"]),
        helper.make_node("Gather", ["token_type", "types_n"], ["t"]),
        helper.make_node("Add", ["w", "p"], ["wp"]),
        helper.make_node("Add", ["wp", "t"], ["y"])]
    inits = [
        numpy_helper.from_array(np.arange(8, dtype=np.int64)[None],
                                "position_ids"),
        numpy_helper.from_array(np.zeros((1, 8), np.int64), "token_type_ids"),
        numpy_helper.from_array(np.ones((10, 3), np.float32), "word"),
        numpy_helper.from_array(np.ones((8, 3), np.float32), "position"),
        numpy_helper.from_array(np.ones((2, 3), np.float32), "token_type")]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.INT64, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["batch", 4, 3])], inits)
    return helper.make_model(graph, producer_name="make_shape_models",
                             opset_imports=[helper.make_opsetid("", 13)])


MODELS["bert_embeddings"] = bert_embeddings()

# Hugging Face's attention mask when none is given: ones of the batch's
# shape, (1 - mask) * -10000 added to the scores. Known values repeated for
# each sample, folded per sample (Unsqueeze after the batch, Sub, Mul, a
# comparison and Where), then one sample's constant for each row.
MODELS["ones_mask"] = model(
    [helper.make_node("Shape", ["x"], ["s"]),
     helper.make_node("ConstantOfShape", ["s"], ["m"],
                      value=helper.make_tensor("v", TensorProto.FLOAT, [1],
                                               [1.0])),
     ints("one", [1]),
     helper.make_node("Unsqueeze", ["m", "one"], ["u"]),
     helper.make_node("Constant", [], ["c1"],
                      value=helper.make_tensor("c1", TensorProto.FLOAT, [],
                                               [1.0])),
     helper.make_node("Sub", ["c1", "u"], ["inverted"]),
     helper.make_node("GreaterOrEqual", ["inverted", "c1"], ["masked"]),
     helper.make_node("Constant", [], ["big"],
                      value=helper.make_tensor("big", TensorProto.FLOAT, [],
                                               [-10000.0])),
     helper.make_node("Constant", [], ["zero"],
                      value=helper.make_tensor("zero", TensorProto.FLOAT, [],
                                               [0.0])),
     helper.make_node("Where", ["masked", "big", "zero"], ["bias"]),
     helper.make_node("Squeeze", ["bias", "one"], ["b"]),
     helper.make_node("Add", ["x", "b"], ["y"])],
    ["batch", 4], ["batch", 4])



def scalar(name, data_type, value):
    return helper.make_node(
        "Constant", [], [name],
        value=helper.make_tensor(name, data_type, [], [value]))


def gpt2_positions_mask():
    """Hugging Face GPT-2's position ids and causal mask, as its legacy
    export writes them: arange(seq) from the shape, the position rows cast
    to the float type they have, and key <= query of two aranges expanded
    to [batch, 1, seq, seq], then Where(mask, 0, float32 min) added to the
    scores (here x's embeddings times their transpose)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        scalar("zero", TensorProto.INT64, 0),
        scalar("one", TensorProto.INT64, 1),
        helper.make_node("Gather", ["s", "one"], ["seq"], axis=0),
        helper.make_node("Cast", ["seq"], ["seq64"], to=TensorProto.INT64),
        helper.make_node("Range", ["zero", "seq64", "one"], ["r"]),
        ints("axis0", [0]), ints("axis1", [1]), ints("axes01", [0, 1]),
        helper.make_node("Unsqueeze", ["r", "axis0"], ["positions"]),
        helper.make_node("Gather", ["wte", "x"], ["tokens"]),
        helper.make_node("Gather", ["wpe", "positions"], ["p"]),
        helper.make_node("Cast", ["p"], ["pf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["tokens", "pf"], ["h"]),
        helper.make_node("Transpose", ["h"], ["ht"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["h", "ht"], ["raw"]),
        helper.make_node("Unsqueeze", ["raw", "axis1"], ["scores"]),
        helper.make_node("Unsqueeze", ["r", "axis1"], ["query"]),
        helper.make_node("LessOrEqual", ["positions", "query"], ["causal"]),
        helper.make_node("Unsqueeze", ["causal", "axes01"], ["causal4"]),
        helper.make_node("Gather", ["s", "axis0"], ["n"], axis=0),
        ints("rest", [1, 4, 4]),
        helper.make_node("Concat", ["n", "rest"], ["ns"], axis=0),
        helper.make_node("Expand", ["causal4", "ns"], ["allowed"]),
        scalar("open", TensorProto.FLOAT, 0.0),
        scalar("closed", TensorProto.FLOAT, float(np.finfo(np.float32).min)),
        helper.make_node("Where", ["allowed", "open", "closed"], ["bias"]),
        helper.make_node("Add", ["scores", "bias"], ["y"])]
    inits = [numpy_helper.from_array(np.ones((10, 3), np.float32), "wte"),
             numpy_helper.from_array(np.ones((6, 3), np.float32), "wpe")]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.INT64, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["batch", 1, 4, 4])], inits)
    return helper.make_model(graph, producer_name="make_shape_models",
                             opset_imports=[helper.make_opsetid("", 13)])


MODELS["gpt2_positions_mask"] = gpt2_positions_mask()


def trilu_mask(name, k, upper, masked_where):
    """A [4, 4] additive mask, -inf where masked: ones expanded to [4, 4]
    (the legacy exporter's torch.ones(L, S).tril()), Trilu with diagonal k,
    and Where(kept == masked_where, -inf, 0)."""
    return [
        scalar(name + "_one", TensorProto.FLOAT, 1.0),
        ints(name + "_shape", [4, 4]),
        helper.make_node("Expand", [name + "_one", name + "_shape"],
                         [name + "_ones"]),
        scalar(name + "_k", TensorProto.INT64, k),
        helper.make_node("Trilu", [name + "_ones", name + "_k"],
                         [name + "_kept"], upper=upper),
        scalar(name + "_test", TensorProto.FLOAT, masked_where),
        helper.make_node("Equal", [name + "_kept", name + "_test"],
                         [name + "_masked"]),
        scalar(name + "_inf", TensorProto.FLOAT, float("-inf")),
        scalar(name + "_zero", TensorProto.FLOAT, 0.0),
        helper.make_node("Where",
                         [name + "_masked", name + "_inf", name + "_zero"],
                         [name])]


def opset14(nodes, in_shape, out_shape):
    m = model(nodes, in_shape, out_shape)
    m.opset_import[0].version = 14  # Trilu's first
    return m


# The causal mask of scaled_dot_product_attention(is_causal=True) as the
# legacy exporter writes it (lower triangle kept, the zeros masked), and the
# same mask as the strict upper triangle (k = 1) of ones masked.
MODELS["trilu_masks"] = opset14(
    trilu_mask("lower", 0, 0, 0.0) + trilu_mask("upper", 1, 1, 1.0) +
    [helper.make_node("Add", ["x", "lower"], ["t"]),
     helper.make_node("Add", ["t", "upper"], ["y"])],
    ["batch", 4, 4], ["batch", 4, 4])

# The default exporter's scaled_dot_product_attention: the softmax of the
# masked scores, whose NaN (a row the mask removes entirely) is zeroed by
# Where(IsNaN(p), 0, p). The causal mask keeps the diagonal of every row.
MODELS["sdpa_nan_guard"] = opset14(
    trilu_mask("causal", 0, 0, 0.0) +
    [helper.make_node("Add", ["x", "causal"], ["scores"]),
     helper.make_node("Softmax", ["scores"], ["p"], axis=-1),
     helper.make_node("IsNaN", ["p"], ["nan"]),
     helper.make_node("Where", ["nan", "causal_zero", "p"], ["y"])],
    ["batch", 4, 4], ["batch", 4, 4])


def floats(name, values):
    return helper.make_node(
        "Constant", [], [name],
        value=helper.make_tensor(name, TensorProto.FLOAT, [len(values)],
                                 values))


# The element-wise math of known tables (relative-position buckets,
# adaptive pooling's window bounds): Floor, Ceil, Abs, Sign, variadic Max
# and Min of floats, and Abs and Max of integers, all folded.
MODELS["math_folds"] = model(
    [floats("f", [-2.5, 0.4, 3.7]),
     helper.make_node("Floor", ["f"], ["fl"]),
     helper.make_node("Ceil", ["f"], ["ce"]),
     helper.make_node("Max", ["fl", "ce", "f"], ["hi"]),        # -2, 1, 4
     helper.make_node("Abs", ["f"], ["af"]),
     helper.make_node("Min", ["fl", "af"], ["lo"]),             # -3, 0, 3
     helper.make_node("Add", ["hi", "lo"], ["sum"]),            # -5, 1, 7
     helper.make_node("Sign", ["f"], ["sg"]),                   # -1, 1, 1
     helper.make_node("Mul", ["sum", "sg"], ["pos"]),           # 5, 1, 7
     ints("t", [-3, 1, 4]),
     ints("two", [2]),
     helper.make_node("Abs", ["t"], ["at"]),
     helper.make_node("Max", ["at", "two"], ["mt"]),            # 3, 2, 4
     helper.make_node("Cast", ["mt"], ["mf"], to=TensorProto.FLOAT),
     helper.make_node("Add", ["pos", "mf"], ["c"]),             # 8, 3, 11
     helper.make_node("Add", ["x", "c"], ["y"])],
    ["batch", 3], ["batch", 3])


def branch(name, nodes, output):
    return helper.make_graph(
        nodes, name, [],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)])


# If on a static dim (the legacy exporter's LocalResponseNorm): only the
# branch taken is imported (the other holds an op dpc does not know).
MODELS["if_known"] = model(
    [helper.make_node("Shape", ["x"], ["s"]),
     ints("one", [1]),
     helper.make_node("Gather", ["s", "one"], ["dim"], axis=0),
     ints("three", [3]),
     helper.make_node("Equal", ["dim", "three"], ["cond"]),
     helper.make_node(
         "If", ["cond"], ["y"],
         then_branch=branch("then", [helper.make_node("Relu", ["x"],
                                                      ["r"])], "r"),
         else_branch=branch("else", [helper.make_node("Sinh", ["x"],
                                                      ["h"])], "h"))],
    ["batch", 3], ["batch", 3])


if __name__ == "__main__":
    write_models(MODELS)
