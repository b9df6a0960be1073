//===- Progress.h - what a run prints while it trains -----------*- C++ -*-===//

#ifndef DPC_RUNTIME_TRAIN_PROGRESS_H
#define DPC_RUNTIME_TRAIN_PROGRESS_H

#include "runtime/train/Metrics.h"

#include <chrono>
#include <cstdint>
#include <ostream>

namespace dpc::train {

/// On a terminal, a progress bar redrawn in place (at most ~10 times a
/// second); elsewhere (a log, a pipe) only one plain line per epoch.
class Progress {
public:
  Progress(std::ostream &out, bool interactive, bool quiet)
      : out(out), interactive(interactive), quiet(quiet) {}

  void update(int64_t epoch, int64_t epochs, int64_t step, int64_t steps,
              double loss, double accuracy, double imagesPerSecond);
  void finishEpoch(const EpochMetrics &metrics, int64_t epochs);

private:
  std::ostream &out;
  bool interactive, quiet;
  bool drawn = false;
  std::chrono::steady_clock::time_point lastDraw;
};

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_PROGRESS_H
