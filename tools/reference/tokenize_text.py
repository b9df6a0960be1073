#!/usr/bin/env python3
"""Character-level language-model samples from a plain text file.

Each non-blank line of TEXT (leading and trailing blanks stripped) becomes
one or more samples of SEQ tokens: a chunk of SEQ + 1 characters, the
inputs its first SEQ and the targets its last SEQ (the next character at
every position); consecutive chunks of a line overlap by one character, so
every character but a line's first is a target once. A short chunk is
padded: input token 0, target IGNORE (PyTorch's ignore_index -100), which
dpc's `--ignore-index -100` leaves out of the loss and the metrics.

Tokens: 0 padding, 1..95 the printable ASCII characters ' '..'~' (byte -
31), 96 anything else; the vocabulary is 97 ids (a model may take more).

Writes OUT/tokens.npy (int64 [N, SEQ]) and OUT/targets.npy (int32 [N, SEQ]),
in the file's order. NumPy only: Debian's python3 runs it, and the tests
run it on /usr/share/common-licenses/GPL-3 (Debian's base-files).
"""
import argparse
import os

import numpy as np

PAD, OTHER, VOCAB = 0, 96, 97
IGNORE = -100


def encode(line):
    codes = np.frombuffer(line, dtype=np.uint8).astype(np.int64)
    printable = (codes >= 32) & (codes <= 126)
    return np.where(printable, codes - 31, OTHER)


def samples(text, seq):
    """Inputs and targets, [N, seq] each."""
    inputs, targets = [], []
    for line in text.split(b"\n"):
        ids = encode(line.strip())
        for start in range(0, len(ids) - 1, seq):
            chunk = ids[start:start + seq + 1]
            x = np.full(seq, PAD, dtype=np.int64)
            y = np.full(seq, IGNORE, dtype=np.int32)
            x[:len(chunk) - 1] = chunk[:-1]
            y[:len(chunk) - 1] = chunk[1:]
            inputs.append(x)
            targets.append(y)
    return np.stack(inputs), np.stack(targets)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text")
    parser.add_argument("out")
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--limit", type=int,
                        help="keep the first N samples")
    args = parser.parse_args()
    with open(args.text, "rb") as f:
        x, y = samples(f.read(), args.seq)
    if args.limit:
        x, y = x[:args.limit], y[:args.limit]
    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "tokens.npy"), x)
    np.save(os.path.join(args.out, "targets.npy"), y)
    print(f"{args.text}: {len(x)} samples of {args.seq} tokens, "
          f"{int((y != IGNORE).sum())} targets")


if __name__ == "__main__":
    main()
