"""Trains Inputs/two_inputs.onnx from Python, its inputs as a dict of
arrays by name, and checks evaluate and predict on the same dicts.

usage: check_two_inputs.py MODEL.onnx DATA_DIR (make_two_input_data.py's)
"""
import os
import sys

import numpy as np

import dpc

model, directory = sys.argv[1], sys.argv[2]


def split(name):
    x = {"image": np.load(os.path.join(directory, name + "_images.npy")),
         "tokens": np.load(os.path.join(directory, name + "_tokens.npy"))}
    return x, np.load(os.path.join(directory, name + "_labels.npy"))


train, test = split("train"), split("test")
plan = dpc.compile(model, batch=32)
history = plan.train(train, epochs=5, test=test, lr=0.2, seed=1)
accuracy = history[-1]["test_acc"]
assert accuracy > 0.9, history
print("test accuracy above 0.9")
assert plan.evaluate(test)["accuracy"] == accuracy
logits = plan.predict(test[0])
assert (logits.argmax(1) == test[1]).mean() == accuracy
try:
    plan.evaluate(({"tokens": test[0]["tokens"], "image": train[0]["image"]},
                   test[1]))
    raise AssertionError("no error")
except dpc.Error as error:
    print("error:", error)
print("two inputs ok")
