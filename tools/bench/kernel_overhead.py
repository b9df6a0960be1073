#!/usr/bin/env python3
"""Host time per kernel call: what dpc spends around each kernel.

Compiles a model at a tiny batch (default 1), so that the kernels
themselves do almost nothing, trains it for 20 steps with `dpc run
--trace`, and reads the trace of the compute stream: each span is one
kernel call as the stream ran it (the kernel function with its
descriptor setup, primitive lookup, argument wrapping and reorders), and
the gap before it is the stream's dispatch of the call. The first steps
(primitive creation) are left out. Prints, per kernel kind and in all,
the median span and gap in microseconds, and the steady steps' wall time
per call.

  tools/bench/kernel_overhead.py [--build build] [--models lenet_relu,...]
      [--batch 1] [--json FILE]

Run with OMP_WAIT_POLICY=passive on a shared machine (it sets it).
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile

TRACED_STEPS = 20  # dpc run --trace records the first 20 train steps
SKIPPED_STEPS = 3


def trace_model(build, model, batch, workdir):
    dpc = os.path.join(build, "bin", "dpc")
    plan = os.path.join(workdir, model + ".plan")
    trace = os.path.join(workdir, model + ".json")
    subprocess.run([dpc, "compile", os.path.join(build, "models",
                                                 model + ".onnx"),
                    "--batch", str(batch), "-o", plan], check=True)
    subprocess.run([dpc, "run", plan, "--data", "fashion-mnist", "--steps",
                    str(TRACED_STEPS), "--test-subset", str(batch), "--trace",
                    trace, "--quiet"], check=True,
                   env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    return [e for e in events
            if e.get("ph") == "X" and e.get("cat") == "compute"]


def summarize(model, spans):
    spans.sort(key=lambda e: e["ts"])
    if len(spans) % TRACED_STEPS:
        sys.exit(f"kernel_overhead.py: {model}: {len(spans)} compute spans "
                 f"are not {TRACED_STEPS} equal steps")
    per_step = len(spans) // TRACED_STEPS
    steady = spans[SKIPPED_STEPS * per_step:]
    durations = collections.defaultdict(list)
    gaps = collections.defaultdict(list)
    for previous, span in zip(steady, steady[1:]):
        if span["ts"] - previous["ts"] > 0:
            gaps[span["name"]].append(
                span["ts"] - previous["ts"] - previous["dur"])
    for span in steady:
        durations[span["name"]].append(span["dur"])
    walls = []
    for step in range(SKIPPED_STEPS, TRACED_STEPS):
        first = spans[step * per_step]
        last = spans[(step + 1) * per_step - 1]
        walls.append((last["ts"] + last["dur"] - first["ts"]) / per_step)
    print(f"\n{model}: {per_step} kernel calls per step; microseconds, "
          f"median over steps {SKIPPED_STEPS + 1}-{TRACED_STEPS}")
    print(f"  {'kernel':<28} {'calls':>6} {'span':>8} {'gap':>8}")
    rows = {}
    for name in sorted(durations, key=lambda n: -sum(durations[n])):
        span = statistics.median(durations[name])
        gap = statistics.median(gaps[name]) if gaps[name] else 0.0
        calls = len(durations[name]) // (TRACED_STEPS - SKIPPED_STEPS)
        rows[name] = {"calls": calls, "span": span, "gap": gap}
        print(f"  {name:<28} {calls:>6} {span:8.1f} {gap:8.1f}")
    all_spans = [d for ds in durations.values() for d in ds]
    all_gaps = [g for gs in gaps.values() for g in gs]
    summary = {"model": model, "calls_per_step": per_step,
               "median_span": statistics.median(all_spans),
               "median_gap": statistics.median(all_gaps),
               "wall_per_call": statistics.median(walls), "kernels": rows}
    print(f"  all: median span {summary['median_span']:.1f}, median gap "
          f"{summary['median_gap']:.1f}, step wall per call "
          f"{summary['wall_per_call']:.1f}", flush=True)
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default="mlp,lenet_relu,resnet18_narrow")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    with open("/proc/loadavg") as f:
        print(f"batch {args.batch}; load average {f.read().strip()}")
    summaries = []
    with tempfile.TemporaryDirectory() as workdir:
        for model in args.models.split(","):
            summaries.append(summarize(
                model, trace_model(args.build, model, args.batch, workdir)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summaries, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
