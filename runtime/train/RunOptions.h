//===- RunOptions.h - the flags of `dpc run` --------------------*- C++ -*-===//

#ifndef DPC_RUNTIME_TRAIN_RUNOPTIONS_H
#define DPC_RUNTIME_TRAIN_RUNOPTIONS_H

#include "runtime/data/ImageTransforms.h"
#include "runtime/train/CommandLine.h"
#include "runtime/train/DataOptions.h"
#include "runtime/train/LrSchedule.h"
#include "runtime/train/Metrics.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dpc::train {

/// The data flags (DataOptions) and the rest of `dpc run`'s.
struct RunOptions : DataOptions {
  std::string planPath;
  // --val-split F: the last F of the training set validates, in order.
  double valSplit = 0;
  // --val-data idx|npy:IMAGES,LABELS: a validation set of its own.
  std::string valImages, valLabels;
  bool valNpy = false;
  // --augment crop=PAD,flip: the training images, drawn per sample.
  data::Augmentation augmentation;
  // --init model|kaiming|xavier|normal:STD: where weights start (see
  // Init.h); "model" keeps the plan's values.
  std::string init = "model";
  int64_t epochs = 10; // with only --steps: as many as the steps need
  bool epochsGiven = false;
  int64_t maxSteps = -1; // --steps: train steps in all, -1 = no limit
  uint64_t seed = 0;
  bool seedGiven = false;
  double lr = 0.1;
  LrSchedule schedule;
  std::string metricsPath, plotPath, checkpointDirectory;
  std::string tracePath; // --trace: the first train steps, Chrome format
  bool resume = false;
  // --checkpoint-every N: also save the training state every N train steps.
  int64_t checkpointEvery = 0;
  int64_t trainSubset = -1, testSubset = -1; // first N samples; -1 = all
  bool quiet = false;                        // no progress bar or lines
  // Process-per-device runs (RANK/WORLD_SIZE or mpirun in the environment):
  std::string backend;         // --backend gloo|mpi; empty: by launcher
  double timeoutSeconds = 300; // --timeout: rendezvous and collectives
  // --last-batch short|drop|pad: an epoch's last, partial batch.
  std::string lastBatch = "short";
  // --on-nonfinite stop|skip-step: what a step that leaves NaN or infinity
  // in the training state (or a non-finite loss) does (NonFinite.h).
  bool skipNonFiniteSteps = false;
  bool help = false;
  // Not a flag: called with each epoch's metrics once the epoch is done
  // (and checkpointed); returning false ends the run there, as --steps
  // would. The Python module reports epochs through it.
  std::function<bool(const EpochMetrics &)> onEpochEnd;
};

/// Parses the arguments after "run" (`--flag value` or `--flag=value`).
/// Throws UsageError.
RunOptions parseRunOptions(const std::vector<std::string> &args);

/// The usage text of `dpc run`.
const char *getRunUsage();

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_RUNOPTIONS_H
