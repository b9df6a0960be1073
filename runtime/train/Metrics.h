//===- Metrics.h - per-epoch training metrics -------------------*- C++ -*-===//

#ifndef DPC_RUNTIME_TRAIN_METRICS_H
#define DPC_RUNTIME_TRAIN_METRICS_H

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace dpc::train {

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
