#!/usr/bin/env python3
"""Where one training step's time goes, per kernel call, in two builds.

Compiles a model at a training batch (default 256) with each build's dpc
(and --precision), traces 20 training steps of each with `dpc run --trace`
(the runs alternate, ROUNDS times, so both see the same weather), and
prints per kernel call of the step, in step order, the median span in
microseconds over the steady steps (the first 3 left out: primitive
creation) and over the rounds, for the base and the build, plus the step's
wall time (first kernel to the next step's first kernel: the gap after the
last kernel, loader and dispatch included) and CPU time of the whole run.

  tools/bench/step_profile.py --build build [--baseline /work/main/build]
      [--models mlp,lenet_relu] [--precision auto] [--batch 256]
      [--rounds 3] [--threads N]

Run with OMP_WAIT_POLICY=passive (it sets it); --threads sets
OMP_NUM_THREADS.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from kernel_overhead import TRACED_STEPS, SKIPPED_STEPS  # noqa: E402

import json  # noqa: E402


def trace(build, plan, path, env):
    dpc = os.path.join(build, "bin", "dpc")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([dpc, "run", plan, "--data", "fashion-mnist", "--steps",
                    str(TRACED_STEPS), "--test-subset", "256", "--trace",
                    path, "--quiet"], check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime +
                                               before.ru_stime)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    spans = sorted((e for e in events if e.get("ph") == "X" and
                    e.get("cat") == "compute" and e.get("tid") == 0),
                   key=lambda e: e["ts"])
    per = len(spans) // TRACED_STEPS
    names = [s["name"] for s in spans[:per]]
    durs = [[] for _ in range(per)]
    walls = []
    for step in range(SKIPPED_STEPS, TRACED_STEPS):
        part = spans[step * per:(step + 1) * per]
        for i, span in enumerate(part):
            durs[i].append(span["dur"])
        if step + 1 < TRACED_STEPS:
            walls.append(spans[(step + 1) * per]["ts"] - part[0]["ts"])
    return names, [statistics.median(d) for d in durs], \
        statistics.median(walls), cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--baseline", default=None)
    parser.add_argument("--models", default="mlp,lenet_relu")
    parser.add_argument("--precision", default="f32")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    if args.threads:
        env["OMP_NUM_THREADS"] = str(args.threads)
    builds = [("base", args.baseline)] if args.baseline else []
    builds.append(("build", args.build))
    with open("/proc/loadavg") as f:
        print(f"batch {args.batch}, --precision {args.precision}; load "
              f"average {f.read().strip()}")
    with tempfile.TemporaryDirectory() as workdir:
        for model in args.models.split(","):
            results = {}
            for tag, build in builds:
                plan = os.path.join(workdir, f"{model}-{tag}.plan")
                subprocess.run([os.path.join(build, "bin", "dpc"), "compile",
                                os.path.join(args.build, "models",
                                             model + ".onnx"),
                                "--batch", str(args.batch), "--precision",
                                args.precision, "-o", plan], check=True)
                results[tag] = []
            for _ in range(args.rounds):
                for tag, build in builds:
                    plan = os.path.join(workdir, f"{model}-{tag}.plan")
                    results[tag].append(trace(
                        build, plan, os.path.join(workdir, "t.json"), env))
            print(f"\n{model}: median us per call over steps "
                  f"{SKIPPED_STEPS + 1}-{TRACED_STEPS} and {args.rounds} "
                  f"rounds")
            header = "".join(f"{tag:>10}" for tag, _ in builds)
            print(f"  {'#':>2} {'kernel':<30}{header}")
            names = {tag: results[tag][0][0] for tag, _ in builds}
            length = max(len(n) for n in names.values())
            for i in range(length):
                cells, label = "", ""
                for tag, _ in builds:
                    if i < len(names[tag]):
                        label = label or names[tag][i]
                        value = statistics.median(r[1][i]
                                                  for r in results[tag])
                        cells += f"{value:10.1f}"
                    else:
                        cells += f"{'-':>10}"
                print(f"  {i:2d} {label:<30}{cells}")
            for what, index, unit in (("kernels (sum)", None, "us"),
                                      ("step wall", 2, "us"),
                                      ("run CPU", 3, "s")):
                cells = ""
                for tag, _ in builds:
                    if index is None:
                        value = statistics.median(sum(r[1])
                                                  for r in results[tag])
                    else:
                        value = statistics.median(r[index]
                                                  for r in results[tag])
                    cells += f"{value:10.1f}" if unit == "us" else \
                        f"{value:10.2f}"
                print(f"     {what + ' (' + unit + ')':<30}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
