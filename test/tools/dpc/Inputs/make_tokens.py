#!/usr/bin/env python3
"""Token-id data sets for tokens.test: OUT/tokens.npy (int64 [512, 6], ids
in [0, 50)) and OUT/labels.npy, where a sample's class is its first id mod
10 (learnable by test/reference/embedding's model); OUT/bad_id.npy has one
id (entry 7) past the model's 50-row table, OUT/float_ids.npy float ids."""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(1)
tokens = rng.integers(0, 50, (512, 6)).astype(np.int64)
np.save(os.path.join(out, "tokens.npy"), tokens)
np.save(os.path.join(out, "labels.npy"), (tokens[:, 0] % 10).astype(np.int64))
bad = tokens.copy()
bad.flat[7] = 60
np.save(os.path.join(out, "bad_id.npy"), bad)
np.save(os.path.join(out, "float_ids.npy"), tokens.astype(np.float32))
