//===- DpcModule.cpp - the runtime's C++ API for Python (dpc._dpc) --------===//
//
// The few entry points dpc/__init__.py builds on: training (runTraining with
// a per-epoch callback), evaluation, prediction, the named parameters out
// and in, and export. Each takes the command line's own strings (the plan,
// the checkpoint directory, `--data ...` and the other flags), so the
// flags are parsed and checked by the code `dpc run`, `eval` and `export`
// use, and every error is dpc's one line, raised as dpc.Error. The GIL is
// released while the runtime works.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/PlanTypes.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/CommandLine.h"
#include "runtime/train/DataOptions.h"
#include "runtime/train/Evaluate.h"
#include "runtime/train/ExportCommand.h"
#include "runtime/train/NonFinite.h"
#include "runtime/train/RunOptions.h"
#include "runtime/train/Trainer.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

namespace py = pybind11;
using namespace dpc;

namespace {

/// dpc.Error, set in PYBIND11_MODULE.
PyObject *errorType = nullptr;

/// Runs `body`, turning dpc's exceptions (one line each) into dpc.Error;
/// a Python exception raised inside (a callback's) goes on as it is.
template <typename Body>
auto reportErrors(const char *command, Body body) -> decltype(body()) {
  std::string message;
  try {
    return body();
  } catch (const py::error_already_set &) {
    throw;
  } catch (const train::UsageError &error) {
    message = std::string("dpc ") + command + ": " + error.what();
  } catch (const std::exception &error) {
    message = error.what();
  }
  PyErr_SetString(errorType, message.c_str());
  throw py::error_already_set();
}

/// NaN (nothing to report) as None, as the metrics' JSON has null.
py::object numberOrNone(double value) {
  return std::isnan(value) ? py::none() : py::object(py::float_(value));
}

/// Bytes for numpy.frombuffer: arrays cross as bytes, dtype and shape, so
/// that the module does not depend on NumPy's C ABI (which NumPy 2 changed
/// under pybind11 2.10).
py::bytearray toBytes(const void *data, size_t size) {
  return py::bytearray(static_cast<const char *>(data), size);
}

/// A tensor from Python: its NumPy dtype name, dims and C-order bytes.
using TensorValue = std::tuple<std::string, std::vector<int64_t>, std::string>;

py::dict toDict(const train::EpochMetrics &m) {
  py::dict d;
  d["epoch"] = m.epoch;
  d["train_loss"] = numberOrNone(m.trainLoss);
  d["train_acc"] = numberOrNone(m.trainAcc);
  d["test_acc"] = numberOrNone(m.testAcc);
  d["epoch_seconds"] = m.epochSeconds;
  d["images_per_second"] = m.imagesPerSecond;
  d["lr"] = m.lr;
  if (!std::isnan(m.valLoss) || !std::isnan(m.valAcc)) {
    d["val_loss"] = numberOrNone(m.valLoss);
    d["val_acc"] = numberOrNone(m.valAcc);
  }
  return d;
}

/// `dpc run ARGS` in this process; `onEpoch(metrics)` after each epoch,
/// whose false ends the run (the epoch is checkpointed first). Returns every
/// epoch's metrics, resumed ones included.
py::list trainPlan(const std::vector<std::string> &args, py::object onEpoch) {
  std::optional<py::error_already_set> raised;
  train::TrainResult result = reportErrors("run", [&] {
    train::RunOptions options = train::parseRunOptions(args);
    options.quiet = true;
    if (!onEpoch.is_none())
      options.onEpochEnd = [&](const train::EpochMetrics &m) {
        py::gil_scoped_acquire gil;
        try {
          py::object keepGoing = onEpoch(toDict(m));
          return keepGoing.is_none() || keepGoing.cast<bool>();
        } catch (py::error_already_set &error) {
          raised = std::move(error); // raised once the run has stopped
          return false;
        }
      };
    py::gil_scoped_release release;
    std::ostringstream out;
    return train::runTraining(options, out);
  });
  if (raised)
    throw std::move(*raised);
  py::list history;
  for (const train::EpochMetrics &m : result.history)
    history.append(toDict(m));
  return history;
}

/// What `dpc eval` and `dpc predict` run: the plan, the checkpoint and the
/// data flags (`--data ... --layout ... --normalize ...`).
train::InferenceOptions parseInference(const std::string &plan,
                                       const std::string &checkpoint,
                                       const std::vector<std::string> &dataArgs,
                                       int64_t subset, bool imagesAlone) {
  train::InferenceOptions options;
  train::FlagParser parser;
  train::addDataFlags(parser, options.data, imagesAlone);
  parser.addSwitch("--allow-non-finite", options.allowNonFinite);
  std::vector<std::string> args = dataArgs;
  args.insert(args.begin(), plan);
  parser.parse(args, options.planPath);
  if (!parser.given("--data"))
    throw train::UsageError("missing --data");
  options.checkpointDirectory = checkpoint;
  options.subset = subset;
  return options;
}

py::dict evaluate(const std::string &plan, const std::string &checkpoint,
                  const std::vector<std::string> &dataArgs, int64_t subset) {
  train::EvalResult result = reportErrors("eval", [&] {
    train::InferenceOptions options =
        parseInference(plan, checkpoint, dataArgs, subset, false);
    py::gil_scoped_release release;
    return train::evaluateDataset(options);
  });
  // The numbers of dpc eval --json, for every task.
  py::dict d;
  d["samples"] = result.count;
  d["task"] = train::getTaskName(result.task);
  d["loss"] = numberOrNone(result.loss);
  if (result.task == train::Task::Regression) {
    d["loss_kind"] = result.lossName;
    if (result.lossName != "bce") {
      d["mse"] = numberOrNone(result.mse);
      d["mae"] = numberOrNone(result.mae);
    }
    return d;
  }
  // The accuracy over the targets that count: samples, or the tokens and
  // pixels not ignored.
  d["correct"] = result.correct;
  d["targets"] = result.targets;
  d["accuracy"] =
      result.targets ? double(result.correct) / result.targets : 0.0;
  if (result.task == train::Task::Classes)
    d["confusion_matrix"] = result.confusion;
  if (result.task == train::Task::Tokens)
    d["perplexity"] = numberOrNone(std::exp(result.loss));
  if (result.task == train::Task::Pixels) {
    d["mean_iou"] = numberOrNone(result.meanIou);
    py::list iou;
    for (double value : result.iou)
      iou.append(numberOrNone(value));
    d["per_class_iou"] = iou;
  }
  return d;
}

/// The logits, f32 [N, classes]: (N, classes, bytes).
py::tuple predictPlan(const std::string &plan, const std::string &checkpoint,
                      const std::vector<std::string> &dataArgs,
                      int64_t subset) {
  train::Predictions predictions = reportErrors("predict", [&] {
    train::InferenceOptions options =
        parseInference(plan, checkpoint, dataArgs, subset, true);
    py::gil_scoped_release release;
    return train::predictDataset(options);
  });
  return py::make_tuple(predictions.count, predictions.classes,
                        toBytes(predictions.logits.data(),
                                predictions.logits.size() * sizeof(float)));
}

/// NumPy's name of a plan dtype, or null where NumPy has none (bf16).
const char *getNumpyDType(plan::DType dtype) {
  switch (dtype) {
  case plan::DType::F32:
    return "float32";
  case plan::DType::F64:
    return "float64";
  case plan::DType::F16:
    return "float16";
  case plan::DType::I32:
    return "int32";
  case plan::DType::I64:
    return "int64";
  case plan::DType::U8:
    return "uint8";
  default:
    return nullptr;
  }
}

/// The parameters and buffers, as `dpc export -o FILE.npz` writes them:
/// (name, NumPy dtype, dims, bytes) each, in the plan's order.
py::list stateDict(const std::string &plan, const std::string &checkpoint) {
  std::vector<train::ExportedTensor> tensors = reportErrors("export", [&] {
    py::gil_scoped_release release;
    return runtime::loadExportedTensors(plan, checkpoint);
  });
  py::list entries;
  for (const train::ExportedTensor &tensor : tensors) {
    const char *dtype = getNumpyDType(tensor.dtype);
    if (!dtype)
      reportErrors("export", [&]() -> int {
        throw train::RunError(plan + ": tensor '" + tensor.name + "' is " +
                              plan::EnumNameDType(tensor.dtype) +
                              ", which NumPy cannot hold");
      });
    entries.append(
        py::make_tuple(tensor.name, dtype, tensor.dims,
                       toBytes(tensor.bytes.data(), tensor.bytes.size())));
  }
  return entries;
}

/// Writes a checkpoint into `output`: the training state of `checkpoint`
/// (empty: the plan's initial state) with the tensors of `values` (name to
/// NumPy dtype name, dims and C-order bytes) in place of its own.
/// With `strict`, every parameter and buffer must be given. The optimizer
/// state and counters stay.
void loadStateDict(const std::string &plan, const std::string &checkpoint,
                   const std::map<std::string, TensorValue> &values,
                   const std::string &output, bool strict) {
  reportErrors("load_state_dict", [&] {
    auto loaded = plan::LoadedPlan::load(plan);
    train::TrainingState state;
    {
      rt::Executor executor(loaded, rt::createDevice);
      if (!checkpoint.empty()) {
        std::string path = train::getCheckpointPath(checkpoint);
        state = train::loadCheckpoint(checkpoint);
        train::restoreState(executor, state, path);
      }
      train::captureState(executor, state);
    }
    std::map<std::string, bool> used;
    std::vector<std::string> missing;
    for (const train::ExportedTensor &exported :
         runtime::loadExportedTensors(plan, "")) {
      auto given = values.find(exported.name);
      if (given == values.end()) {
        missing.push_back(exported.name);
        continue;
      }
      used[exported.name] = true;
      const auto &[dtype, dims, bytes] = given->second;
      const char *expected = getNumpyDType(exported.dtype);
      if (dims != exported.dims || !expected || dtype != expected)
        throw train::RunError(
            plan + ": state_dict['" + exported.name + "'] is " + dtype + " " +
            plan::formatDims(dims) + ", the plan's is " +
            (expected ? expected : plan::EnumNameDType(exported.dtype)) + " " +
            plan::formatDims(exported.dims));
      int64_t bad = train::findInvalidStateValue(
          int32_t(exported.dtype), bytes.data(), plan::getNumElements(dims),
          /*infinityAllowed=*/exported.kind == plan::PersistentKind::Buffer);
      if (bad >= 0)
        throw train::RunError(plan + ": state_dict['" + exported.name +
                              "'] holds " +
                              train::describeNonFinite(int32_t(exported.dtype),
                                                       bytes.data(), bad) +
                              " at index " + std::to_string(bad));
      for (train::SavedTensor &saved : state.tensors)
        if (saved.name == exported.name)
          saved.bytes.assign(bytes.begin(), bytes.end());
    }
    for (const auto &[name, value] : values)
      if (!used.count(name))
        throw train::RunError(plan + ": state_dict has '" + name +
                              "', which is no parameter or buffer of the plan");
    if (strict && !missing.empty())
      throw train::RunError(
          plan + ": state_dict lacks '" + missing.front() + "'" +
          (missing.size() > 1
               ? " and " + std::to_string(missing.size() - 1) + " more"
               : "") +
          " (strict=False keeps the plan's own)");
    train::saveCheckpoint(output, state);
    return 0;
  });
}

/// `dpc export ARGS`; returns its output line.
std::string exportModel(const std::vector<std::string> &args) {
  std::ostringstream out, err;
  int code;
  {
    py::gil_scoped_release release;
    code = runtime::exportCommand(args, out, err);
  }
  if (code != 0) {
    std::string message = err.str();
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    PyErr_SetString(errorType, message.c_str());
    throw py::error_already_set();
  }
  return out.str();
}

} // namespace

