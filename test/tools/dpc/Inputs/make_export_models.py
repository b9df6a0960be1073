#!/usr/bin/env python3
"""Write the small models with batch norm and dropout that dpc's export and
note tests use.

Needs PyTorch 2 with onnx and onnxscript (not CI: the files are checked in).
The models are defined in export_models.py, beside this script, so the
PyTorch check of `dpc export -o weights.npz` loads the same modules. Each
file is one way to export one:

  bn_cnn_train.onnx        legacy exporter, training=TRAINING,
                           do_constant_folding=False: batch norm in training
                           form (opset 17, IR 8), what dpc trains
  bn_cnn_dynamo_train.onnx default (dynamo) exporter, optimize=False,
                           training=TRAINING (opset 18+, IR 10)
  bn_cnn_evalbn.onnx       legacy exporter, model.eval(), training=EVAL,
                           do_constant_folding=False: batch norm in
                           inference form, `bn` names kept (dpc notes it)
  bn_cnn_dynamo_eval.onnx  default exporter, model.eval(), optimize=False:
                           batch norm in inference form (dpc notes it)
  bn_cnn_folded.onnx       legacy exporter, training=EVAL with constant
                           folding: batch norm folded into the convolutions,
                           no trace left (nothing to note)
  drop_mlp_train.onnx      DropMlp, legacy exporter in training mode: a
                           Dropout node with training_mode
  drop_mlp_random.onnx     DropMlp with in-place dropout, default exporter
                           in training mode: dropout as random ops
                           (RandomUniformLike, Less, Div, Mul)

Usage: make_export_models.py OUT_DIR
"""
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_models import BnCnn, DropMlp  # noqa: E402


def export(model, path, dynamo, training, fold=False):
    x = torch.zeros(2, 1, 28, 28)
    kwargs = dict(training=training, do_constant_folding=fold,
                  input_names=["x"], output_names=["logits"])
    if dynamo:
        kwargs.update(dynamo=True, optimize=False, external_data=False,
                      dynamic_shapes=({0: torch.export.Dim("batch")},))
    else:
        kwargs.update(dynamo=False, opset_version=17,
                      dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), path, **kwargs)
    print("wrote", path)


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    model = BnCnn()
    train, evaluation = torch.onnx.TrainingMode.TRAINING, torch.onnx.TrainingMode.EVAL
    export(model.train(), os.path.join(out, "bn_cnn_train.onnx"), False, train)
    export(model.train(), os.path.join(out, "bn_cnn_dynamo_train.onnx"), True,
           train)
    export(model.eval(), os.path.join(out, "bn_cnn_evalbn.onnx"), False,
           evaluation)
    export(model.eval(), os.path.join(out, "bn_cnn_dynamo_eval.onnx"), True,
           evaluation)
    export(model.eval(), os.path.join(out, "bn_cnn_folded.onnx"), False,
           evaluation, fold=True)
    export(DropMlp().train(), os.path.join(out, "drop_mlp_train.onnx"), False,
           train)
    export(DropMlp(inplace=True).train(),
           os.path.join(out, "drop_mlp_random.onnx"), True, train)


if __name__ == "__main__":
    main()
