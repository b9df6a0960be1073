#!/usr/bin/env python3
"""Feeds dpc a model truncated at many lengths; each must fail cleanly.

Usage: check_truncations.py DPC MODEL.onnx SCRATCH.onnx
A clean failure is exit code 1 with exactly one line on stderr that names the
file. A crash (signal), a hang (timeout) or a silent success fails the test.
"""
import subprocess
import sys


def main():
    dpc, model, scratch = sys.argv[1:4]
    data = open(model, "rb").read()
    lengths = sorted(set([1, 2, 7, 16, 64, 255, 1024] +
                         list(range(1, len(data), max(1, len(data) // 60)))))
    failures = []
    for n in lengths:
        with open(scratch, "wb") as f:
            f.write(data[:n])
        try:
            run = subprocess.run([dpc, "compile", scratch, "--emit=nn"],
                                 capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            failures.append(f"{n} bytes: hang")
            continue
        lines = run.stderr.strip().splitlines()
        if run.returncode != 1 or len(lines) != 1 or scratch not in lines[0]:
            failures.append(f"{n} bytes: exit {run.returncode}, "
                            f"stderr {run.stderr.strip()!r}")
    print(f"{len(lengths)} truncations, {len(failures)} not rejected cleanly")
    for failure in failures:
        print("  " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
