"""Checks a model that `dpc export -o model.onnx` wrote.

usage:
  check_onnx_export.py structure MODEL.onnx --ir N --opset N [--npz W.npz]
      (Debian's python3-onnx) the file's IR version and default-domain
      opset; batch norm in inference form (no training_mode, one output),
      no dropout in training form, no random op; its initializers are W.npz's arrays bit
      for bit; and ONNX's checker accepts it where ONNX 1.12 knows the
      versions (IR <= 8, opset <= 17).
  check_onnx_export.py run MODEL.onnx EVAL.json LOGITS.npy [--subset N]
      (onnxruntime) runs the model on the Fashion-MNIST test set (the first
      N images), scaled as dpc scales it: every image's prediction and the
      correct count are `dpc eval --json`'s, and the logits are
      `dpc predict`'s within 1e-5.
Prints "onnx structure ok" / "onnx run ok: ..." or the failures, exit 1.
"""
import argparse
import gzip
import json
import sys

import numpy as np

FASHION_MNIST = "/usr/share/datasets/fashion-mnist/"


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def structure(args):
    import onnx
    from onnx import numpy_helper

    model = onnx.load(args.model)
    opsets = {o.domain: o.version for o in model.opset_import}
    if model.ir_version != args.ir or opsets.get("") != args.opset:
        fail(f"IR {model.ir_version} opsets {opsets}, expected IR {args.ir} "
             f"and opset {args.opset}")
    for node in model.graph.node:
        attrs = {a.name: a for a in node.attribute}
        if node.op_type == "BatchNormalization" and (
                "training_mode" in attrs or len(node.output) != 1):
            fail(f"batch norm {node.name} is in training form")
        if node.op_type == "Dropout" and (len(node.input) > 2 or
                                          len(node.output) > 1):
            fail(f"dropout {node.name} is in training form")
        if node.op_type.startswith("Random") or node.op_type == "Bernoulli":
            fail(f"{node.op_type} {node.name} draws noise at inference")
    if args.npz:
        weights = np.load(args.npz)
        inits = {i.name: numpy_helper.to_array(i)
                 for i in model.graph.initializer}
        for name in weights.files:
            if name not in inits:
                fail(f"no initializer '{name}'")
            if not np.array_equal(inits[name], weights[name]):
                fail(f"initializer '{name}' differs from the .npz export")
    if model.ir_version <= 8 and args.opset <= 17:
        onnx.checker.check_model(model, full_check=True)
    print("onnx structure ok")


def load_test_set(subset):
    images = np.frombuffer(
        gzip.open(FASHION_MNIST + "t10k-images-idx3-ubyte.gz").read(),
        np.uint8, offset=16).reshape(-1, 1, 28, 28)
    if subset:
        images = images[:subset]
    # dpc's scaling, in f32: pixel * (1 / 255).
    return images.astype(np.float32) * (np.float32(1) / np.float32(255))


def run(args):
    import onnxruntime

    session = onnxruntime.InferenceSession(
        args.model, providers=["CPUExecutionProvider"])
    (data_input,) = session.get_inputs()
    images = load_test_set(args.subset)
    logits = np.concatenate([
        session.run(None, {data_input.name: images[i:i + 1000]})[0]
        for i in range(0, len(images), 1000)])
    expected = np.load(args.logits)
    evaluation = json.load(open(args.eval))
    if logits.shape != expected.shape:
        fail(f"logits {logits.shape}, dpc predict's {expected.shape}")
    diff = float(np.max(np.abs(logits - expected)))
    if diff > 1e-5:
        fail(f"logits differ from dpc predict's by {diff:.3g} > 1e-5")
    predicted = logits.argmax(axis=1)
    if not np.array_equal(predicted, expected.argmax(axis=1)):
        fail("predictions differ from dpc predict's")
    # eval's confusion matrix holds its predictions per label.
    labels = np.frombuffer(
        gzip.open(FASHION_MNIST + "t10k-labels-idx1-ubyte.gz").read(),
        np.uint8, offset=8)[:len(images)]
    confusion = np.zeros((10, 10), np.int64)
    np.add.at(confusion, (labels, predicted), 1)
    correct = int((predicted == labels).sum())
    if evaluation["samples"] != len(images):
        fail(f"dpc eval saw {evaluation['samples']} images, not {len(images)}")
    if correct != evaluation["correct"] or not np.array_equal(
            confusion, np.array(evaluation["confusion_matrix"])):
        fail(f"{correct} correct, dpc eval's {evaluation['correct']} (or "
             "another confusion matrix)")
    print(f"onnx run ok: {len(images)} images, accuracy "
          f"{correct / len(images):.4f} as dpc eval's, logits within "
          f"{diff:.2g}")


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("structure")
    check.add_argument("model")
    check.add_argument("--ir", type=int, required=True)
    check.add_argument("--opset", type=int, required=True)
    check.add_argument("--npz")
    execute = commands.add_parser("run")
    execute.add_argument("model")
    execute.add_argument("eval")
    execute.add_argument("logits")
    execute.add_argument("--subset", type=int, default=0)
    args = parser.parse_args()
    structure(args) if args.command == "structure" else run(args)


if __name__ == "__main__":
    main()
