"""Runs a model that `dpc export -o model.onnx` wrote on token ids.

usage: check_onnx_tokens.py MODEL.onnx TOKENS.npy LOGITS.npy
    (onnxruntime) the logits of the int64 ids [N, T] in TOKENS.npy are
    `dpc predict`'s (LOGITS.npy) within 1e-5 of the largest; onnxruntime
    logs its warnings (e.g. an initializer no node reads) on stderr.
Prints "onnx tokens ok: ..." or the failure, exit 1.
"""
import sys

import numpy as np
import onnxruntime


def main():
    model, tokens, logits = sys.argv[1:4]
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 2  # warnings and errors
    session = onnxruntime.InferenceSession(
        model, options, providers=["CPUExecutionProvider"])
    ids = np.load(tokens).astype(np.int64)
    expected = np.load(logits)
    name = session.get_inputs()[0].name
    got = session.run(None, {name: ids})[0]
    if got.shape != expected.shape:
        print(f"FAIL: logits {got.shape}, dpc predict's {expected.shape}")
        sys.exit(1)
    error = np.abs(got - expected).max() / np.abs(expected).max()
    if not error <= 1e-5:
        print(f"FAIL: logits differ from dpc predict's by {error:.2e}")
        sys.exit(1)
    print(f"onnx tokens ok: {len(ids)} samples, relative error {error:.1e}")


if __name__ == "__main__":
    main()
