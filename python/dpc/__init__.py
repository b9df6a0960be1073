"""dpc from Python: compile a model into a data-parallel training plan, train
it, evaluate it, predict with it and export it.

    import dpc
    plan = dpc.compile("mlp.onnx", x[:64], devices=2, momentum=0.9)
    for m in plan.epochs((x, y), epochs=3, test=(x_test, y_test), lr=0.1):
        print(m["epoch"], m["train_loss"], m["test_acc"])
    plan.evaluate((x_test, y_test))["accuracy"]
    weights = plan.state_dict()          # numpy arrays by parameter name
    plan.export("trained.onnx")

A thin layer: `compile` runs the `dpc compile` binary; the rest calls the
runtime in this process (the `_dpc` extension) with the flags `dpc run`,
`dpc eval`, `dpc predict` and `dpc export` take, so options are spelled as
the flags are (`lr_schedule="cosine"` is `--lr-schedule cosine`) and every
error is dpc's one line, raised as `dpc.Error`. A plan's training state
lives in a checkpoint directory (`Plan.checkpoint`), the one `dpc run
--checkpoint` writes: the command line and Python can take turns on it.
"""

import numbers
import os
import re
import shutil
import subprocess
import sys
import tempfile
import weakref

import numpy as np

from . import _dpc
from ._dpc import Error

__all__ = ["Error", "Plan", "compile", "load"]


