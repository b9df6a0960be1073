//===- Metrics.h - per-epoch training metrics -------------------*- C++ -*-===//

#ifndef DPC_RUNTIME_TRAIN_METRICS_H
#define DPC_RUNTIME_TRAIN_METRICS_H

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace dpc::train {

/// What a plan's loss learns, which names its metrics: a class per sample
/// (accuracy), per token (token accuracy, and perplexity: exp of the mean
/// loss), per pixel (pixel accuracy), or float targets (a regression's or
/// a multi-label model's loss, named by its kind; no accuracy).
enum class Task { Classes, Tokens, Pixels, Regression };

/// "tokens", "pixels", ... as the metrics JSON says.
const char *getTaskName(Task task);

/// One epoch's numbers; NaN where there is nothing to report (no test set,
/// a plan without a "correct" output).
struct EpochMetrics {
  int64_t epoch = 0; // 1-based
  double trainLoss = 0, trainAcc = 0, testAcc = 0;
  double epochSeconds = 0, imagesPerSecond = 0;
  double lr = 0; // at the epoch's first step
  /// The eval step over the validation set, when there is one.
  double valLoss = std::numeric_limits<double>::quiet_NaN();
  double valAcc = std::numeric_limits<double>::quiet_NaN();
  /// The eval step's loss over the test set (reported for tasks other
  /// than Classes, whose test metric is the accuracy).
  double testLoss = std::numeric_limits<double>::quiet_NaN();
  Task task = Task::Classes;
  /// The loss's name for a regression: "mse", "mae" (L1), "huber", ...
  std::string lossName = "loss";
};

/// A segmenter's intersections and unions per class: its prediction at each
/// target that counts (the first largest logit along the class axis)
/// against the target. The mean IoU is torchmetrics' JaccardIndex
/// (average="macro", ignore_index): the mean over the classes that occur in
/// the targets or the predictions of IoU = |pred ∩ target| / |pred ∪
/// target|.
class IouCounts {
public:
  explicit IouCounts(int64_t classes);

  /// Adds `rows` samples: logits [rows, outer, classes, inner] (the class
  /// axis between `outer` and `inner`) and targets [rows, outer, inner];
  /// a target equal to `ignore` counts for nothing.
  void add(const float *logits, const int32_t *targets, int64_t rows,
           int64_t outer, int64_t inner, std::optional<int64_t> ignore);

  /// Per class, NaN for a class in neither the targets nor the predictions.
  std::vector<double> getPerClassIou() const;
  /// The mean over the classes that occur; NaN when no target counted.
  double getMeanIou() const;

private:
  int64_t classes;
  std::vector<int64_t> intersection, predicted, actual;
};

/// {"epoch": 1, "train_loss": ..., ...} on one line, NaN as null; the
/// validation fields only with a validation set.
std::string toJsonLine(const EpochMetrics &metrics);

/// An SVG chart of train loss, train accuracy, test accuracy (and, with a
/// validation set, its loss and accuracy) per epoch,
/// in the manner of d2l's Animator: axes, ticks, grid, legend.
std::string renderSvgPlot(const std::vector<EpochMetrics> &history,
                          int64_t totalEpochs);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_METRICS_H
