"""Exports a trained plan at each of a range of opsets with `dpc export
--opset N` and runs every file written in onnxruntime against dpc
predict's logits (check_onnx_logits.py's comparison).

usage: export_opsets.py DPC PLAN CKPT OUT_DIR FIRST LAST LOGITS.npy
(LOGITS.npy: dpc predict's on the first images of Fashion-MNIST's test set)
Prints, per opset, "opset N: ok, logits within D" or "opset N: refused:
" and dpc's one line; exit 1 where a file disagrees or dpc's message is
not one line.
"""
import subprocess
import sys

import numpy as np
import onnxruntime

from check_onnx_export import load_test_set


def main():
    dpc, plan, checkpoint, out, first, last, logits = sys.argv[1:]
    expected = np.load(logits)
    x = load_test_set(len(expected))
    for opset in range(int(first), int(last) + 1):
        path = f"{out}/opset{opset}.onnx"
        run = subprocess.run([dpc, "export", plan, "--checkpoint", checkpoint,
                              "--opset", str(opset), "-o", path],
                             capture_output=True, text=True)
        if run.returncode:
            lines = run.stderr.splitlines()
            if len(lines) != 1:
                print(f"FAIL: opset {opset}: {len(lines)} lines: {lines}")
                sys.exit(1)
            print(f"opset {opset}: refused: {lines[0]}")
            continue
        session = onnxruntime.InferenceSession(
            path, providers=["CPUExecutionProvider"])
        (name,) = [i.name for i in session.get_inputs()]
        got = session.run(None, {name: x})[0]
        diff = float(np.max(np.abs(got - expected)))
        if got.shape != expected.shape or diff > 1e-5 or not np.array_equal(
                got.argmax(1), expected.argmax(1)):
            print(f"FAIL: opset {opset}: logits differ by {diff:.3g}")
            sys.exit(1)
        print(f"opset {opset}: ok, logits within {diff:.2g}")


if __name__ == "__main__":
    main()
