"""Checks a dpc calibrate cost file: one positive throughput per device."""
import json
import sys

path, devices = sys.argv[1], sys.argv[2].split(",")
with open(path) as f:
    costs = json.load(f)
throughput = costs["throughput"]
assert sorted(throughput) == sorted(devices), throughput
assert all(isinstance(v, (int, float)) and v > 0 for v in throughput.values()), throughput
assert costs["unit"] == "images/s", costs
print("costs ok:", ", ".join(f"{d} {throughput[d]}" for d in devices))
