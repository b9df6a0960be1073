#!/usr/bin/env python3
"""Checks a reduced-precision run against the f32 run of the same plan.

Usage: check_precision.py LOW.jsonl F32.jsonl --loss-rtol R
                          [--final-loss-rtol F] --acc-points P

Both runs are dpc run's metrics (JSON lines per epoch) from the same data,
seed and schedule. Every epoch's train loss of LOW must be within R
(relative) of F32's (the last epoch's within F), both must fall, and the
final test accuracies must be within P points. Prints one line per check; exits 1 if any fails.
"""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("low")
    parser.add_argument("f32")
    parser.add_argument("--loss-rtol", type=float, required=True)
    parser.add_argument("--final-loss-rtol", type=float)
    parser.add_argument("--acc-points", type=float, required=True)
    args = parser.parse_args()
    low = [json.loads(line) for line in open(args.low)]
    f32 = [json.loads(line) for line in open(args.f32)]
    failures = []
    if not low or len(low) != len(f32):
        failures.append(f"{len(low)} epochs vs {len(f32)}")
    for i, (a, b) in enumerate(zip(low, f32)):
        la, lb = a["train_loss"], b["train_loss"]
        print(f"epoch {a['epoch']}: train loss {la:.4f} vs f32 {lb:.4f} "
              f"({abs(la - lb) / lb:.2%})")
        rtol = args.loss_rtol
        if i == len(f32) - 1 and args.final_loss_rtol is not None:
            rtol = args.final_loss_rtol
        if abs(la - lb) > rtol * lb:
            failures.append(f"epoch {a['epoch']} train loss {la} is not "
                            f"within {rtol} of f32's {lb}")
    for name, run in (("low", low), ("f32", f32)):
        losses = [r["train_loss"] for r in run]
        if any(b >= a for a, b in zip(losses, losses[1:])):
            failures.append(f"{name} train loss does not fall: {losses}")
    if low and f32:
        acc, ref = low[-1]["test_acc"], f32[-1]["test_acc"]
        print(f"final test accuracy {acc:.4f} vs f32 {ref:.4f}")
        if abs(acc - ref) * 100 > args.acc_points:
            failures.append(f"test accuracy {acc} is not within "
                            f"{args.acc_points} points of f32's {ref}")
    for failure in failures:
        print("FAILED: " + failure)
    print("precision ok" if not failures else "precision FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
