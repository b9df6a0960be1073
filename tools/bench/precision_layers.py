#!/usr/bin/env python3
"""Per-layer kernel time of a model in f32, bf16 and --precision auto.

Compiles the model three ways (--precision f32, bf16, auto: the same kernel
calls in the same order, only their precision differs), trains each for a
few steps with `dpc run --trace`, and prints for every convolution, linear
and matmul call of the train step its median time per step in each plan
(the kernel with its reorders and rounding, as the plan runs it), the
choice auto made, and the step's totals. It checks --precision auto's
choices in place: where auto chose one precision, the other should not be
clearly faster.

  tools/bench/precision_layers.py [--build build] [--model resnet18]
      [--batch 64] [--steps 6]

Runs with OMP_WAIT_POLICY=passive; on a shared machine compare the plans
of the same run only, and rerun when the load (printed) was high.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import json

MIXED = ("Conv2d", "Linear", "Matmul")
SKIPPED_STEPS = 2  # primitive creation and first touches


def compile_plan(dpc, onnx, batch, precision, path):
    subprocess.run([dpc, "compile", onnx, "--batch", str(batch),
                    "--precision", precision, "-o", path], check=True)
    text = subprocess.run([dpc, "compile", onnx, "--batch", str(batch),
                           "--precision", precision, "--emit=exec"],
                          check=True, capture_output=True, text=True).stdout
    train = text[text.index('exec.step "train_step"'):]
    if 'exec.step "eval_step"' in train:
        train = train[:train.index('exec.step "eval_step"')]
    choices = [m.group(1) for m in re.finditer(
        r'exec\.kernel "\w+".*?precision = (f32|bf16)', train)]
    return choices, train.count("exec.kernel ")


def trace_plan(dpc, plan, batch, steps, per_step, trace):
    subprocess.run([dpc, "run", plan, "--data", "fashion-mnist", "--steps",
                    str(steps), "--test-subset", str(batch), "--trace",
                    trace, "--quiet"], check=True,
                   env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    spans = sorted((e for e in events
                    if e.get("ph") == "X" and e.get("cat") == "compute"),
                   key=lambda e: e["ts"])
    # The train steps come first; the evaluation after them is left out.
    if len(spans) < steps * per_step:
        sys.exit(f"precision_layers.py: {len(spans)} compute spans, fewer "
                 f"than {steps} steps of {per_step} calls")
    calls = []
    for i in range(per_step):
        runs = [spans[s * per_step + i] for s in range(SKIPPED_STEPS, steps)]
        calls.append((runs[0]["name"],
                      statistics.median(r["dur"] for r in runs) / 1000))
    return calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    if args.steps <= SKIPPED_STEPS:
        sys.exit(f"precision_layers.py: --steps must exceed {SKIPPED_STEPS}")
    dpc = os.path.join(args.build, "bin", "dpc")
    onnx = os.path.join(args.build, "models", args.model + ".onnx")
    with open("/proc/loadavg") as f:
        print(f"{args.model}, batch {args.batch}, load average "
              f"{f.read().strip()}")
    timings, choices = {}, None
    with tempfile.TemporaryDirectory() as workdir:
        for precision in ("f32", "bf16", "auto"):
            plan = os.path.join(workdir, precision + ".plan")
            chosen, per_step = compile_plan(dpc, onnx, args.batch,
                                            precision, plan)
            if precision == "auto":
                choices = chosen
            timings[precision] = trace_plan(
                dpc, plan, args.batch, args.steps, per_step,
                os.path.join(workdir, precision + ".json"))
    names = [name for name, _ in timings["f32"]]
    if any([n for n, _ in timings[p]] != names for p in timings):
        sys.exit("precision_layers.py: the plans' calls differ")
    print(f"{'call':<28} {'f32 ms':>9} {'bf16 ms':>9} {'auto ms':>9}  auto")
    totals = {p: 0.0 for p in timings}
    mixed = {p: 0.0 for p in timings}
    regrets, index = 0, 0
    for i, name in enumerate(names):
        t = {p: timings[p][i][1] for p in timings}
        for p in t:
            totals[p] += t[p]
        if not name.startswith(MIXED):
            continue
        for p in t:
            mixed[p] += t[p]
        choice = choices[index] if index < len(choices) else "?"
        index += 1
        other = t["bf16"] if choice == "f32" else t["f32"]
        mine = t["f32"] if choice == "f32" else t["bf16"]
        flag = "  (other 1.2x faster)" if other * 1.2 < mine else ""
        regrets += bool(flag)
        print(f"{i:3d} {name:<24} {t['f32']:9.3f} {t['bf16']:9.3f} "
              f"{t['auto']:9.3f}  {choice}{flag}")
    for label, sums in (("convolutions and matmuls", mixed),
                        ("whole step (all kernels)", totals)):
        print(f"{label:<28} {sums['f32']:9.2f} {sums['bf16']:9.2f} "
              f"{sums['auto']:9.2f}   bf16 {sums['f32'] / sums['bf16']:.2f}x, "
              f"auto {sums['f32'] / sums['auto']:.2f}x of f32")
    print(f"auto's choices where the other precision was 1.2x faster: "
          f"{regrets}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
