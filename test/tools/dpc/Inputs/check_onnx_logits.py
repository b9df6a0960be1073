"""Runs a model that `dpc export -o model.onnx` wrote on .npy inputs
(onnxruntime) and compares it with `dpc predict` and `dpc eval`.

usage: check_onnx_logits.py MODEL.onnx LOGITS.npy [NAME=]FILE.npy...
           [--eval EVAL.json --labels LABELS.npy]
Each FILE.npy feeds the model input NAME (a model with one input: the
name may be left out) as it is: the pixels dpc predict took, before any
--normalize, or int64 token ids. The logits must be LOGITS.npy's (dpc
predict's) within 1e-5 with the same argmax; with --eval, the correct
count and confusion matrix over LABELS.npy must be dpc eval --json's.
Prints "onnx logits ok: ..." or the failure, exit 1.
"""
import argparse
import json
import sys

import numpy as np
import onnxruntime


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("logits")
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--eval")
    parser.add_argument("--labels")
    args = parser.parse_args()
    session = onnxruntime.InferenceSession(
        args.model, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    feeds = {}
    for item in args.inputs:
        name, _, path = item.rpartition("=")
        if not name:
            if len(names) != 1:
                fail(f"the model takes {names}: name each file")
            name = names[0]
        feeds[name] = np.load(path)
    if sorted(feeds) != sorted(names):
        fail(f"the model takes {names}, given {sorted(feeds)}")
    logits = session.run(None, feeds)[0]
    expected = np.load(args.logits)
    if logits.shape != expected.shape:
        fail(f"logits {logits.shape}, dpc predict's {expected.shape}")
    diff = float(np.max(np.abs(logits - expected)))
    if diff > 1e-5:
        fail(f"logits differ from dpc predict's by {diff:.3g} > 1e-5")
    predicted = logits.argmax(axis=1)
    if not np.array_equal(predicted, expected.argmax(axis=1)):
        fail("predictions differ from dpc predict's")
    summary = f"{len(logits)} samples, logits within {diff:.2g}"
    if args.eval:
        evaluation = json.load(open(args.eval))
        labels = np.load(args.labels)
        classes = logits.shape[1]
        confusion = np.zeros((classes, classes), np.int64)
        np.add.at(confusion, (labels, predicted), 1)
        correct = int((predicted == labels).sum())
        if evaluation["samples"] != len(labels) or correct != evaluation[
                "correct"] or not np.array_equal(
                    confusion, np.array(evaluation["confusion_matrix"])):
            fail(f"{correct} of {len(labels)} correct, dpc eval's "
                 f"{evaluation['correct']} of {evaluation['samples']} (or "
                 "another confusion matrix)")
        summary += f", accuracy {correct / len(labels):.4f} as dpc eval's"
    print("onnx logits ok: " + summary)


if __name__ == "__main__":
    main()
