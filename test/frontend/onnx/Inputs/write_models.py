"""Writes a generator's ONNX models into the folder its command line names.

Each make_*_models.py beside this builds its models by name and ends in
write_models(MODELS): OUT_DIR/NAME.onnx for each, as plain serialization
(onnx.save would check nothing either, and the error models must be
written as they are, invalid on purpose).
"""
import os
import sys


def write_models(models):
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, model in models.items():
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(model.SerializeToString())
