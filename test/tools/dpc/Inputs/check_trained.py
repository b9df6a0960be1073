"""Checks dpc eval, predict and export against each other and the run.

usage: check_trained.py METRICS.jsonl EVAL.json LOGITS.npy TOP3.npy
           NPY_LOGITS.npy LABELLED_LOGITS.npy WEIGHTS.npz CHECKPOINT LABELS.npy

- eval's accuracy is the run's last test accuracy, image for image;
- predict's logits give eval's predictions (its confusion matrix); top-3's
  first column is their argmax and its rows are in descending logit order;
- logits of images alone (npy:X.npy) equal those of the labelled set and
  those of fashion-mnist within 1e-5;
- export's arrays are the checkpoint's parameters and buffers, bit for bit
  (read with the reader in docs/checkpoint-format.md).
Prints "trained ok" or the failures.
"""
import json
import struct
import sys

import numpy as np

DTYPES = {0: "<f4", 1: "<f8", 2: "<f2", 4: "<i4", 5: "<i8", 6: "u1"}


def read_checkpoint(path):
    b = open(path, "rb").read()
    version = int(b[7:8])
    assert b[:7] == b"DPCCKPT" and 1 <= version <= 4
    at = 8 + 4 * 8 + (5 * 8 if version >= 2 else 0)
    (epochs,) = struct.unpack_from("<Q", b, at)
    at += 8 + epochs * (72 if version >= 3 else 56)
    (count,) = struct.unpack_from("<Q", b, at)
    at += 8
    tensors = {}
    for _ in range(count):
        (n,) = struct.unpack_from("<Q", b, at)
        at += 8
        name = b[at:at + n].decode()
        at += n
        dtype, rank = struct.unpack_from("<iQ", b, at)
        at += 12
        dims = struct.unpack_from(f"<{rank}q", b, at)
        at += 8 * rank
        (size,) = struct.unpack_from("<Q", b, at)
        at += 8
        item = np.dtype(DTYPES[dtype]).itemsize
        tensors[name] = np.frombuffer(b, DTYPES[dtype], size // item,
                                      at).reshape(dims)
        at += size
    return tensors


def main():
    (metrics, eval_json, logits, top3, npy_logits, labelled_logits, weights,
     checkpoint, labels) = sys.argv[1:]
    failures = []
    last = [json.loads(line) for line in open(metrics)][-1]
    result = json.load(open(eval_json))
    labels = np.load(labels)
    n = result["samples"]
    if round(last["test_acc"] * n) != result["correct"]:
        failures.append(f"eval: {result['correct']} right, the run's test "
                        f"accuracy {last['test_acc']} of {n}")
    logits = np.load(logits)
    predicted = logits.argmax(axis=1)
    confusion = np.zeros_like(np.array(result["confusion_matrix"]))
    np.add.at(confusion, (labels, predicted), 1)
    if (confusion != np.array(result["confusion_matrix"])).any():
        failures.append("predict's argmax disagrees with eval's confusion")
    if int((predicted == labels).sum()) != result["correct"]:
        failures.append("predict's argmax disagrees with eval's accuracy")
    top3 = np.load(top3)
    if top3.dtype != np.int64 or top3.shape != (n, 3):
        failures.append(f"top-3: {top3.dtype} {top3.shape}")
    elif (top3[:, 0] != predicted).any():
        failures.append("top-3's first column is not the argmax")
    elif (np.diff(np.take_along_axis(logits, top3, 1), axis=1) > 0).any():
        failures.append("top-3 is not in descending order")
    alone, labelled = np.load(npy_logits), np.load(labelled_logits)
    if not np.array_equal(alone, labelled):
        failures.append("npy:X.npy and npy:X.npy,Y.npy give other logits")
    if np.abs(alone - logits).max() > 1e-5:
        failures.append("npy:X.npy and fashion-mnist logits differ by "
                        f"{np.abs(alone - logits).max()}")
    exported = np.load(weights)
    saved = read_checkpoint(checkpoint)
    expected = {k for k in saved if not k.endswith(".momentum_buffer")}
    if set(exported.files) != expected:
        failures.append(f"export: {sorted(exported.files)}, checkpoint: "
                        f"{sorted(expected)}")
    for name in exported.files:
        if name in saved and not np.array_equal(exported[name], saved[name]):
            failures.append(f"export: '{name}' differs from the checkpoint")
    print("\n".join(failures) if failures else "trained ok")
    sys.exit(1 if failures else 0)


main()
