//===- Evaluate.h - a trained plan on a data set, forward only --*- C++ -*-===//
//
// `dpc eval` and `dpc predict`: load a plan and (optionally) a checkpoint
// into an executor, run the plan's eval_step (batch norm with its running
// statistics) over a data set in order, and report the loss, the accuracy
// and the confusion matrix, or collect the logits. Every failure a user can
// cause is a RunError whose message is one line naming the file at fault.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_EVALUATE_H
#define DPC_RUNTIME_TRAIN_EVALUATE_H

#include "runtime/train/DataOptions.h"
#include "runtime/train/Metrics.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::train {

/// What `dpc eval` and `dpc predict` run.
struct InferenceOptions {
  std::string planPath;
  std::string checkpointDirectory; // empty: the plan's own weights
  /// --data, --layout, --normalize: the test split where there is one,
  /// else the files given.
  DataOptions data;
  int64_t subset = -1; // --subset: the first N samples; -1 = all
  /// --allow-non-finite: report NaN or infinite logits and losses instead
  /// of failing on the first.
  bool allowNonFinite = false;
};

struct EvalResult {
  int64_t count = 0, correct = 0;
  double loss = 0; // the mean over the samples, as the plan computes it
  /// confusion[label][predicted]: predictions by the first largest logit
  /// (one class per sample only).
  std::vector<std::vector<int64_t>> confusion;
  /// What the plan learns, and the loss's name (Metrics.h).
  Task task = Task::Classes;
  std::string lossName = "loss";
  /// The targets that count, the accuracy's divisor: the samples, or the
  /// tokens or pixels not ignored.
  int64_t targets = 0;
  /// Float targets: the mean squared and absolute error of the outputs.
  double mse = 0, mae = 0;
  /// Per pixel: each class's IoU (NaN where it occurs in neither the
  /// targets nor the predictions) and their mean (IouCounts, Metrics.h).
  std::vector<double> iou;
  double meanIou = 0;
};

struct Predictions {
  int64_t count = 0, classes = 0;
  std::vector<float> logits; // count x classes, row-major
};

/// Throws RunError. `dpc predict` takes a plan of one class per sample.
EvalResult evaluateDataset(const InferenceOptions &options);
Predictions predictDataset(const InferenceOptions &options);

/// The indices of the `k` largest entries of each row, largest first (ties
/// to the lower index, as torch.topk on CPU), count x k, row-major.
std::vector<int64_t> topK(const Predictions &predictions, int64_t k);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_EVALUATE_H
