#!/usr/bin/env python3
"""Writes a small RGB image classification task for dpc's data tests.

Usage: make_images.py OUT_DIR

OUT_DIR/model.onnx: Conv(3->4, 3x3, pad 1), Relu, Flatten, Gemm to 10
classes, on [N, 3, 12, 10] images (H != W, so a swapped height and width
cannot pass); cube.onnx: Flatten, Gemm on [N, 3, 3, 3] (a shape that reads
as NCHW and NHWC alike).

The images (600 train, 200 test; each class a colour, plus noise), as
  {train,test}_nhwc_u8.npy   uint8 [N, 12, 10, 3]
  {train,test}_nchw_f32.npy  float32 [N, 3, 12, 10]: the uint8 / 255
  {train,test}_norm_f32.npy  float32: (x - MEAN) / STD per channel, in f32
  train_head_f32.npy, train_tail_f32.npy: the first 450 and last 150
and the labels {train,test,train_head,train_tail}_y.npy (int64). The f32
arithmetic is torchvision's ToTensor and Normalize: dpc's must match it
bit for bit. MEAN and STD are printed as --normalize's value.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

MEAN = (0.5, 0.25, 0.125)
STD = (0.25, 0.5, 0.2)
C, H, W, CLASSES = 3, 12, 10, 10


def model(name, shape, conv):
    rng = np.random.default_rng(1)
    nodes, inits, x = [], [], "x"
    if conv:
        inits += [numpy_helper.from_array(
            rng.normal(0, 0.3, (4, C, 3, 3)).astype(np.float32), "conv.weight"),
            numpy_helper.from_array(np.zeros(4, np.float32), "conv.bias")]
        nodes += [helper.make_node("Conv", [x, "conv.weight", "conv.bias"],
                                   ["c"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["c"], ["r"])]
        x, features = "r", 4 * H * W
    else:
        features = int(np.prod(shape))
    inits += [numpy_helper.from_array(
        rng.normal(0, 0.05, (CLASSES, features)).astype(np.float32),
        "fc.weight"),
        numpy_helper.from_array(np.zeros(CLASSES, np.float32), "fc.bias")]
    nodes += [helper.make_node("Flatten", [x], ["f"]),
              helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"],
                               ["logits"], transB=1)]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["batch", *shape])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["batch", CLASSES])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def images(rng, n):
    labels = rng.integers(0, CLASSES, n)
    colours = np.random.default_rng(2).integers(40, 216, (CLASSES, C))
    x = colours[labels][:, None, None, :] + rng.normal(0, 40, (n, H, W, C))
    return np.clip(x, 0, 255).astype(np.uint8), labels.astype(np.int64)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    save(model("rgb", (C, H, W), True), os.path.join(out, "model.onnx"))
    save(model("cube", (3, 3, 3), False), os.path.join(out, "cube.onnx"))
    rng = np.random.default_rng(0)
    mean = np.array(MEAN, np.float32)[:, None, None]
    std = np.array(STD, np.float32)[:, None, None]
    for split, n in (("train", 600), ("test", 200)):
        u8, y = images(rng, n)
        f32 = u8.transpose(0, 3, 1, 2).astype(np.float32) / np.float32(255)
        np.save(os.path.join(out, split + "_nhwc_u8.npy"), u8)
        np.save(os.path.join(out, split + "_nchw_f32.npy"), f32)
        np.save(os.path.join(out, split + "_norm_f32.npy"), (f32 - mean) / std)
        np.save(os.path.join(out, split + "_y.npy"), y)
        if split == "train":
            for part, rows in (("head", slice(0, 450)), ("tail", slice(450, None))):
                np.save(os.path.join(out, f"train_{part}_f32.npy"), f32[rows])
                np.save(os.path.join(out, f"train_{part}_y.npy"), y[rows])
    np.save(os.path.join(out, "cube.npy"), np.zeros((8, 3, 3, 3), np.float32))
    np.save(os.path.join(out, "cube_y.npy"), np.zeros(8, np.int64))
    print(",".join(map(str, MEAN)) + ":" + ",".join(map(str, STD)))


if __name__ == "__main__":
    main()