def _find_compiler():
    """The dpc binary: $DPC_BINARY, the one installed beside this module,
    or the build tree's."""
    candidates = [os.environ.get("DPC_BINARY"),
                  os.path.join(os.path.dirname(__file__), "bin", "dpc"),
                  os.path.join(_dpc.build_bin_dir, "dpc")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise Error("dpc: no dpc binary found (set DPC_BINARY to it)")


def _flag_value(key, value):
    if key == "normalize" and isinstance(value, (tuple, list)) and \
            len(value) == 2 and all(isinstance(v, (tuple, list)) for v in value):
        # ((means...), (stds...)) -> MEAN,...:STD,...
        return ",".join(map(str, value[0])) + ":" + ",".join(map(str, value[1]))
    if isinstance(value, (tuple, list)):
        return ",".join(map(str, value))
    return str(value)


def _flags(options):
    """Keyword options as dpc flags: lr=0.1 -> --lr 0.1, sync_bn=True ->
    --sync-bn; None and False leave a flag out."""
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        args += [flag] if value is True else [flag, _flag_value(key, value)]
    return args


class _DataFiles:
    """NumPy arrays as the .npy files dpc's loaders read, in a directory of
    their own; messages name the argument instead of the file."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="dpc-data-")
        self.names = {}

    def save(self, array, name):
        path = os.path.join(self.directory,
                            re.sub(r"[^\w.-]+", "_", name) + ".npy")
        np.save(path, np.ascontiguousarray(_to_numpy(array)))
        self.names[path] = name
        return path

    def inputs(self, x, name):
        """An array, or a dict of arrays by model input name (a model with
        several inputs), as --data's files."""
        if isinstance(x, dict):
            return ",".join("%s=%s" % (key, self.save(value, "%s[%r]" % (
                name, key))) for key, value in x.items())
        return self.save(x, name)

    def labelled(self, data, name, images_alone=False):
        """`data`, (x, y) arrays or a --data string, as a --data value; x
        may be a dict of arrays by input name."""
        if isinstance(data, (str, os.PathLike)):
            return os.fspath(data)
        if images_alone and not isinstance(data, (tuple, list)):
            return "npy:" + self.inputs(data, name)
        if not isinstance(data, (tuple, list)) or len(data) != 2:
            raise Error("dpc: %s: expected (x, y) arrays or a --data string"
                        % name)
        return "npy:%s,%s" % (self.inputs(data[0], name + "[0]"),
                              self.save(data[1], name + "[1]"))

    def rename(self, error):
        message = str(error)
        for path, name in self.names.items():
            message = message.replace(path, name)
        return Error(message)

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        shutil.rmtree(self.directory, ignore_errors=True)
        if isinstance(error, Error):
            raise self.rename(error) from None


def _whole(value, name, minimum=1):
    """`value` as an int >= `minimum`, or dpc.Error (as the flag would)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or value < minimum:
        raise Error("dpc: %s=%r: expected a whole number >= %d"
                    % (name, value, minimum))
    return int(value)


def _subset(subset):
    return -1 if subset is None else _whole(subset, "subset")


def _path(value, name):
    """`value` as a path string, or dpc.Error."""
    try:
        return os.fspath(value)
    except TypeError:
        raise Error("dpc: %s=%r: expected a path" % (name, value)) from None


def _to_numpy(value):
    if hasattr(value, "detach"):  # a torch.Tensor
        value = value.detach().cpu().numpy()
    return np.asarray(value)


class Plan:
    """A compiled plan file and its training state (a checkpoint directory:
    `checkpoint`; a temporary one unless given)."""

    def __init__(self, path, checkpoint=None, _work=None):
        self.path = _path(path, "path")
        if not os.path.exists(self.path):
            raise Error("%s: no such plan file" % self.path)
        self._work = _work
        if checkpoint is None:
            if self._work is None:
                self._work = tempfile.mkdtemp(prefix="dpc-")
            checkpoint = os.path.join(self._work, "checkpoint")
        if self._work is not None:
            self._cleanup = weakref.finalize(self, shutil.rmtree, self._work,
                                             True)
        self.checkpoint = _path(checkpoint, "checkpoint")

    def __repr__(self):
        return "dpc.Plan(%r, checkpoint=%r)" % (self.path, self.checkpoint)

    def _state(self):
        """The checkpoint directory if it holds a checkpoint, else ""."""
        has = os.path.exists(_dpc.checkpoint_path(self.checkpoint))
        return self.checkpoint if has else ""

    def _train_args(self, files, data, epochs, test, validation, options):
        """dpc run's arguments: `epochs` in all, from the checkpoint."""
        spec = files.labelled(data, "data")
        if test is not None:
            if not spec.startswith("npy:"):
                raise Error("dpc: test=: give data as (x, y) arrays too")
            spec += "," + files.labelled(test, "test")[4:]
        args = [self.path, "--data", spec, "--epochs", str(epochs),
                "--checkpoint", self.checkpoint]
        if validation is not None:
            args += ["--val-data", files.labelled(validation, "validation")]
        return args + _flags(options)

    def _epochs_done(self):
        return _dpc.checkpoint_epochs(self.checkpoint) if self._state() else 0

    def train(self, data, epochs=1, *, test=None, validation=None,
              callbacks=(), **options):
        """Trains `epochs` more epochs on `data`, (x, y) NumPy arrays (x a
        dict of arrays by input name for a model with several inputs) or a
        `--data` string ("fashion-mnist"); `test` and `validation` are
        (x, y) too. Options are `dpc run`'s flags (lr, seed, lr_schedule,
        normalize, layout, augment, val_split, checkpoint_every, ...). Each
        callback gets each epoch's metrics (a dict, as `--metrics` writes
        them) when the epoch is done and checkpointed; one that returns
        False stops the training there. Returns this call's epochs'
        metrics; `epochs()` yields them instead."""
        epochs = _whole(epochs, "epochs")
        done = self._epochs_done()
        with _DataFiles() as files:
            args = self._train_args(files, data, done + epochs, test,
                                    validation, options)
            if self._state():
                args.append("--resume")

            def on_epoch(metrics):
                return all(callback(metrics) is not False
                           for callback in callbacks)

            history = _dpc.train(args, on_epoch)
        return [m for m in history if m["epoch"] > done]

    def epochs(self, data, epochs=1, *, test=None, validation=None,
               **options):
        """train() as a generator: yields each epoch's metrics once it is
        done and checkpointed, and trains the next one only when asked
        (each resumes from the checkpoint, so the model is train()'s, bit
        for bit); leaving the loop early stops training there."""
        epochs = _whole(epochs, "epochs")
        done = self._epochs_done()
        with _DataFiles() as files:
            args = self._train_args(files, data, done + epochs, test,
                                    validation, options)
            for _ in range(epochs):
                resume = ["--resume"] if self._state() else []
                history = _dpc.train(args + resume, lambda metrics: False)
                yield history[-1]

    def evaluate(self, data, subset=None, **options):
        """What `dpc eval --json` reports over `data`, (x, y) or a `--data`
        string: the loss, and the accuracy over the targets that count (with
        the confusion matrix for one class per sample, the perplexity per
        token, the mean IoU per pixel), or the errors of float targets;
        options are its data flags (layout, normalize)."""
        with _DataFiles() as files:
            args = ["--data", files.labelled(data, "data")] + _flags(options)
            result = _dpc.evaluate(self.path, self._state(), args,
                                   _subset(subset))
        if "confusion_matrix" in result:
            result["confusion_matrix"] = np.array(result["confusion_matrix"],
                                                  np.int64)
        return result

    def predict(self, x, subset=None, **options):
        """The logits of each sample of `x` (an array, (x, y) or a `--data`
        string), f32 [N, classes], as `dpc predict` writes them."""
        with _DataFiles() as files:
            args = ["--data", files.labelled(x, "x", images_alone=True)]
            count, classes, logits = _dpc.predict(
                self.path, self._state(), args + _flags(options),
                _subset(subset))
        return np.frombuffer(logits, np.float32).reshape(count, classes)

    def state_dict(self):
        """The parameters and buffers (batch-norm statistics), NumPy arrays
        by their names in the model file, in plain layout: what `dpc export
        -o weights.npz` writes."""
        return {name: np.frombuffer(data, dtype).reshape(dims)
                for name, dtype, dims, data in
                _dpc.state_dict(self.path, self._state())}

    def load_state_dict(self, state_dict, strict=True):
        """Sets parameters and buffers by name (NumPy arrays or torch
        tensors of the plan's dtype and shape); the optimizer state and the
        epochs done stay. With strict=False, missing names keep their
        values."""
        if not hasattr(state_dict, "items"):
            raise Error("dpc: load_state_dict: expected a dict of arrays by "
                        "name, got %s" % type(state_dict).__name__)
        values = {}
        for name, value in state_dict.items():
            value = _to_numpy(value)
            values[name] = (value.dtype.name, list(value.shape),
                            np.ascontiguousarray(value).tobytes())
        _dpc.load_state_dict(self.path, self._state(), values,
                             self.checkpoint, strict)

    def export(self, path, opset=None, format=None):
        """Writes the trained model as ONNX (path.onnx), or its weights
        (.npz, .safetensors), as `dpc export` does; returns the path."""
        path = _path(path, "path")
        args = [self.path, "-o", path] + _flags({"opset": opset,
                                                 "format": format})
        if self._state():
            args += ["--checkpoint", self.checkpoint]
        _dpc.export(args)
        return path

    def save(self, directory):
        """Copies the training state into `directory`, a checkpoint that
        `dpc.load(plan, checkpoint=directory)` and `dpc run --resume`,
        `dpc eval --checkpoint` take; returns the file's path."""
        if not self._state():
            raise Error("%s: nothing to save: the plan has not trained yet"
                        % _dpc.checkpoint_path(self.checkpoint))
        directory = _path(directory, "directory")
        os.makedirs(directory, exist_ok=True)
        target = _dpc.checkpoint_path(directory)
        shutil.copyfile(_dpc.checkpoint_path(self.checkpoint), target)
        return target


def load(path, checkpoint=None):
    """A plan file, with the training state of `checkpoint` (a directory
    `dpc run --checkpoint` or `Plan.save` wrote; training goes on there)."""
    return Plan(path, checkpoint)


def _export_torch(module, example_input, path):
    """`module` as ONNX in training form, as the README recommends."""
    import torch
    if example_input is None:
        raise Error("dpc.compile: a torch.nn.Module needs example_input, a "
                    "batch of its input")
    x = example_input
    if not isinstance(x, torch.Tensor):
        x = torch.from_numpy(np.asarray(x))
    # The legacy (TorchScript) exporter writes training graphs; PyTorch 2's
    # default became the dynamo exporter, whose optimizer folds batch norm
    # into convolutions. PyTorch before 2.5 has no `dynamo` argument (and
    # only the legacy exporter).
    import inspect
    legacy = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        legacy["dynamo"] = False
    was_training = module.training
    module.train()
    try:
        torch.onnx.export(module, (x,), path, **legacy, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=["x"],
                          output_names=["logits"],
                          dynamic_axes={"x": {0: "batch"},
                                        "logits": {0: "batch"}})
    finally:
        module.train(was_training)


def compile(model, example_input=None, devices=None, output=None,
            checkpoint=None, **options):
    """Compiles `model`, an ONNX file or a torch.nn.Module (exported in
    training form with torch.onnx.export), into a Plan. `example_input` is
    a batch of the input: its batch size is the compiled one unless
    `batch=` says otherwise. `devices` is a count of CPU devices, a list
    ("cpu:0", "cpu:1") or dpc's string; the other options are `dpc
    compile`'s flags (lr, optimizer, momentum, split, grad_accum, ...).
    The plan goes to `output`, or to a temporary file."""
    work = tempfile.mkdtemp(prefix="dpc-")
    try:
        if isinstance(model, (str, os.PathLike)):
            model_path = os.fspath(model)
        else:
            try:
                import torch
            except ImportError:
                raise Error("dpc.compile: expected an ONNX file (torch is not "
                            "installed to export %s)" % type(model).__name__)
            if not isinstance(model, torch.nn.Module):
                raise Error("dpc.compile: expected an ONNX file or a "
                            "torch.nn.Module, got %s" % type(model).__name__)
            model_path = os.path.join(work, "model.onnx")
            _export_torch(model, example_input, model_path)
        if example_input is not None and options.get("batch") is None:
            if not hasattr(example_input, "__len__"):
                raise Error("dpc.compile: example_input: expected a batch "
                            "(an array), got %s" % type(example_input).__name__)
            options["batch"] = len(example_input)
        if isinstance(devices, numbers.Integral) and \
                not isinstance(devices, bool):
            devices = ["cpu:%d" % d for d in range(_whole(devices, "devices"))]
        elif devices is not None and \
                not isinstance(devices, (str, tuple, list)):
            raise Error("dpc.compile: devices=%r: expected a count, a list "
                        "of devices or a string" % (devices,))
        options["devices"] = devices
        plan_path = os.fspath(output) if output else os.path.join(work,
                                                                  "model.plan")
        command = [_find_compiler(), "compile", model_path, "-o", plan_path]
        done = subprocess.run(command + _flags(options), capture_output=True,
                              text=True)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        notes = [line for line in lines if line.startswith("dpc: note:")]
        for line in notes:  # an eval-mode export, ...
            print(line, file=sys.stderr)
        if done.returncode != 0:
            errors = [line for line in lines if line not in notes]
            raise Error(errors[0] if errors else "dpc compile failed with "
                        "exit code %d" % done.returncode)
        return Plan(plan_path, checkpoint, _work=work)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
