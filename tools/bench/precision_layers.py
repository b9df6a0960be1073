#!/usr/bin/env python3
"""Per-layer kernel time of a model in f32, bf16 and --precision auto.

Compiles the model three ways (--precision f32, bf16, auto: the same kernel
calls in the same order, only their precision differs), trains each for a
few steps with `dpc run --trace`, and prints for every convolution, linear
and matmul call of the train step its median time per step in each plan
(the kernel with its reorders and rounding, as the plan runs it), the
choice auto made, and the step's totals. It checks --precision auto's
choices in place: where auto chose one precision, the other should not be
clearly faster. Each call's FLOPs (the direct algorithm's, also for
Winograd calls) give its GFLOP/s in the auto plan and the fraction of the
machine's peak for the precision auto chose (f32 FMA or bf16 dot product,
measured by dpc-bench-peak on as many threads as the plans run): what
bounds each layer.

  tools/bench/precision_layers.py [--build build] [--model resnet18]
      [--batch 64] [--steps 6] [--threads T] [--costs FILE]

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
import math

MIXED = ("Conv2d", "Linear", "Matmul")
SKIPPED_STEPS = 2  # primitive creation and first touches


KERNEL = re.compile(r'exec\.kernel "(\w+)" ins\([^:]*: ([^)]*)\) '
                    r'outs\([^:]*: ([^)]*)\)(.*)')
MEMREF = re.compile(r"memref<([^>]*)>")
PASSES = {"Forward": "fwd", "BackwardData": "bwd-data",
          "BackwardWeights": "bwd-weights", "TransposedA": "bwd-weights"}


def shapes(types, batch):
    """The dims of each memref in `types`, the batch ('?') as `batch`."""
    return [[batch if d == "?" else int(d) for d in m.group(1).split("x")[:-1]]
            for m in MEMREF.finditer(types)]


def call_flops(name, ins, outs):
    """Multiply-adds x 2 of a convolution or matmul call, or 0 where the
    shapes do not say (the direct algorithm's count, Winograd's too)."""
    if name.startswith("Conv2d"):
        # Weights [k, c/g, r, s]; the output image [n, k, oh, ow] is y
        # (forward) or dy (operand 0 of backward-data, 1 of backward-weights).
        weights = outs[0] if "BackwardWeights" in name else ins[1]
        y = (ins[0] if "BackwardData" in name else
             ins[1] if "BackwardWeights" in name else outs[0])
        k, cg, r, s = weights
        return 2 * y[0] * k * cg * r * s * y[2] * y[3]
    if name.startswith(("Linear", "Matmul")) and len(ins) >= 2:
        # Every variant multiplies an [m, k] by a [k, n] (either may be
        # transposed) into an [m, n]: the sizes' product is (mkn)^2.
        sizes = [math.prod(t) for t in (ins[0], ins[1], outs[0])]
        return 2 * round(math.prod(sizes) ** 0.5)
    return 0


def compile_plan(dpc, onnx, batch, precision, path, costs):
    extra = ["--costs", costs] if costs else []
    subprocess.run([dpc, "compile", onnx, "--batch", str(batch),
                    "--precision", precision, "-o", path] + extra, check=True)
    text = subprocess.run([dpc, "compile", onnx, "--batch", str(batch),
                           "--precision", precision, "--emit=exec"] + extra,
                          check=True, capture_output=True, text=True).stdout
    train = text[text.index('exec.step "train_step"'):]
    if 'exec.step "eval_step"' in train:
        train = train[:train.index('exec.step "eval_step"')]
    calls = []  # (precision, algorithm, flops) of each mixed-precision call
    for m in KERNEL.finditer(train):
        precision_ = re.search(r"precision = (f32|bf16)", m.group(4))
        if not precision_:
            continue
        algorithm = re.search(r'algorithm = "(\w+)"', m.group(4))
        calls.append((precision_.group(1),
                      algorithm.group(1) if algorithm else "",
                      call_flops(m.group(1), shapes(m.group(2), batch),
                                 shapes(m.group(3), batch))))
    return calls, train.count("exec.kernel ")


def measure_peaks(build, threads):
    """GFLOP/s of f32 FMAs and bf16 dot products on `threads` threads
    (dpc-bench-peak), or None where it cannot tell."""
    out = subprocess.run([os.path.join(build, "bin", "dpc-bench-peak"),
                          "--seconds", "0.5"], capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    peaks = {}
    for line in out.stdout.splitlines():
        m = re.match(r"(f32|bf16) .* (\d+) +([\d.]+)$", line)
        if m and int(m.group(2)) == threads:
            peaks[m.group(1)] = float(m.group(3))
    return peaks


def trace_plan(dpc, plan, batch, steps, per_step, trace, threads):
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    subprocess.run([dpc, "run", plan, "--data", "fashion-mnist", "--steps",
                    str(steps), "--test-subset", str(batch), "--trace",
                    trace, "--quiet"], check=True, env=env)
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
    parser.add_argument("--threads", type=int, default=0,
                        help="OMP_NUM_THREADS of the runs (default: "
                        "OpenMP's)")
    parser.add_argument("--costs", default="",
                        help="a dpc calibrate --kernels file for auto")
    args = parser.parse_args()
    if args.steps <= SKIPPED_STEPS:
        sys.exit(f"precision_layers.py: --steps must exceed {SKIPPED_STEPS}")
    dpc = os.path.join(args.build, "bin", "dpc")
    onnx = os.path.join(args.build, "models", args.model + ".onnx")
    threads = args.threads or os.cpu_count()
    with open("/proc/loadavg") as f:
        print(f"{args.model}, batch {args.batch}, {threads} threads, load "
              f"average {f.read().strip()}")
    peaks = measure_peaks(args.build, threads)
    if peaks:
        print("peak GFLOP/s (dpc-bench-peak): " + ", ".join(
            f"{k} {v:.0f}" for k, v in sorted(peaks.items())))
    timings, choices = {}, None
    with tempfile.TemporaryDirectory() as workdir:
        for precision in ("f32", "bf16", "auto"):
            plan = os.path.join(workdir, precision + ".plan")
            chosen, per_step = compile_plan(dpc, onnx, args.batch,
                                            precision, plan, args.costs)
            if precision == "auto":
                choices = chosen
            timings[precision] = trace_plan(
                dpc, plan, args.batch, args.steps, per_step,
                os.path.join(workdir, precision + ".json"), args.threads)
    names = [name for name, _ in timings["f32"]]
    if any([n for n, _ in timings[p]] != names for p in timings):
        sys.exit("precision_layers.py: the plans' calls differ")
    print(f"{'call':<28} {'pass':<11} {'GFLOP':>6} {'f32 ms':>8} "
          f"{'bf16 ms':>8} {'auto ms':>8}  {'auto':<13} {'GFLOP/s':>7} "
          f"{'peak':>5}")
    totals = {p: 0.0 for p in timings}
    mixed = {p: 0.0 for p in timings}
    by_pass = {}
    regrets, index, flops_total = 0, 0, 0
    for i, name in enumerate(names):
        t = {p: timings[p][i][1] for p in timings}
        for p in t:
            totals[p] += t[p]
        if not name.startswith(MIXED):
            continue
        for p in t:
            mixed[p] += t[p]
        choice, algorithm, flops = (choices[index] if index < len(choices)
                                    else ("?", "", 0))
        index += 1
        kind = next((v for k, v in PASSES.items() if name.endswith(k)), "")
        other = t["bf16"] if choice == "f32" else t["f32"]
        mine = t["f32"] if choice == "f32" else t["bf16"]
        flag = "  (other 1.2x faster)" if other * 1.2 < mine else ""
        regrets += bool(flag)
        rate = flops / (t["auto"] * 1e6) if t["auto"] > 0 else 0
        peak = peaks.get(choice)
        share = f"{100 * rate / peak:4.0f}%" if peak else "    ?"
        flops_total += flops
        entry = by_pass.setdefault(kind, [0.0, 0])
        entry[0] += t["auto"]
        entry[1] += flops
        how = choice + ("/" + algorithm[:4] if algorithm else "")
        print(f"{i:3d} {name:<24} {kind:<11} {flops / 1e9:6.2f} "
              f"{t['f32']:8.2f} {t['bf16']:8.2f} {t['auto']:8.2f}  "
              f"{how:<13} {rate:7.1f} {share}{flag}")
    for kind, (ms, flops) in sorted(by_pass.items()):
        print(f"auto, {kind:<22} {ms:9.2f} ms  {flops / 1e9:7.2f} GFLOP  "
              f"{flops / (ms * 1e6) if ms else 0:7.1f} GFLOP/s")
    for label, sums in (("convolutions and matmuls", mixed),
                        ("whole step (all kernels)", totals)):
        print(f"{label:<28} {sums['f32']:9.2f} {sums['bf16']:9.2f} "
              f"{sums['auto']:9.2f}   bf16 {sums['f32'] / sums['bf16']:.2f}x, "
              f"auto {sums['f32'] / sums['auto']:.2f}x of f32")
    print(f"auto's step: {flops_total / 1e9:.1f} GFLOP in convolutions and "
          f"matmuls, {totals['auto'] - mixed['auto']:.2f} ms in other "
          f"kernels")
    print(f"auto's choices where the other precision was 1.2x faster: "
          f"{regrets}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
