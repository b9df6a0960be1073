//===- Checkpoint.h - training state on disk --------------------*- C++ -*-===//
//
// A checkpoint holds everything a run needs to go on as if never stopped:
// every persistent tensor of the plan (parameters, buffers, optimizer
// state), the optimizer step count, the epochs and steps done, the shuffle
// seed (each epoch's order is a function of seed and epoch), the metrics
// so far and, written mid-epoch, that epoch's progress. It is written
// atomically: a temporary file, fsync, rename, fsync of the directory, so a
// crash leaves the old checkpoint or the new one.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_CHECKPOINT_H
#define DPC_RUNTIME_TRAIN_CHECKPOINT_H

#include "runtime/train/Metrics.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpc::exec {
class Executor;
}

namespace dpc::train {

struct CheckpointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SavedTensor {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

struct TrainingState {
  int64_t epochsDone = 0;
  int64_t stepsDone = 0;
  int64_t optimizerStep = 0;
  uint64_t seed = 0;
  /// Within epoch epochsDone + 1 (a checkpoint every N steps): its steps
  /// done and the sums its metrics line needs; zero at an epoch's end.
  int64_t epochStepsDone = 0;
  double epochLossSum = 0, epochCorrect = 0;
  int64_t epochSeen = 0;
  std::vector<EpochMetrics> history;
  /// One copy of each persistent tensor, in Plan.persistent order: the
  /// lowest device's. Replicas hold the same values, except batch-norm
  /// running statistics without sync-bn, where device 0's are kept (as
  /// DDP keeps rank 0's); a restore writes them to every device.
  std::vector<SavedTensor> tensors;
};

/// The file a checkpoint directory holds.
std::string getCheckpointPath(const std::string &directory);

/// Writes `state` into `directory` (created if missing) atomically.
void saveCheckpoint(const std::string &directory, const TrainingState &state);
/// Reads the checkpoint of `directory`; throws CheckpointError naming the
/// file if it is missing, corrupted or of another format.
TrainingState loadCheckpoint(const std::string &directory);

/// The executor's persistent tensors and optimizer step, into `state`.
void captureState(const exec::Executor &executor, TrainingState &state);
/// Restores the executor from `state`; throws CheckpointError naming
/// `path` if the state belongs to another plan.
void restoreState(exec::Executor &executor, const TrainingState &state,
                  const std::string &path);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_CHECKPOINT_H