PYBIND11_MODULE(_dpc, m) {
  m.doc() = "dpc's runtime: train, evaluate, predict and export plans";
  static py::exception<train::RunError> error(m, "Error", PyExc_RuntimeError);
  errorType = error.ptr();
  m.def("train", &trainPlan, py::arg("args"), py::arg("on_epoch") = py::none());
  m.def("evaluate", &evaluate, py::arg("plan"), py::arg("checkpoint"),
        py::arg("data_args"), py::arg("subset") = -1);
  m.def("predict", &predictPlan, py::arg("plan"), py::arg("checkpoint"),
        py::arg("data_args"), py::arg("subset") = -1);
  m.def("state_dict", &stateDict, py::arg("plan"), py::arg("checkpoint"));
  m.def("load_state_dict", &loadStateDict, py::arg("plan"),
        py::arg("checkpoint"), py::arg("values"), py::arg("output"),
        py::arg("strict") = true);
  m.def("export", &exportModel, py::arg("args"));
  m.def("checkpoint_path", &train::getCheckpointPath, py::arg("directory"));
  m.def(
      "checkpoint_epochs",
      [](const std::string &directory) {
        return reportErrors(
            "run", [&] { return train::loadCheckpoint(directory).epochsDone; });
      },
      py::arg("directory"));
  m.attr("build_bin_dir") = DPC_BUILD_BIN_DIR;
}
