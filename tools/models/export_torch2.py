#!/usr/bin/env python3
"""Export torchvision models with PyTorch 2's two ONNX exporters.

Needs PyTorch 2 and torchvision from PyPI (see ../shared/TOOLCHAIN.md: a
virtual environment, never CI). Writes, per MODEL:

  OUT/MODEL_dynamo_train.onnx  torch.onnx.export(dynamo=True, optimize=False,
                               training=TRAINING): the default exporter, IR 10
                               and opset 18+. optimize=True (its default)
                               folds every BatchNormalization into the
                               preceding Conv even in training mode, which
                               trains a different network, so dpc's
                               README says to switch it off.
  OUT/MODEL_legacy_train.onnx  dynamo=False, opset 17, training=TRAINING,
                               do_constant_folding=False

with a dynamic batch on "x" and "logits". Initializers with more than 64
elements lose their data (external, pointing at stripped.bin) and the
per-node metadata (stack traces) is dropped, so the files are small enough
for git; the importer needs only shapes. dpc must import both to the same
nn IR modulo names (test/frontend/onnx/torch2-exports.test).

Usage: export_torch2.py --out DIR [MODEL ...]   (default: resnet18)
"""

import argparse
import os
import sys
import warnings

import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_torch import strip_weights  # noqa: E402


def export(model, x, path, dynamo, strip=64):
    """Exports `model` on example input `x` to `path`; strips initializers
    with more than `strip` elements (None: none)."""
    names = dict(input_names=["x"], output_names=["logits"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dynamo:
            torch.onnx.export(
                model, (x,), path, dynamo=True, optimize=False,
                training=torch.onnx.TrainingMode.TRAINING,
                dynamic_shapes=({0: torch.export.Dim("batch")},), **names)
        else:
            torch.onnx.export(
                model, (x,), path, dynamo=False, opset_version=17,
                training=torch.onnx.TrainingMode.TRAINING,
                do_constant_folding=False,
                dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}},
                **names)
    m = onnx.load(path)
    for node in m.graph.node:
        del node.metadata_props[:]
    del m.metadata_props[:]
    if strip is not None:
        strip_weights(m, strip)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"wrote {path}: IR {m.ir_version}, opset "
          f"{m.opset_import[0].version}, {len(m.graph.node)} nodes, "
          f"{os.path.getsize(path)} bytes: {' '.join(ops)}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("models", nargs="*", default=["resnet18"])
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for name in args.models:
        torch.manual_seed(0)
        import torchvision  # main's models only: export() needs torch alone
        model = getattr(torchvision.models, name)(num_classes=10).train()
        x = torch.randn(2, 3, 32, 32)
        for dynamo in (True, False):
            kind = "dynamo" if dynamo else "legacy"
            export(model, x, os.path.join(args.out, f"{name}_{kind}_train.onnx"),
                   dynamo)
    return 0


if __name__ == "__main__":
    sys.exit(main())
