"""dpc.Plan.evaluate against `dpc eval --json` on the same plan, checkpoint
and data: the same keys, the same counts, the same numbers (to 1e-8
relative: the JSON's 9 digits). Prints "evaluate agrees with dpc eval: TASK" and exits 1 on a
difference.

  check_eval.py PLAN CHECKPOINT DATA JSON
"""
import json
import math
import sys

import dpc

plan, checkpoint, data, cli_json = sys.argv[1:]
expected = json.load(open(cli_json))
got = dpc.Plan(plan, checkpoint=checkpoint).evaluate(data)
if "confusion_matrix" in got:
    got["confusion_matrix"] = got["confusion_matrix"].tolist()
assert set(got) == set(expected), (sorted(got), sorted(expected))


def same(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is b
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, str):
        return a == b
    return abs(a - b) <= 1e-8 * max(1.0, abs(b))


for key in expected:
    assert same(got[key], expected[key]), (key, got[key], expected[key])
print("evaluate agrees with dpc eval:", got["task"])
