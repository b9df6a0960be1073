"""dpc's counter-based random draws in numpy, for PyTorch references.

dpc draws dropout masks (and RReLU's slopes) itself: for site `site` (the
k-th random layer of the model) in optimizer step `step`, draw d of global
row r is word d % 4 of Philox4x32-10({d // 4, r, step, site}, seed)
(runtime/kernels/KernelMath.h). A reference that uses the same draws
compares a step exactly whatever the random stream.
"""
import math

import numpy as np


def philox4x32(counter, key0, key1):
    """Philox4x32-10 on uint64 numpy arrays of 32-bit words."""
    mask = np.uint64(0xFFFFFFFF)
    c = [np.asarray(w, dtype=np.uint64) for w in counter]
    k0, k1 = np.uint64(key0), np.uint64(key1)
    for r in range(10):
        if r:
            k0 = (k0 + np.uint64(0x9E3779B9)) & mask
            k1 = (k1 + np.uint64(0xBB67AE85)) & mask
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & mask, p1 & mask,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & mask, p0 & mask]
    return c


def words(rows, draws, site, seed=0, step=1):
    """[rows, draws] of the draws' 32-bit words (rows 0.. of the batch)."""
    r, d = np.meshgrid(np.arange(rows), np.arange(draws), indexing="ij")
    out = philox4x32([d // 4, r, np.full_like(r, step),
                      np.full_like(r, site)], seed & 0xFFFFFFFF, seed >> 32)
    return np.choose(d % 4, out)


def keep(rows, draws, ratio, site, **kwargs):
    """[rows, draws] bool: which draws a dropout of `ratio` keeps."""
    return (words(rows, draws, site, **kwargs) >> np.uint64(8)) >= \
        math.ceil(ratio * 16777216.0)


def uniform(rows, draws, site, **kwargs):
    """[rows, draws] float64 in [0, 1): the top 24 bits over 2^24."""
    return (words(rows, draws, site, **kwargs) >> np.uint64(8)).astype(
        np.float64) / 16777216.0
