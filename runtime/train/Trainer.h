//===- Trainer.h - the training loop of `dpc run` ---------------*- C++ -*-===//
//
// Loads a plan and a data set, checks that they fit each other, and trains:
// each epoch shuffles the training set (the order is a function of seed and
// epoch), runs train_step on each batch (the last one may be short), then
// eval_step over the test set, and reports, saves metrics, plot and
// checkpoint. Every failure a user can cause is a RunError whose message is
// one line naming the file at fault.
//
// What the trainer expects of a plan, found by role (Plan.fbs): a step of
// role Train with data inputs ("images": f32 [N, C, H, W], batch dim), an
// input of role Labels (i32 classes [N], [N, T] or [N, H, W], or f32
// targets of any shape: ModelInput.h's PlanTargets; batch dim) and one of
// role LearningRate (f32 scalar), and an output of role Loss (the batch mean), optionally
// Correct (the count of right predictions, any numeric dtype); optionally
// a step of role Eval with data inputs, Labels and Correct.
// A data-parallel plan has these steps once per device: the trainer binds
// and reads global values, and the executor splits and sums (Executor.h).
//
// The run itself is a TrainingSession (TrainingSession.h); what it writes
// on the way (metrics, plot, trace, checkpoints) are its sinks (RunSinks.h).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_TRAINER_H
#define DPC_RUNTIME_TRAIN_TRAINER_H

#include "runtime/train/Metrics.h"
#include "runtime/train/RunOptions.h"

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpc::train {

struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// In a catch block: rethrows the exception being handled as a RunError
/// with the same one line; exceptions that are not std::exceptions go on
/// as they are. std::bad_alloc becomes "DOING: out of memory (DETAIL)",
/// where `doing` says what ran out ("PLAN: training") and a device's
/// rt::OutOfMemory the device and the bytes asked for.
[[noreturn]] void rethrowAsRunError(const std::string &doing = "");

struct TrainResult {
  std::vector<EpochMetrics> history; // every epoch, resumed ones included
  double finalTestAcc = 0;           // NaN without a test set
};

/// Runs `options`, printing progress to `out` (a progress bar only if
/// `interactive`). Throws RunError.
TrainResult runTraining(const RunOptions &options, std::ostream &out,
                        bool interactive = false);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_TRAINER_H
