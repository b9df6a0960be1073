#!/usr/bin/env python3
"""Writes ONNX models whose initializers carry PyTorch 2's graph-signature
metadata (pkg.torch.export.graph_signature.InputSpec.kind: PARAMETER or
BUFFER), as torch.onnx.export(..., dynamo=True) writes them: dpc trains
the parameters and imports the buffers as state (nn.buffer).

  y = x * weight * Identity(inv_freq) + scale

- exported_buffers: `weight` a PARAMETER, `inv_freq` a non-persistent
  BUFFER (the kind in its value_info, where the exporter writes it; read
  through an Identity copy, as exporters deduplicate), `scale` a persistent
  BUFFER (the kind on the initializer itself);
- no_metadata: the same graph without metadata (the legacy exporter's
  form): every initializer is a parameter;
- optimized_export: what the exporter's optimizer leaves (the default
  call): the whole signature in the graph's metadata (`weight` a
  PARAMETER, `inv_freq` a BUFFER, no per-initializer tags), and
  initializers it made: `weight_t` folded from `weight` (trains), `table`
  folded from `inv_freq` and `two`, a scalar of its own (constants).
    y = (x @ weight_t * table + two) * inv_freq

Usage: make_buffer_models.py OUT_DIR    (Debian's /usr/bin/python3)
"""
import numpy as np
from onnx import StringStringEntryProto, TensorProto, helper, numpy_helper
from write_models import write_models

KIND = "pkg.torch.export.graph_signature.InputSpec.kind"
PERSISTENT = "pkg.torch.export.graph_signature.InputSpec.persistent"


def varint(value):
    out = b""
    while True:
        byte, value = value & 0x7F, value >> 7
        out += bytes([byte | (0x80 if value else 0)])
        if not value:
            return out


def with_metadata(message, field, entries):
    """`message` with metadata_props `entries`, its field `field` (IR 10),
    appended as encoded bytes: ONNX 1.12's classes predate the field and
    keep it as an unknown one, newer classes parse it."""
    data = message.SerializeToString()
    for key, value in entries.items():
        entry = StringStringEntryProto(key=key, value=value)
        payload = entry.SerializeToString()
        data += varint(field << 3 | 2) + varint(len(payload)) + payload
    result = type(message)()
    result.ParseFromString(data)
    return result


def model(tagged):
    inits = [numpy_helper.from_array(np.full([4], value, np.float32), name)
             for name, value in (("weight", 0.5), ("inv_freq", 0.25),
                                 ("scale", 2.0))]
    value_info = []
    if tagged:
        value_info = [
            with_metadata(helper.make_tensor_value_info(
                name, TensorProto.FLOAT, [4]), 4, entries)
            for name, entries in (
                ("weight", {KIND: "PARAMETER"}),
                ("inv_freq", {KIND: "BUFFER", PERSISTENT: "False"}))]
        inits[2] = with_metadata(inits[2], 16,
                                 {KIND: "BUFFER", PERSISTENT: "True"})
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "weight"], ["scaled"]),
         helper.make_node("Identity", ["inv_freq"], ["inv_copy"]),
         helper.make_node("Mul", ["scaled", "inv_copy"], ["turned"]),
         helper.make_node("Add", ["turned", "scale"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                            ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["batch", 4])],
        inits, value_info=value_info)
    return helper.make_model(graph, producer_name="make_buffer_models",
                             opset_imports=[helper.make_opsetid("", 18)])


SIGNATURE = """
# inputs
p_weight: PARAMETER target='weight'
b_inv_freq: BUFFER target='inv_freq' persistent=False
x: USER_INPUT

# outputs
y: USER_OUTPUT
"""
FOLDED_FROM = "pkg.onnxscript.optimizer.folded_from"


def optimized_export():
    inits = [numpy_helper.from_array(np.full([4, 4], 0.5, np.float32),
                                     "weight_t"),
             numpy_helper.from_array(np.full([4], 0.75, np.float32), "table"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.full([4], 0.25, np.float32),
                                     "inv_freq")]
    value_info = [
        with_metadata(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                    dims),
                      4, {FOLDED_FROM: source})
        for name, dims, source in (("weight_t", [4, 4], "['weight']"),
                                   ("table", [4], "['inv_freq', 'cos']"))]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "weight_t"], ["projected"]),
         helper.make_node("Mul", ["projected", "table"], ["turned"]),
         helper.make_node("Add", ["turned", "two"], ["shifted"]),
         helper.make_node("Mul", ["shifted", "inv_freq"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                            ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["batch", 4])],
        inits, value_info=value_info)
    graph = with_metadata(graph, 16, {
        "pkg.torch.export.ExportedProgram.graph_signature": SIGNATURE})
    return helper.make_model(graph, producer_name="make_buffer_models",
                             opset_imports=[helper.make_opsetid("", 18)])


if __name__ == "__main__":
    write_models({"exported_buffers": model(True), "no_metadata": model(False),
                  "optimized_export": optimized_export()})
