#!/usr/bin/env python3
"""dpc compile --memory-budget's choice against an exhaustive sweep.

For a model of the zoo and a per-device budget, every combination of
sharding stage (none, optimizer, gradients, parameters), recomputation
(none, or `--remat budget=` the budget) and bucket size (1, 4, 25 MiB) is
compiled; those whose planned peak fits every device are timed with `dpc
run` (STEPS steps after one warm-up epoch of the same length, interleaved
over ROUNDS rounds: each round runs every candidate once), and so is the
plan `--memory-budget` writes. Printed: each candidate's planned peak and
median seconds per step, the best, the choice, and the choice's time over
the best's (the target: within 1.05), with the load the rest of the
machine put on the runs.

  tools/bench/budget_sweep.py [--build build] [--model resnet18]
      [--devices 4] [--batch 32] [--budget 250MiB] [--steps 3] [--rounds 3]
"""
import argparse
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STAGES = ("none", "optimizer", "gradients", "parameters")
BUCKETS = (1, 4, 25)


def busy_cores():
    """The machine's CPU time so far: all of it, and the idle part."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields), idle


def dpc(args, *command, **kwargs):
    return subprocess.run([os.path.join(args.build, "bin", "dpc"), *command],
                          text=True, **kwargs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--budget", default="250MiB")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    model = os.path.join(args.build, "models", args.model + ".onnx")
    devices = ",".join(f"cpu:{d}" for d in range(args.devices))
    common = [model, "--batch", str(args.batch), "--devices", devices,
              "--optimizer", "adamw"]
    with tempfile.TemporaryDirectory() as work:
        import numpy as np
        samples = args.batch * args.steps
        rng = np.random.default_rng(0)
        np.save(os.path.join(work, "x.npy"),
                rng.random((samples, 1, 28, 28), dtype=np.float32))
        np.save(os.path.join(work, "y.npy"),
                rng.integers(0, 10, samples).astype(np.int32))
        data = ("npy:" + os.path.join(work, "x.npy") + "," +
                os.path.join(work, "y.npy"))

        plans = {}
        for stage, remat, bucket in itertools.product(
                STAGES, (False, True), BUCKETS):
            name = f"{stage}{' remat' if remat else ''} {bucket}MiB"
            plan = os.path.join(work, re.sub(r"\W+", "-", name) + ".plan")
            flags = ["--shard", stage, "--bucket-mb", str(bucket)]
            if remat:
                flags += ["--remat", "budget=" + args.budget]
            run = dpc(args, "compile", *common, *flags, "-o", plan,
                      capture_output=True)
            if run.returncode != 0:
                continue
            inspect = dpc(args, "inspect", plan, "--json",
                          capture_output=True, check=True)
            peak = max(d["peak_bytes"]
                       for d in json.loads(inspect.stdout)["devices"])
            plans[name] = (plan, peak)
        chosen = os.path.join(work, "chosen.plan")
        choice = dpc(args, "compile", *common, "--memory-budget", args.budget,
                     "-o", chosen, capture_output=True, check=True)
        print(choice.stderr.strip())
        budget = float(re.search(r"memory budget ([0-9.]+) MiB",
                                 choice.stderr).group(1)) * 2**20
        fitting = {n: p for n, p in plans.items() if p[1] <= budget}
        fitting["chosen"] = (chosen, 0)

        times = {name: [] for name in fitting}
        others = []
        for _ in range(args.rounds):
            for name, (plan, _) in fitting.items():
                total0, idle0 = busy_cores()
                metrics = os.path.join(work, "m.jsonl")
                if os.path.exists(metrics):
                    os.remove(metrics)
                start = time.time()
                dpc(args, "run", plan, "--data", data, "--epochs", "2",
                    "--metrics", metrics, "--quiet", check=True)
                wall = time.time() - start
                total1, idle1 = busy_cores()
                with open(metrics) as f:
                    epochs = [json.loads(line) for line in f]
                times[name].append(epochs[-1]["epoch_seconds"] / args.steps)
                cores = os.cpu_count() * (1 - (idle1 - idle0) /
                                          max(1, total1 - total0))
                others.append(cores)
        print(f"{'candidate':28} {'peak MiB':>9} {'s/step':>8}")
        medians = {n: statistics.median(t) for n, t in times.items()}
        for name, (plan, peak) in fitting.items():
            print(f"{name:28} {peak / 2**20:9.2f} {medians[name]:8.3f}")
        best = min((n for n in medians if n != "chosen"), key=medians.get)
        ratio = medians["chosen"] / medians[best]
        print(f"best: {best} {medians[best]:.3f} s/step; chosen "
              f"{medians['chosen']:.3f} s/step: {ratio:.3f}x the best "
              f"(busy cores while timing up to {max(others):.2f} of "
              f"{os.cpu_count()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
