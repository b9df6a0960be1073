#!/usr/bin/env python3
"""What rematerialization saves and what it costs, on the d2l ResNet-18.

Compiles the model at batch 256 without recomputation, then with
--remat=budget=<half the unconstrained planned peak> (and any other --remat
given with --also), reads the planned memory from `dpc inspect --json`,
and times `dpc run PLAN --data fashion-mnist --steps N` for each plan,
alternating the plans --repeats times and keeping each plan's fastest run
(the machine may be shared). Besides wall time per step it reports CPU time
per step (user + system of the run, over the steps), which other processes
on a shared machine disturb less. Prints a table and the two ratios the issue
asks about: planned activations with the budget over those without
(target <= 0.50) and step time with the budget over step time without
(target <= 1.35).

  python3 tools/bench/remat.py [--build build] [--model resnet18]
      [--batch 256] [--steps 5] [--repeats 2] [--fraction 0.5]
      [--also segments=4]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile


def dpc(build, *args, capture=False):
    command = [os.path.join(build, "bin", "dpc"), *args]
    result = subprocess.run(command, check=True, text=True,
                            stdout=subprocess.PIPE if capture else None)
    return result.stdout


def compile_plan(build, model, batch, remat, plan):
    dpc(build, "compile", os.path.join(build, "models", model + ".onnx"),
        "--batch", str(batch), "--remat", remat, "-o", plan)
    (device,) = json.loads(dpc(build, "inspect", plan, "--json",
                               capture=True))["devices"]
    return device


def step_seconds(build, plan, batch, steps, workdir):
    """Wall seconds per training step (from the run's metrics) and CPU
    seconds per step (the whole run's, data loading and the short eval
    included)."""
    metrics = os.path.join(workdir, "metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    dpc(build, "run", plan, "--data", "fashion-mnist", "--steps", str(steps),
        "--test-subset", str(batch), "--metrics", metrics, "--quiet")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(metrics) as f:
        images_per_second = json.loads(f.readlines()[-1])["images_per_second"]
    return batch / images_per_second, cpu / steps


def mib(n):
    return f"{n / 1048576:8.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--fraction", type=float, default=0.5,
                        help="the budget, as a fraction of the "
                        "unconstrained planned peak")
    parser.add_argument("--also", action="append", default=[],
                        help="another --remat setting to measure")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as workdir:
        plans = {}
        base = compile_plan(args.build, args.model, args.batch, "none",
                            os.path.join(workdir, "none.plan"))
        plans["none"] = base
        budget = int(base["peak_bytes"] * args.fraction)
        for remat in [f"budget={budget}"] + args.also:
            plans[remat] = compile_plan(
                args.build, args.model, args.batch, remat,
                os.path.join(workdir, remat.replace("=", "_") + ".plan"))
        files = {remat: os.path.join(workdir, remat.replace("=", "_") +
                                     ".plan") for remat in plans}
        files["none"] = os.path.join(workdir, "none.plan")
        times = {remat: [] for remat in plans}
        for _ in range(args.repeats):
            for remat in plans:
                times[remat].append(step_seconds(args.build, files[remat],
                                                 args.batch, args.steps,
                                                 workdir))

    print(f"{args.model}, batch {args.batch}, {args.steps} steps, best of "
          f"{args.repeats}; budget = {args.fraction} x unconstrained peak = "
          f"{budget} bytes")
    print(f"{'--remat':<22} {'peak MiB':>9} {'activ. MiB':>10} "
          f"{'remat GFLOP':>11} {'s/step':>8} {'CPU s/step':>10}  all runs "
          f"(wall/CPU)")
    for remat, device in plans.items():
        runs = " ".join(f"{w:.2f}/{c:.2f}" for w, c in times[remat])
        print(f"{remat:<22} {mib(device['peak_bytes']):>9} "
              f"{mib(device['activations_bytes']):>10} "
              f"{device['remat_flops'] / 1e9:11.2f} "
              f"{min(w for w, _ in times[remat]):8.3f} "
              f"{min(c for _, c in times[remat]):10.3f}  {runs}")
    key = f"budget={budget}"
    activations = plans[key]["activations_bytes"] / base["activations_bytes"]
    wall = min(w for w, _ in times[key]) / min(w for w, _ in times["none"])
    cpu = min(c for _, c in times[key]) / min(c for _, c in times["none"])
    print(f"activations with the budget / without: {activations:.3f} "
          f"(target <= 0.50)")
    print(f"step time with the budget / without:   {wall:.3f} wall, "
          f"{cpu:.3f} CPU (target <= 1.35)")
    return 0 if activations <= 0.5 and wall <= 1.35 else 1


if __name__ == "__main__":
    sys.exit(main())
