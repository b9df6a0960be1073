#!/usr/bin/env python3
"""Differential fuzzing of dpc's model checks against ONNX's own checker.

Mutates seed models node by node (inputs dropped, added or emptied,
outputs added, attributes dropped, added, retyped or doubled, operators
swapped, initializers doubled), from a fixed seed, and hands each mutant
to `dpc compile --emit=nn` and to `onnx.checker.check_model`. A mutant
dpc imports although the checker refuses it is a finding: dpc would train
a model that is not one. (dpc refusing what the checker accepts is
normal: dpc refuses what it does not support.)

usage: compare_checker.py DPC RUNS SEED MODEL.onnx...
Prints one line per finding and a summary; exits 1 if any. Needs onnx
1.16 or newer (the schemas of opsets up to 21).
"""
import copy
import os
import random
import subprocess
import sys
import tempfile

import onnx
from onnx import AttributeProto, helper

OPS = ["Add", "Relu", "Gemm", "Conv", "MatMul", "Softmax", "Reshape",
       "Transpose", "Concat", "Gather", "BatchNormalization", "MaxPool",
       "Flatten", "Dropout", "Cast", "ReduceMean", "Sigmoid", "Mul"]


def mutate(model, rng):
    """One random fault in a copy of `model`; returns (mutant, what)."""
    m = copy.deepcopy(model)
    graph = m.graph
    if rng.random() < 0.08 and len(graph.initializer):
        graph.initializer.append(copy.deepcopy(
            rng.choice(list(graph.initializer))))
        return m, "initializer doubled"
    nodes = [n for n in graph.node if n.op_type != "Constant"] or \
        list(graph.node)
    node = rng.choice(nodes)
    names = [i.name for i in graph.input] + \
        [i.name for i in graph.initializer] + \
        [o for n in graph.node for o in n.output]
    kind = rng.randrange(9)
    where = "node %s (%s): " % (node.name, node.op_type)
    if kind == 0 and len(node.input):
        del node.input[rng.randrange(len(node.input))]
        return m, where + "input dropped"
    if kind == 1:
        node.input.append(rng.choice(names))
        return m, where + "input added"
    if kind == 2 and len(node.input):
        node.input[rng.randrange(len(node.input))] = ""
        return m, where + "input emptied"
    if kind == 3:
        node.output.append(node.output[0] + "_extra%d" % rng.randrange(99))
        return m, where + "output added"
    if kind == 4 and len(node.attribute):
        del node.attribute[rng.randrange(len(node.attribute))]
        return m, where + "attribute dropped"
    if kind == 5:
        name = rng.choice(["alpha", "axis", "perm", "mode", "zzz",
                           "training_mode", "keepdims", "group"])
        node.attribute.append(helper.make_attribute(name, rng.choice(
            [1, 0.5, "x", [1, 2]])))
        return m, where + "attribute %s added" % name
    if kind == 6 and len(node.attribute):
        attribute = rng.choice(list(node.attribute))
        attribute.type = rng.choice([AttributeProto.FLOAT, AttributeProto.INT,
                                     AttributeProto.INTS,
                                     AttributeProto.STRING])
        return m, where + "attribute %s retyped" % attribute.name
    if kind == 7 and len(node.attribute):
        node.attribute.append(copy.deepcopy(rng.choice(list(node.attribute))))
        return m, where + "attribute doubled"
    node.op_type = rng.choice(OPS)
    return m, where + "operator now " + node.op_type


def checker_accepts(model):
    try:
        onnx.checker.check_model(model, full_check=False)
        return True, ""
    except Exception as error:  # the checker's own error types vary
        return False, str(error).splitlines()[0][:160]


def dpc_accepts(dpc, path):
    done = subprocess.run([dpc, "compile", path, "--emit=nn"],
                          capture_output=True, text=True, timeout=120)
    return done.returncode == 0, (done.stderr.strip().splitlines() or [""])[0]


def main():
    dpc, runs, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seeds = [(os.path.basename(p), onnx.load(p)) for p in sys.argv[4:]]
    rng = random.Random(seed)
    findings = refused_both = accepted_both = dpc_only_refused = 0
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "mutant.onnx")
        for run in range(runs):
            name, seed_model = seeds[run % len(seeds)]
            mutant, what = mutate(seed_model, rng)
            with open(path, "wb") as f:
                f.write(mutant.SerializeToString())
            reference, why = checker_accepts(mutant)
            ours, line = dpc_accepts(dpc, path)
            if ours and not reference:
                findings += 1
                print("finding: %s, %s: dpc imports it; the checker says: %s"
                      % (name, what, why))
            elif ours:
                accepted_both += 1
            elif reference:
                dpc_only_refused += 1
            else:
                refused_both += 1
    print("%d mutants: %d refused by both, %d accepted by both, %d refused "
          "by dpc alone, %d accepted by dpc alone" % (
              runs, refused_both, accepted_both, dpc_only_refused, findings))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
