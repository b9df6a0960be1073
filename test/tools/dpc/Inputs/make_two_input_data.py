"""Writes a data set for two_inputs.onnx into DIR: token ids (int64 [N, 6],
below 20) and images (float32 [N, 1, 8, 8] in [0, 1]) whose labels need
both: whether the tokens hold a 1 (+1) and whether the image's top half is
brighter than its bottom half (+2). Train and test splits, and the same
data as one file per input of another order, for the error tests.

usage: make_two_input_data.py DIR
"""
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
for split, count in (("train", 2048), ("test", 512)):
    tokens = rng.integers(2, 20, size=(count, 6))
    has_one = rng.random(count) < 0.5
    tokens[has_one, rng.integers(0, 6, size=has_one.sum())] = 1
    images = rng.random((count, 1, 8, 8), dtype=np.float32)
    top = rng.random(count) < 0.5
    images[top, :, :4] += 0.5
    images[~top, :, 4:] += 0.5
    labels = has_one.astype(np.int64) + 2 * top
    np.save(f"{out}/{split}_tokens.npy", tokens)
    np.save(f"{out}/{split}_images.npy", images / 1.5)
    np.save(f"{out}/{split}_labels.npy", labels)
