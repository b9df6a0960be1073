#!/usr/bin/env python3
"""Sequence data sets for sequences.test: OUT/x.npy (float32 [384, 3, 4],
uniform in [-1, 1)) and OUT/y.npy, a sample's class 0, 1 or 2 by whether
the sum of its feature 0 over the steps is below -0.5, within +-0.5 or
above (learnable by test/reference/vjp/lstm.onnx, a bidirectional LSTM);
OUT/wrong.npy has 5 features per step."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(2)
x = rng.uniform(-1, 1, (384, 3, 4)).astype(np.float32)
total = x[:, :, 0].sum(axis=1)
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y.npy"),
        np.digitize(total, [-0.5, 0.5]).astype(np.int64))
np.save(os.path.join(out, "wrong.npy"),
        rng.uniform(-1, 1, (384, 3, 5)).astype(np.float32))
