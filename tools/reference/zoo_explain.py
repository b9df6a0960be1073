#!/usr/bin/env python3
"""Explains dpc's distance from float64 on a zoo model by its kinks.

Fits dpc's gradient minus PyTorch's float64 gradient (all parameters, whole
tensors) by the first-order effects of taking the other side at the units
that zoo_allowance.py finds ambiguous, one coefficient per unit. A float32
step that only rounds and picks sides gives coefficients near 0 (its side)
or 1 (the other side) and a residual at rounding level; a bug does not.
Prints the distance, the coefficients, the residual and the units taken
the other way.

Run from PyTorch 2's virtual environment, never CI:
  V/bin/python tools/reference/zoo_explain.py BIN MODEL [--export legacy]
E.g. regnet_y_400mf: 25 ambiguous units, dpc 2.3e-2 from float64, three
units with coefficients 1.19, 1.00, 1.00, the others within 0.02 of 0, and
a residual 0.8% of the distance; mobilenet_v2: 25 units, 1.7e-2, two units
at 1.02 and 1.00 (one of them features.18's channel 215 of sample 0, which
PyTorch's one-thread step also flips), a residual 0.9% of the distance
(1.6e-4 of the gradients).
"""
import argparse
import copy
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_zoo  # noqa: E402
import zoo_allowance  # noqa: E402


def dpc_gradients(bin_dir, directory, export):
    work = tempfile.mkdtemp(prefix="zoo-explain-")
    try:
        with open(os.path.join(work, "stripped.bin"), "wb") as f:
            f.truncate(32 << 20)
        model = os.path.join(work, "model.onnx")
        shutil.copy(os.path.join(directory, export + ".onnx"), model)
        plan = os.path.join(work, "step.plan")
        subprocess.run([os.path.join(bin_dir, "dpc"), "compile", model,
                        "--batch", str(make_zoo.BATCH), "-o", plan],
                       check=True)
        dump = os.path.join(work, "dump")
        subprocess.run([os.path.join(bin_dir, "dpc-check-reference"), plan,
                        directory, "--init", f"hash:{make_zoo.SEED}",
                        "--dump", dump], capture_output=True)
        grads = {}
        for name in os.listdir(os.path.join(dump, "grad")):
            grads[name[:-4]] = torch.from_numpy(
                np.load(os.path.join(dump, "grad", name))).double()
        return grads
    finally:
        shutil.rmtree(work)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bin")
    parser.add_argument("model")
    parser.add_argument("--export", default="legacy")
    parser.add_argument("--zoo", default=os.path.join(
        HERE, "..", "..", "test", "reference", "zoo"))
    args = parser.parse_args()
    torch.set_num_threads(2)
    model = make_zoo.build(args.model)
    x, y = make_zoo.batch(args.model, make_zoo.ZOO[args.model][1])
    kinks32 = zoo_allowance.Kinks()
    with torch.no_grad(), kinks32:
        copy.deepcopy(model)(x)
    m = copy.deepcopy(model).double()
    kinks64 = zoo_allowance.Kinks(record_grads=True)
    with kinks64:
        loss = nn.functional.cross_entropy(
            m(x.double() if x.is_floating_point() else x), y)
    params = dict(m.named_parameters())
    loss.backward(retain_graph=True)
    kinks64.record_grads = False
    units = zoo_allowance.ambiguous_units(kinks32, kinks64)
    dpc = dpc_gradients(args.bin, os.path.join(args.zoo, args.model),
                        args.export)
    diff = torch.cat([(dpc[n].reshape(p.shape) - p.grad).ravel()
                      for n, p in params.items()])
    norm = torch.cat([p.grad.ravel() for p in params.values()]).norm()
    print(f"{len(units)} ambiguous units; dpc's gradients "
          f"{(diff.norm() / norm).item():.2e} from float64 (relative L2)")
    if not units:
        return
    effects = []
    for call, index, change in units:
        node = kinks64.nodes[call]
        cotangent = torch.zeros_like(node)
        cotangent.view(-1)[index] = change
        grads = torch.autograd.grad(node, list(params.values()), cotangent,
                                    retain_graph=True, allow_unused=True)
        effects.append(torch.cat([
            (g if g is not None else torch.zeros_like(p)).ravel()
            for g, p in zip(grads, params.values())]))
    effects = torch.stack(effects, 1)
    coefficients = torch.linalg.lstsq(effects, diff[:, None]).solution.ravel()
    print("coefficients:", " ".join(f"{c:.3f}" for c in coefficients))
    other_side = (coefficients > 0.5).double()
    residual = diff - effects @ other_side
    print(f"residual after the units taken the other way: "
          f"{(residual.norm() / diff.norm()).item():.2e} of the distance, "
          f"{(residual.norm() / norm).item():.2e} of the gradients")
    for (call, index, _), c in zip(units, coefficients.tolist()):
        if c > 0.5:
            print(f"  activation call {call}, element {index}: float64 "
                  f"input {kinks64.inputs[call].reshape(-1)[index]:.3e}, "
                  f"PyTorch float32 "
                  f"{kinks32.inputs[call].reshape(-1)[index]:.3e}")


if __name__ == "__main__":
    main()
