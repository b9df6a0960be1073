"""Writes a copy of an ONNX model whose float initializers are all +-3e38:
finite weights whose products overflow, so the logits are NaN or infinite.

    make_huge_weights.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model = onnx.load(sys.argv[1])
for i, tensor in enumerate(model.graph.initializer):
    array = numpy_helper.to_array(tensor)
    if array.dtype == np.float32:
        huge = np.where(np.arange(array.size).reshape(array.shape) % 2, 3e38,
                        -3e38).astype(np.float32)
        model.graph.initializer[i].CopyFrom(
            numpy_helper.from_array(huge, tensor.name))
onnx.save(model, sys.argv[2])
