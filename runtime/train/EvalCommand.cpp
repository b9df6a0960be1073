//===- EvalCommand.cpp - `dpc eval` and `dpc predict` ---------------------===//

#include "runtime/train/EvalCommand.h"
#include "runtime/train/Evaluate.h"
#include "runtime/train/NpyWriter.h"
#include "runtime/train/RunOptions.h"
#include "runtime/train/Trainer.h"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

namespace dpc::runtime {

using train::UsageError;

namespace {

/// The flags of `dpc eval` and `dpc predict` (each takes those it lists).
struct InferenceCommandLine {
  train::InferenceOptions options;
  bool json = false;      // eval
  std::string outputPath; // predict: -o
  int64_t topK = 0;       // predict: --top-k, 0 = the logits
  bool help = false;
};

/// Parses `args`; `predict` selects which command's flags are known.
InferenceCommandLine parseInferenceFlags(const std::vector<std::string> &args,
                                         bool predict) {
  InferenceCommandLine line;
  train::InferenceOptions &options = line.options;
  train::FlagParser parser;
  train::addDataFlags(parser, options.data, /*imagesAlone=*/predict);
  parser.addValue("--checkpoint", [&](const std::string &value) {
    options.checkpointDirectory = value;
  });
  parser.addValue("--subset", [&](const std::string &value) {
    options.subset = train::parseCount("--subset", value, 1);
  });
  parser.addSwitch("--allow-non-finite", options.allowNonFinite);
  if (predict) {
    parser.addValue("-o",
                    [&](const std::string &value) { line.outputPath = value; });
    parser.addValue("--top-k", [&](const std::string &value) {
      line.topK = train::parseCount("--top-k", value, 1);
    });
  } else {
    parser.addSwitch("--json", line.json);
  }
  if (!parser.parse(args, options.planPath)) {
    line.help = true;
    return line;
  }
  if (options.planPath.empty())
    throw UsageError(std::string("missing the plan file (dpc ") +
                     (predict ? "predict" : "eval") + " PLAN --data ...)");
  if (!parser.given("--data"))
    throw UsageError("missing --data");
  if (predict && line.outputPath.empty())
    throw UsageError("missing -o FILE.npy");
  return line;
}

std::string formatNumber(double value, const char *spec = "%.6g") {
  if (!std::isfinite(value))
    return "null";
  char text[64];
  std::snprintf(text, sizeof(text), spec, value);
  return text;
}

/// The line of a plan without one class per sample: "loss L, perplexity
/// P, token accuracy A (C of T tokens)", "loss L, pixel accuracy A (C of P
/// pixels), mean IoU I", or "mse L, mae M (N samples)".
std::string describeTargets(const train::EvalResult &result) {
  using train::Task;
  // A BCE's outputs are logits: their errors mean nothing.
  bool errors = result.lossName != "bce";
  if (result.task == Task::Regression)
    return result.lossName + " " + formatNumber(result.loss, "%.4f") +
           (result.lossName == "mse" || !errors
                ? ""
                : ", mse " + formatNumber(result.mse, "%.4f")) +
           (result.lossName == "mae" || !errors
                ? ""
                : ", mae " + formatNumber(result.mae, "%.4f")) +
           " (" + std::to_string(result.count) + " samples)";
  bool tokens = result.task == Task::Tokens;
  return "loss " + formatNumber(result.loss, "%.4f") +
         (tokens ? ", perplexity " + formatNumber(std::exp(result.loss), "%.4f")
                 : "") +
         (tokens ? ", token accuracy " : ", pixel accuracy ") +
         formatNumber(double(result.correct) / double(result.targets), "%.4f") +
         " (" + std::to_string(result.correct) + " of " +
         std::to_string(result.targets) + (tokens ? " tokens)" : " pixels)") +
         (result.task == Task::Pixels
              ? ", mean IoU " + formatNumber(result.meanIou, "%.4f")
              : "");
}

/// The JSON of a plan without one class per sample: the samples, task,
/// loss, and the accuracy over the targets that count or the errors.
std::string toTargetJson(const train::EvalResult &result) {
  std::ostringstream os;
  os << "{\"samples\": " << result.count << ", \"task\": \""
     << train::getTaskName(result.task)
     << "\", \"loss\": " << formatNumber(result.loss, "%.9g");
  if (result.task == train::Task::Regression) {
    os << ", \"loss_kind\": \"" << result.lossName << "\"";
    if (result.lossName != "bce")
      os << ", \"mse\": " << formatNumber(result.mse, "%.9g")
         << ", \"mae\": " << formatNumber(result.mae, "%.9g");
  } else
    os << ", \"accuracy\": "
       << formatNumber(double(result.correct) / double(result.targets), "%.9g")
       << ", \"correct\": " << result.correct
       << ", \"targets\": " << result.targets;
  if (result.task == train::Task::Tokens)
    os << ", \"perplexity\": " << formatNumber(std::exp(result.loss), "%.9g");
  if (result.task == train::Task::Pixels) {
    os << ", \"mean_iou\": " << formatNumber(result.meanIou, "%.9g")
       << ", \"per_class_iou\": [";
    for (size_t c = 0; c < result.iou.size(); ++c)
      os << (c ? ", " : "") << formatNumber(result.iou[c], "%.9g");
    os << "]";
  }
  os << "}";
  return os.str();
}

/// {"samples": N, "loss": ..., "accuracy": ..., "correct": N,
/// "per_class_accuracy": [...], "confusion_matrix": [[...], ...]}, rows
/// the labels and columns the predictions.
std::string toJson(const train::EvalResult &result) {
  std::ostringstream os;
  os << "{\"samples\": " << result.count
     << ", \"loss\": " << formatNumber(result.loss, "%.9g")
     << ", \"accuracy\": "
     << formatNumber(double(result.correct) / double(result.count), "%.9g")
     << ", \"correct\": " << result.correct << ", \"per_class_accuracy\": [";
  for (size_t c = 0; c < result.confusion.size(); ++c) {
    int64_t total = 0;
    for (int64_t n : result.confusion[c])
      total += n;
    os << (c ? ", " : "")
       << (total ? formatNumber(double(result.confusion[c][c]) / total, "%.9g")
                 : "null");
  }
  os << "], \"confusion_matrix\": [";
  for (size_t c = 0; c < result.confusion.size(); ++c) {
    os << (c ? ", [" : "[");
    for (size_t p = 0; p < result.confusion[c].size(); ++p)
      os << (p ? ", " : "") << result.confusion[c][p];
    os << "]";
  }
  os << "]}";
  return os.str();
}

/// Writes a C-order .npy array of `dtype` ("<f4", "<i8").
void writeNpy(const std::string &path, const char *dtype,
              const std::vector<int64_t> &shape, const void *data,
              size_t bytes) {
  train::writeFileAtomically(path, train::encodeNpy(dtype, shape, data, bytes));
}

/// Runs `body` (which returns the exit code), reporting errors in one line
/// prefixed with `command`.
template <typename Body>
int reportErrors(const char *command, std::ostream &err, Body body) {
  try {
    return body();
  } catch (const UsageError &error) {
    err << "dpc " << command << ": " << error.what() << " (see dpc " << command
        << " --help)" << std::endl;
  } catch (const std::exception &error) {
    err << error.what() << std::endl;
  }
  return 1;
}

} // namespace

const char *getEvalUsage() {
  static const std::string usage =
      std::string(
          "usage: dpc eval PLAN --data DATA [options]\n"
          "Reports the loss and accuracy of a trained plan on a labelled data "
          "set (its eval step).\n"
          "\n"
          "Input:\n"
          "  --data DATA         fashion-mnist[:DIR] (the test split), "
          "idx|npy:IMAGES,LABELS, or dpc run's four files (the last two)\n"
          "                      several inputs: npy:NAME=FILE,...,LABELS "
          "(the model's input names)\n"
          "  --checkpoint DIR    the training state to evaluate (default: the "
          "plan's own weights)\n"
          "  --subset N          the first N samples only\n") +
      train::getImageFlagsUsage() +
      "Output:\n"
      "  --allow-non-finite  report a NaN or infinite loss (as null) "
      "instead of failing\n"
      "  --json              one JSON object, with per-class accuracy and "
      "the confusion matrix\n";
  return usage.c_str();
}

const char *getPredictUsage() {
  static const std::string usage =
      std::string(
          "usage: dpc predict PLAN --data DATA -o FILE.npy "
          "[options]\n"
          "Writes the logits (or the top-k classes) of a trained plan for "
          "each image, in order.\n"
          "\n"
          "Input:\n"
          "  --data DATA         npy:IMAGES.npy (several inputs: "
          "npy:NAME=FILE,...), or a labelled set as in dpc eval (its labels "
          "unused)\n"
          "  --checkpoint DIR    the training state to use (default: the "
          "plan's own weights)\n"
          "  --subset N          the first N samples only\n") +
      train::getImageFlagsUsage() +
      "Output:\n"
      "  -o FILE.npy         f32 logits [N, classes], or with --top-k "
      "int64 classes [N, K]\n"
      "  --top-k K           the K most likely classes of each image, most "
      "likely first\n"
      "  --allow-non-finite  write NaN or infinite logits instead of "
      "failing\n";
  return usage.c_str();
}

int evalCommand(const std::vector<std::string> &args, std::ostream &out,
                std::ostream &err) {
  return reportErrors("eval", err, [&] {
    InferenceCommandLine line = parseInferenceFlags(args, /*predict=*/false);
    if (line.help) {
      out << getEvalUsage();
      return 0;
    }
    train::EvalResult result = train::evaluateDataset(line.options);
    if (line.json) {
      out << (result.task == train::Task::Classes ? toJson(result)
                                                  : toTargetJson(result))
          << std::endl;
      return 0;
    }
    if (result.task != train::Task::Classes) {
      out << describeTargets(result) << std::endl;
      return 0;
    }
    out << "loss " << formatNumber(result.loss, "%.4f") << ", accuracy "
        << formatNumber(double(result.correct) / double(result.count), "%.4f")
        << " (" << result.correct << " of " << result.count << ")" << std::endl;
    return 0;
  });
}

int predictCommand(const std::vector<std::string> &args, std::ostream &out,
                   std::ostream &err) {
  return reportErrors("predict", err, [&] {
    InferenceCommandLine line = parseInferenceFlags(args, /*predict=*/true);
    if (line.help) {
      out << getPredictUsage();
      return 0;
    }
    train::Predictions predictions = train::predictDataset(line.options);
    if (line.topK > predictions.classes)
      throw UsageError("--top-k " + std::to_string(line.topK) +
                       " is more than the plan's " +
                       std::to_string(predictions.classes) + " classes");
    if (line.topK) {
      std::vector<int64_t> classes = train::topK(predictions, line.topK);
      writeNpy(line.outputPath, "<i8", {predictions.count, line.topK},
               classes.data(), classes.size() * sizeof(int64_t));
    } else {
      writeNpy(line.outputPath, "<f4", {predictions.count, predictions.classes},
               predictions.logits.data(),
               predictions.logits.size() * sizeof(float));
    }
    out << "predictions: " << line.outputPath << " (" << predictions.count
        << " images, "
        << (line.topK ? "top " + std::to_string(line.topK) + " classes"
                      : std::to_string(predictions.classes) + " logits")
        << " each)" << std::endl;
    return 0;
  });
}

} // namespace dpc::runtime
