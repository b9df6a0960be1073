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
  form): every initializer is a parameter.

Usage: make_buffer_models.py OUT_DIR    (Debian's /usr/bin/python3)
"""
import os
import sys

import numpy as np
from onnx import StringStringEntryProto, TensorProto, helper, numpy_helper

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


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, tagged in (("exported_buffers", True), ("no_metadata", False)):
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(model(tagged).SerializeToString())


if __name__ == "__main__":
    main()
