"""Checks `dpc inspect --json` memory reports.

check_memory.py REPORT.json [--same-as ONE.json] [--max-activations-of BASE.json FRACTION]

Every device's peak must be the sum of its parts. With --same-as, every
device must hold exactly what the one device of ONE.json holds (a device of
an N-device plan at batch N*B holds its own share: what one device holds at
batch B). With --max-activations-of, each device's activations must be at
most FRACTION of BASE.json's. Prints "memory ok" or what failed.
"""
import json
import sys

PARTS = ["parameters_bytes", "buffers_bytes", "optimizer_bytes",
         "gradients_bytes", "activations_bytes", "workspace_bytes",
         "gathered_parameters_bytes"]


def load(path):
    with open(path) as f:
        return json.load(f)["devices"]


def main(argv):
    devices = load(argv[1])
    errors = []
    for d in devices:
        total = sum(d[k] for k in PARTS)
        if total != d["peak_bytes"]:
            errors.append(f"{d['name']}: parts sum to {total}, peak is {d['peak_bytes']}")
    args = argv[2:]
    while args:
        flag = args.pop(0)
        if flag == "--same-as":
            (one,) = load(args.pop(0))
            for d in devices:
                for key in ["peak_bytes"] + PARTS:
                    if d[key] != one[key]:
                        errors.append(f"{d['name']}: {key} {d[key]} != {one[key]} of one device")
        elif flag == "--max-activations-of":
            base = load(args.pop(0))
            fraction = float(args.pop(0))
            for d, b in zip(devices, base):
                if d["activations_bytes"] > fraction * b["activations_bytes"]:
                    errors.append(f"{d['name']}: activations {d['activations_bytes']} > "
                                  f"{fraction} * {b['activations_bytes']}")
        else:
            errors.append(f"unknown flag {flag}")
    print("\n".join(errors) if errors else "memory ok")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
