"""The dpc Python module against the command line, on NumPy data alone.

usage: check_module.py MODEL.onnx WORK_DIR

Compiles the MLP, trains it one epoch on Fashion-MNIST (read with NumPy from
Debian's files), and checks: the test accuracy is above a floor; epochs
reach the callbacks as they end; state_dict has the names, shapes and
values of `dpc export -o FILE.npz` on the same checkpoint; evaluate and
predict agree with `dpc eval --json` and `dpc predict`; the exported ONNX
file is the one `dpc export` writes; load_state_dict and a saved checkpoint
resumed (dpc.load) give back the same model, and training on from it is
training straight through. Prints each error message it provokes, then
"module ok".
"""
import gzip
import json
import os
import subprocess
import sys

import numpy as np

import dpc

model, work = sys.argv[1], sys.argv[2]
dpc_binary = os.environ["DPC_BINARY"]
directory = "/usr/share/datasets/fashion-mnist/"


def fashion_mnist(kind):
    images = gzip.open(directory + kind + "-images-idx3-ubyte.gz").read()
    labels = gzip.open(directory + kind + "-labels-idx1-ubyte.gz").read()
    return (np.frombuffer(images, np.uint8, offset=16).reshape(-1, 28, 28),
            np.frombuffer(labels, np.uint8, offset=8).astype(np.int64))


def cli(*args):
    return subprocess.run([dpc_binary] + list(args), check=True,
                          capture_output=True, text=True).stdout


x, y = fashion_mnist("train")
x_test, y_test = fashion_mnist("t10k")

# One epoch of the whole training set, the metrics as each epoch ends.
plan = dpc.compile(model, x[:64], momentum=0.9,
                   output=os.path.join(work, "mlp.plan"))
seen = []
history = plan.train((x, y), epochs=1, test=(x_test, y_test), lr=0.05,
                     seed=3, callbacks=[seen.append])
assert seen == history and len(history) == 1, (seen, history)
accuracy = history[0]["test_acc"]
assert accuracy > 0.8, "test accuracy %.4f, expected > 0.8" % accuracy
print("test accuracy above 0.8")

# The CLI on the same checkpoint.
checkpoint = os.path.join(work, "ckpt")
plan.save(checkpoint)
exported = os.path.join(work, "cli.npz")
cli("export", plan.path, "--checkpoint", checkpoint, "-o", exported)
state = plan.state_dict()
with np.load(exported) as npz:
    assert list(state) == list(npz.keys()), (list(state), list(npz.keys()))
    for name, value in state.items():
        assert value.shape == npz[name].shape and value.dtype == npz[name].dtype
        assert np.array_equal(value, npz[name]), name
print("state_dict:", ", ".join("%s %s" % (n, list(v.shape))
                               for n, v in state.items()))

evaluated = plan.evaluate((x_test, y_test))
line = json.loads(cli("eval", plan.path, "--checkpoint", checkpoint,
                      "--data", "fashion-mnist", "--json"))
assert evaluated["correct"] == line["correct"], (evaluated, line)
assert evaluated["accuracy"] == accuracy, (evaluated["accuracy"], accuracy)
assert abs(evaluated["loss"] - line["loss"]) <= 1e-6 * line["loss"]
assert evaluated["confusion_matrix"].tolist() == line["confusion_matrix"]
logits = plan.predict(x_test[:500])
cli("predict", plan.path, "--checkpoint", checkpoint, "--data",
    "fashion-mnist", "--subset", "500", "-o", os.path.join(work, "cli.npy"))
assert np.array_equal(logits, np.load(os.path.join(work, "cli.npy")))
print("evaluate and predict agree with dpc eval and dpc predict")

plan.export(os.path.join(work, "module.onnx"))
cli("export", plan.path, "--checkpoint", checkpoint, "-o",
    os.path.join(work, "cli.onnx"))
