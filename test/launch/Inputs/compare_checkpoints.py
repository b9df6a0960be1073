"""Compares the training state of two dpc checkpoints (Checkpoint.cpp's
format): counters, per-epoch loss and accuracies, and every tensor, bit for
bit or within --atol. Prints one line per difference and exits 1 if any;
prints "same: N tensors, E epochs" otherwise. Timings are not compared."""
import argparse
import math
import os
import struct
import sys


def read(path):
    if os.path.isdir(path):
        path = os.path.join(path, "checkpoint.dpcckpt")
    data = open(path, "rb").read()
    if data[:7] != b"DPCCKPT" or data[7:8] not in b"1234":
        sys.exit(f"{path}: not a dpc checkpoint (docs/checkpoint-format.md)")
    at = 8

    def take(fmt):
        nonlocal at
        values = struct.unpack_from("<" + fmt, data, at)
        at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    state = {"counters": take("qqqQ"), "partial": (0, 0, 0.0, 0.0)}
    version = int(data[7:8])
    if version >= 2:
        # The partial epoch, without its seconds.
        state["partial"] = take("qqdd")
        take("d")
    history = []
    for _ in range(take("Q")):
        epoch = take("q")
        loss, train_acc, test_acc, _seconds, _ips, lr = take("6d")
        # Version 3 adds the validation loss and accuracy (NaN: none).
        val = take("2d") if version >= 3 else ()
        history.append(tuple(None if math.isnan(v) else v for v in
                             (epoch, loss, train_acc, test_acc, lr, *val)))
    state["history"] = history
    tensors = []
    for _ in range(take("Q")):
        length = take("Q")
        name = data[at:at + length].decode()
        at += length
        dtype = take("i")
        dims = [take("q") for _ in range(take("Q"))]
        size = take("Q")
        tensors.append((name, dtype, dims, data[at:at + size]))
        at += size
    state["tensors"] = tensors
    # Version 4's data form (--layout, --normalize) follows: not compared,
    # as runs on data normalized beforehand are compared with --normalize.
    return state


def same_history(a, b, rtol):
    def close(x, y):
        if x is None or y is None:
            return x is y
        return abs(x - y) <= rtol * max(abs(x), abs(y))
    return len(a) == len(b) and all(
        len(ea) == len(eb) and all(close(x, y) for x, y in zip(ea, eb))
        for ea, eb in zip(a, b))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--atol", type=float, default=0.0)
    parser.add_argument("--history-rtol", type=float, default=0.0,
                        help="the per-epoch numbers within this relative "
                        "tolerance (default: equal)")
    args = parser.parse_args()
    a, b = read(args.a), read(args.b)
    problems = []
    if a["counters"] != b["counters"]:
        problems.append(f"counters differ: {a['counters']} vs {b['counters']}")
    if a["partial"] != b["partial"]:
        problems.append(f"partial epochs differ: {a['partial']} vs "
                        f"{b['partial']}")
    if not same_history(a["history"], b["history"], args.history_rtol):
        problems.append(f"history differs: {a['history']} vs {b['history']}")
    if len(a["tensors"]) != len(b["tensors"]):
        problems.append("tensor counts differ")
    worst = 0.0
    for ta, tb in zip(a["tensors"], b["tensors"]):
        if ta[:3] != tb[:3]:
            problems.append(f"{ta[0]}: name, dtype or dims differ")
            continue
        if ta[3] == tb[3]:
            continue
        if ta[1] != 0 or args.atol == 0.0:  # f32 only is compared by value
            problems.append(f"{ta[0]}: bytes differ")
            continue
        n = len(ta[3]) // 4
        xs = struct.unpack(f"<{n}f", ta[3])
        ys = struct.unpack(f"<{n}f", tb[3])
        diff = max(abs(x - y) for x, y in zip(xs, ys))
        worst = max(worst, diff)
        if diff > args.atol:
            problems.append(f"{ta[0]}: differs by {diff:g} > {args.atol:g}")
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    exact = "bit for bit" if worst == 0 else f"max difference {worst:g}"
    print(f"same: {len(a['tensors'])} tensors, {len(a['history'])} epochs, "
          f"{exact}")


if __name__ == "__main__":
    main()
