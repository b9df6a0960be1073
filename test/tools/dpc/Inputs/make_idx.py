#!/usr/bin/env python3
"""Writes a small gzipped IDX image/label pair: make_idx.py OUT_PREFIX N H W"""
import gzip
import struct
import sys

prefix, n, h, w = sys.argv[1], *map(int, sys.argv[2:5])
with gzip.open(prefix + "-images.gz", "wb") as f:
    f.write(struct.pack(">IIII", 0x803, n, h, w) + bytes(n * h * w))
with gzip.open(prefix + "-labels.gz", "wb") as f:
    f.write(struct.pack(">II", 0x801, n) + bytes(i % 10 for i in range(n)))
