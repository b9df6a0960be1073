//===- LrSchedule.h - learning rate per step --------------------*- C++ -*-===//

#ifndef DPC_RUNTIME_TRAIN_LRSCHEDULE_H
#define DPC_RUNTIME_TRAIN_LRSCHEDULE_H

#include <cstdint>
#include <string>

namespace dpc::train {

/// constant | step:EVERY:GAMMA (multiply by GAMMA every EVERY epochs, like
/// torch's StepLR) | cosine[:WARMUP_EPOCHS] (linear warm-up over the first
/// WARMUP_EPOCHS, then cosine annealing to 0 at the last epoch, per step).
struct LrSchedule {
  enum class Kind { Constant, Step, Cosine };
  Kind kind = Kind::Constant;
  int64_t every = 1;
  double gamma = 1.0;
  double warmupEpochs = 0.0;

  /// Parses the --lr-schedule value; throws std::invalid_argument with a
  /// one-line reason.
  static LrSchedule parse(const std::string &text);

  /// The rate of step `step` (0-based) of epoch `epoch` (0-based) in a run
  /// of `epochs` epochs of `stepsPerEpoch` steps each.
  double at(double baseLr, int64_t epoch, int64_t step, int64_t stepsPerEpoch,
            int64_t epochs) const;
};

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_LRSCHEDULE_H
