#!/usr/bin/env python3
"""Asserts what a user checks in dpc run's metrics (JSON lines per epoch).

Usage: check_metrics.py METRICS.jsonl [--epochs N] [--loss-decreases]
                        [--min-test-acc A] [--same-as OTHER.jsonl --rtol R]
                        [--memory-within F] [--falls KEY:F ...]
                        [--rises KEY:A ...]
Prints one line per check; exits 1 if any fails.
"""
import argparse
import json
import sys

KEYS = ("epoch", "train_loss", "train_acc", "test_acc", "epoch_seconds",
        "images_per_second")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("metrics")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--loss-decreases", action="store_true")
    parser.add_argument("--min-test-acc", type=float)
    parser.add_argument("--same-as", help="another run's metrics: the losses "
                        "and accuracies must agree to --rtol")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--falls", action="append", default=[],
                        metavar="KEY:F", help="KEY falls every epoch and "
                        "ends at most F times its first epoch's value")
    parser.add_argument("--rises", action="append", default=[],
                        metavar="KEY:A", help="KEY ends above its first "
                        "epoch's value and at least A")
    parser.add_argument("--memory-within", type=float,
                        help="each device's allocated peak within this "
                        "fraction of the plan's prediction, every epoch")
    args = parser.parse_args()
    records = [json.loads(line) for line in open(args.metrics)]
    failures = []
    for record in records:
        missing = [k for k in KEYS if k not in record]
        if missing:
            failures.append(f"epoch record lacks {missing}")
    if args.epochs is not None and len(records) != args.epochs:
        failures.append(f"{len(records)} epochs, expected {args.epochs}")
    losses = [r["train_loss"] for r in records]
    if args.loss_decreases and any(b >= a for a, b in zip(losses, losses[1:])):
        failures.append(f"train loss does not decrease: {losses}")
    for falls in args.falls:
        key, fraction = falls.rsplit(":", 1)
        values = [r.get(key) for r in records]
        if None in values or not values:
            failures.append(f"{key} missing: {values}")
        elif any(b >= a for a, b in zip(values, values[1:])) or \
                values[-1] > float(fraction) * values[0]:
            failures.append(f"{key} does not fall to {fraction} of its "
                            f"first value every epoch: {values}")
        else:
            print(f"{key} falls from {values[0]:.4g} to {values[-1]:.4g}")
    for rises in args.rises:
        key, least = rises.rsplit(":", 1)
        values = [r.get(key) for r in records]
        if None in values or not values:
            failures.append(f"{key} missing: {values}")
        elif values[-1] <= values[0] or values[-1] < float(least):
            failures.append(f"{key} does not rise to {least}: {values}")
        else:
            print(f"{key} rises from {values[0]:.4g} to {values[-1]:.4g}")
    final = records[-1]["test_acc"] if records else None
    if args.min_test_acc is not None and (final is None or
                                          final < args.min_test_acc):
        failures.append(f"final test accuracy {final} < {args.min_test_acc}")
    if args.same_as:
        others = [json.loads(line) for line in open(args.same_as)]
        for mine, other in zip(records, others):
            # The validation metrics (and a task's test loss) where either
            # run has them.
            val = [k for k in ("val_loss", "val_acc", "test_loss")
                   if k in mine or k in other]
            for key in ("train_loss", "train_acc", "test_acc", *val):
                a, b = mine.get(key), other.get(key)
                if a is None or b is None:
                    if a is not b:
                        failures.append(f"epoch {mine['epoch']} {key}: "
                                        f"{a} vs {b}")
                    continue
                if abs(a - b) > args.rtol * max(abs(a), abs(b)):
                    failures.append(f"epoch {mine['epoch']} {key}: {a} vs {b}")
        if len(records) != len(others):
            failures.append(f"{len(records)} epochs vs {len(others)}")
    if args.memory_within is not None:
        for record in records:
            devices = record.get("memory", [])
            if not devices:
                failures.append(f"epoch {record['epoch']} has no memory")
            for device in devices:
                planned = device["planned_bytes"]
                measured = device["allocated_peak_bytes"]
                if abs(measured - planned) > args.memory_within * planned:
                    failures.append(
                        f"epoch {record['epoch']} {device['device']}: "
                        f"allocated {measured} bytes, planned {planned}")
        if records and records[-1].get("memory"):
            print("memory: " + ", ".join(
                f"{d['device']} planned {d['planned_bytes']} allocated "
                f"{d['allocated_peak_bytes']}" for d in records[-1]["memory"])
                + "; libraries held at most " + ", ".join(
                    str(d["library_peak_bytes"])
                    for d in records[-1]["memory"]))
    print(f"epochs {len(records)}, train loss {losses}, "
          f"final test accuracy {final}")
    for failure in failures:
        print("FAILED: " + failure)
    print("metrics ok" if not failures else "metrics FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