with open(os.path.join(work, "module.onnx"), "rb") as a, \
        open(os.path.join(work, "cli.onnx"), "rb") as b:
    assert a.read() == b.read(), "the ONNX exports differ"
print("export writes dpc export's ONNX file")

# A fresh plan given the trained weights predicts as the trained one.
fresh = dpc.load(plan.path)
fresh.load_state_dict(state)
assert np.array_equal(fresh.predict(x_test[:500]), logits)
print("load_state_dict restores the model")

# Resumed from the saved checkpoint, a second epoch is the second epoch of
# a run straight through (bit for bit: the same metrics).
small = (x[:3000], y[:3000]), (x_test[:500], y_test[:500])
straight = dpc.load(plan.path)
two = straight.train(small[0], epochs=2, test=small[1], seed=5)
halves = dpc.load(plan.path, checkpoint=os.path.join(work, "halves"))
first = halves.train(small[0], epochs=1, test=small[1], seed=5)
resumed = dpc.load(plan.path, checkpoint=os.path.join(work, "halves"))
second = resumed.train(small[0], epochs=1, test=small[1])
drop = ("epoch_seconds", "images_per_second")
same = [{k: v for k, v in m.items() if k not in drop} for m in two]
assert same == [{k: v for k, v in m.items() if k not in drop}
                for m in first + second], (two, first, second)
assert all(np.array_equal(straight.state_dict()[n], resumed.state_dict()[n])
           for n in state)
print("resumed training is training straight through")

# The generator form trains the same model, an epoch per step.
stepped = dpc.load(plan.path)
metrics = []
for m in stepped.epochs(small[0], epochs=2, test=small[1], seed=5):
    metrics.append(m)
    assert stepped._epochs_done() == len(metrics)  # nothing trained ahead
assert [{k: v for k, v in m.items() if k not in drop} for m in metrics] == \
    same, (metrics, two)
print("epochs() yields the epochs of train()")

# A callback that returns False stops training after that epoch.
stopped = dpc.load(plan.path).train(small[0], epochs=3,
                                    callbacks=[lambda m: m["epoch"] < 2])
assert [m["epoch"] for m in stopped] == [1, 2], stopped
print("a callback returning False stops training")

# Errors: dpc's one line, as dpc.Error.
def error(call):
    try:
        call()
    except dpc.Error as e:
        assert "\n" not in str(e), str(e)
        print("error:", e)
        return
    raise AssertionError("no error")


error(lambda: dpc.compile(os.path.join(work, "missing.onnx"), x[:64]))
error(lambda: dpc.load(os.path.join(work, "missing.plan")))
error(lambda: plan.train((x[:100, :14], y[:100]), epochs=1))
error(lambda: plan.train((x[:100], y[:100]), epochs=1, lr=-1))
error(lambda: plan.evaluate((x[:100], y[:100] + 10)))
error(lambda: plan.predict(y[:100]))
error(lambda: fresh.load_state_dict({"fc1.weight": state["fc1.bias"]}))
error(lambda: fresh.load_state_dict({"fc9.weight": state["fc1.bias"]},
                                    strict=False))
error(lambda: fresh.load_state_dict({"fc1.weight": state["fc1.weight"]}))
# Arguments of the wrong kind or range: dpc.Error, as the flags would be.
error(lambda: plan.evaluate((x[:100], y[:100]), subset=-5))
error(lambda: plan.predict(x[:100], subset="5"))
error(lambda: plan.train((x[:100], y[:100]), epochs="2"))
error(lambda: dpc.load(None))
error(lambda: fresh.load_state_dict([("fc1.bias", state["fc1.bias"])]))
error(lambda: dpc.compile(model, 3))
# Non-finite weights are refused, naming the tensor and the index.
poisoned = dict(state)
poisoned["fc2.bias"] = state["fc2.bias"].copy()
poisoned["fc2.bias"][4] = np.nan
error(lambda: fresh.load_state_dict(poisoned))
print("module ok")
