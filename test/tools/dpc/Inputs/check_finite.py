"""Checks that every F32 tensor of a .safetensors file (dpc export) is
finite; prints "N tensors, all finite" or the first bad one. Plain Python:
no NumPy needed."""
import json
import math
import struct
import sys


def main():
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    (size,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    for name, info in sorted(tensors.items()):
        if info["dtype"] != "F32":
            continue
        begin, end = info["data_offsets"]
        values = struct.unpack_from(f"<{(end - begin) // 4}f", body, begin)
        for i, v in enumerate(values):
            if not math.isfinite(v):
                print(f"{name} holds {v} at index {i}")
                return
    print(f"{len(tensors)} tensors, all finite")


if __name__ == "__main__":
    main()
