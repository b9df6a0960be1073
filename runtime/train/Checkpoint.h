//===- Checkpoint.h - training state on disk --------------------*- C++ -*-===//
//
// A checkpoint holds everything a run needs to go on as if never stopped:
// every persistent tensor of the plan (parameters, buffers, optimizer
// state), the optimizer step count, the epochs and steps done, the shuffle
// seed (each epoch's order is a function of seed and epoch), the metrics
// so far and, for a checkpoint taken mid-epoch, how far into its epoch the
// run was and its running sums. It is written atomically: a temporary
// file, fsync, rename, fsync of the directory, so a crash leaves the old
// checkpoint or the new one. docs/checkpoint-format.md describes the file.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_CHECKPOINT_H
#define DPC_RUNTIME_TRAIN_CHECKPOINT_H

#include "runtime/abi/PlanTypes.h"
#include "runtime/data/ImageTransforms.h"
#include "runtime/io/OneLine.h"
#include "runtime/train/Metrics.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpc::rt {
class Executor;
}

namespace dpc::train {

/// One line, whatever the file's names hold (OneLine.h).
struct CheckpointError : std::runtime_error {
  explicit CheckpointError(const std::string &message)
      : std::runtime_error(io::oneLine(message)) {}
};

struct SavedTensor {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

/// How far a run got into the epoch it stopped in: the batches trained and
/// the sums its epoch metrics are made of. All zero at an epoch boundary.
struct PartialEpoch {
  int64_t stepsDone = 0; // batches of epoch `epochsDone` already trained
  int64_t samplesSeen = 0;
  double lossSum = 0;      // sum over those batches of loss * rows
  double correct = 0;      // right predictions among those samples
  double trainSeconds = 0; // time spent training them
};

/// The version of the checkpoint format that saveCheckpoint writes
/// ("DPCCKPT4"); loadCheckpoint reads it and versions 1 to 3.
constexpr int kCheckpointFormatVersion = 4;

/// The form the run's images took (--layout, --normalize), which `dpc
/// eval`, `predict` and a resumed run reuse. Unknown in checkpoints before
/// version 4.
struct DataForm {
  bool known = false;
  data::ImageLayout layout = data::ImageLayout::Auto;
  data::Normalization normalization;
};

struct TrainingState {
  int64_t epochsDone = 0; // complete epochs
  int64_t stepsDone = 0;  // train steps in all
  int64_t optimizerStep = 0;
  uint64_t seed = 0;
  PartialEpoch partial;
  /// One entry per complete epoch.
  std::vector<EpochMetrics> history;
  /// One copy of each persistent tensor, in Plan.persistent order: the
  /// lowest device's. Replicas hold the same values, except batch-norm
  /// running statistics without sync-bn, where device 0's are kept (as
  /// DDP keeps rank 0's); a restore writes them to every device.
  std::vector<SavedTensor> tensors;
  DataForm dataForm;
};

/// The file a checkpoint directory holds.
std::string getCheckpointPath(const std::string &directory);

/// Writes `state` into `directory` (created if missing) atomically.
void saveCheckpoint(const std::string &directory, const TrainingState &state);
/// Reads the checkpoint of `directory`; throws CheckpointError naming the
/// file if it is missing, corrupted, of another format, or inconsistent
/// (counters that disagree with each other or with the metrics, tensors
/// whose bytes do not match their dtype and dims).
TrainingState loadCheckpoint(const std::string &directory);
/// Throws CheckpointError naming `path` if `state` is past the end of a
/// run of `epochs` epochs and `maxSteps` steps (-1: no limit).
void checkResumable(const TrainingState &state, int64_t epochs,
                    int64_t maxSteps, const std::string &path);

/// Takes the checkpoint's --layout and --normalize into `layout` and
/// `normalization` where they were not given (Auto, empty); throws
/// CheckpointError naming `path` where a given one disagrees with a
/// recorded one. Then records the ones in effect in `state`.
void reconcileDataForm(TrainingState &state, data::ImageLayout &layout,
                       data::Normalization &normalization,
                       const std::string &path);

/// Throws CheckpointError naming the tensor and index where `t`, a
/// persistent tensor of `kind`, holds a value its kind may not (NaN; or
/// infinity, outside buffers).
void checkStateValues(const SavedTensor &t, plan::PersistentKind kind,
                      const std::string &path);

/// The executor's persistent tensors and optimizer step, into `state`.
/// Under dpc launch, a tensor sharded over the ranks is gathered whole: a
/// collective, which every rank calls at the same points.
void captureState(const rt::Executor &executor, TrainingState &state);
/// Restores the executor from `state`; throws CheckpointError naming
/// `path` if the state belongs to another plan.
void restoreState(rt::Executor &executor, const TrainingState &state,
                  const std::string &path);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_CHECKPOINT_H
