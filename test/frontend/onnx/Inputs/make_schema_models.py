#!/usr/bin/env python3
"""Writes small ONNX models that break their operators' schemas, one fault
each: ONNX's checker refuses every one of them, and so must dpc.

Usage: make_schema_models.py OUT_DIR    (Debian's /usr/bin/python3: onnx 1.12)
"""
import numpy as np
from onnx import AttributeProto, TensorProto, helper, numpy_helper
from write_models import write_models


def model(nodes, inputs=None, inits=(), opset=13, output_shape=("batch", 4)):
    inputs = inputs or [x()]
    graph = helper.make_graph(
        nodes, "g", inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       list(output_shape))], list(inits))
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)],
        producer_name="make_schema_models")


def x(name="x", shape=("batch", 4)):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def weight(name, shape):
    return numpy_helper.from_array(np.ones(shape, np.float32), name)


def with_attribute(node, name, value, kind=None):
    attribute = helper.make_attribute(name, value)
    if kind is not None:
        attribute.type = kind
    node.attribute.append(attribute)
    return node


MODELS = {
    # Read input 1 before counting them: dpc aborted on this one.
    "add_one_input": model([helper.make_node("Add", ["x"], ["y"],
                                             name="add_1")]),
    "relu_two_outputs": model([helper.make_node("Relu", ["x"], ["y", "z"],
                                                name="relu_1")]),
    "unknown_attribute": model([with_attribute(
        helper.make_node("Relu", ["x"], ["y"], name="relu_1"), "alpha", 0.1)]),
    "attribute_type": model(
        [with_attribute(helper.make_node("Gemm", ["x", "w"], ["y"],
                                         name="fc"), "transB", 1,
                        AttributeProto.FLOAT)],
        inits=[weight("w", (4, 4))]),
    "attribute_twice": model(
        [with_attribute(helper.make_node("Gemm", ["x", "w"], ["y"], name="fc",
                                         transB=1), "transB", 1)],
        inits=[weight("w", (4, 4))]),
    "missing_required": model([
        helper.make_node("Cast", ["x"], ["y"], name="cast_1")]),
    "empty_required_input": model(
        [helper.make_node("Gemm", ["x", ""], ["y"], name="fc")]),
    "deprecated": model(
        [helper.make_node("Upsample", ["x", "scales"], ["y"], name="up_1")],
        inits=[numpy_helper.from_array(np.ones(2, np.float32), "scales")]),
    "duplicate_initializer": model(
        [helper.make_node("Add", ["x", "b"], ["y"], name="add_1")],
        inits=[weight("b", (4,)), weight("b", (4,))]),
    "duplicate_input": model(
        [helper.make_node("Add", ["x", "x"], ["y"], name="add_1")],
        inputs=[x(), x()]),
}


if __name__ == "__main__":
    write_models(MODELS)
