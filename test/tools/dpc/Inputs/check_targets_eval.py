#!/usr/bin/env python3
"""Checks `dpc eval --json` of a targets.test model at its initial weights
(the ONNX file's initializers) against NumPy's forward pass in float64:
the loss, the accuracy's counts, the perplexity, the mean IoU, the errors.

Usage: check_targets_eval.py DIR tokens|pixels|regress EVAL.json
Prints "eval matches" or the differences; exits 1 on a difference."""
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

out, task, result = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
weights = {t.name: numpy_helper.to_array(t).astype(np.float64)
           for t in onnx.load(os.path.join(out, task + ".onnx")).graph.initializer}


def cross_entropy(logits, targets, ignore=None):
    """Mean loss over the targets that count, their count, right ones."""
    logits = logits - logits.max(-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    valid = targets != ignore if ignore is not None else np.ones_like(targets, bool)
    safe = np.where(valid, targets, 0)
    picked = np.take_along_axis(logp, safe[..., None], -1)[..., 0]
    right = (logits.argmax(-1) == targets) & valid
    return -picked[valid].mean(), int(valid.sum()), int(right.sum())


expected = {}
if task == "tokens":
    ids = np.load(os.path.join(out, "tokens.npy"))
    targets = np.load(os.path.join(out, "token_targets.npy"))
    logits = weights["embed"][ids] @ weights["w"] + weights["b"]
    loss, count, right = cross_entropy(logits, targets, -100)
    expected = {"loss": loss, "targets": count, "correct": right,
                "perplexity": np.exp(loss)}
elif task == "pixels":
    x = np.load(os.path.join(out, "pixels.npy")).astype(np.float64)
    targets = np.load(os.path.join(out, "pixel_targets.npy"))
    logits = np.einsum("kc,nchw->nhwk", weights["w"][:, :, 0, 0], x) + weights["b"]
    loss, count, right = cross_entropy(logits, targets)
    predicted = logits.argmax(-1)
    ious = [((predicted == c) & (targets == c)).sum() /
            ((predicted == c) | (targets == c)).sum()
            for c in range(logits.shape[-1])
            if ((predicted == c) | (targets == c)).any()]
    expected = {"loss": loss, "targets": count, "correct": right,
                "mean_iou": np.mean(ious)}
else:
    x = np.load(os.path.join(out, "regress.npy")).astype(np.float64)
    y = np.load(os.path.join(out, "regress_targets.npy")).astype(np.float64)
    error = x.reshape(len(x), -1) @ weights["w"] + weights["b"] - y
    expected = {"loss": (error ** 2).mean(), "mse": (error ** 2).mean(),
                "mae": np.abs(error).mean()}

bad = [f"{k}: dpc {result.get(k)}, numpy {v}" for k, v in expected.items()
       if result.get(k) is None or abs(result[k] - v) > 1e-5 * max(1, abs(v))]
print("\n".join(bad) if bad else "eval matches")
sys.exit(1 if bad else 0)
