#!/usr/bin/env python3
"""Write the models of export-onnx-opsets.test: OpsNet (export_models.py),
whose operators change form between opsets -- Split (13, 18), ReduceMean
(18), Unsqueeze/Squeeze (13), LogSoftmax (13), Gelu (20), Dropout (12) --
exported in training mode at three opsets:

  ops_net_17.onnx   legacy exporter, opset 17 (IR 8): Gelu as Erf
  ops_net_18.onnx   default (dynamo) exporter, opset 18 (IR 10)
  ops_net_21.onnx   default exporter, opset 21 (IR 10): a Gelu node

Needs PyTorch 2 with onnx and onnxscript (not CI: the files are checked in).
Usage: make_opset_models.py OUT_DIR
"""
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_models import OpsNet  # noqa: E402


def export(model, path, opset):
    x = torch.zeros(2, 1, 28, 28)
    kwargs = dict(training=torch.onnx.TrainingMode.TRAINING,
                  do_constant_folding=False, input_names=["x"],
                  output_names=["logits"], opset_version=opset)
    if opset >= 18:
        kwargs.update(dynamo=True, optimize=False, external_data=False,
                      dynamic_shapes=({0: torch.export.Dim("batch")},))
    else:
        kwargs.update(dynamo=False,
                      dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), path, **kwargs)
    print("wrote", path)


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    model = OpsNet().train()
    for opset in (17, 18, 21):
        export(model, os.path.join(out, f"ops_net_{opset}.onnx"), opset)


if __name__ == "__main__":
    main()
