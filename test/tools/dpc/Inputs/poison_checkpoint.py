"""Sets element INDEX of tensor NAME in a dpc checkpoint to a non-finite
VALUE (nan, inf) and reseals the file with a valid checksum: what a crafted
file, or one an older dpc wrote, can hold.

    poison_checkpoint.py CKPT_FILE NAME INDEX [VALUE]
"""
import struct
import sys


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


path, name, index = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
value = float(sys.argv[4]) if len(sys.argv) > 4 else float("nan")
data = bytearray(open(path, "rb").read())
# A saved tensor: the name (u64 length, bytes), dtype i32, rank u64, dims
# i64 each, then its bytes (u64 length, bytes).
at = data.index(struct.pack("<Q", len(name)) + name) + 8 + len(name)
dtype, rank = struct.unpack_from("<iQ", data, at)
assert dtype == 0, "not an f32 tensor"
payload = at + 4 + 8 + 8 * rank + 8
struct.pack_into("<f", data, payload + 4 * index, value)
body = bytes(data[:-8])
open(path, "wb").write(body + struct.pack("<Q", fnv1a(body)))
