//===- TrainingSession.h - one run of `dpc run` -----------------*- C++ -*-===//
//
// A training session is what runTraining (Trainer.h) holds while it runs:
// the plan and its executor, this rank's place in a process-per-device run,
// the training state (fresh or from a checkpoint), the data splits in the
// form the plan takes and their batch loaders. `open` builds all of it and
// checks the plan, the data and the checkpoint against each other; `train`
// then runs the epochs left, each one the train steps over a shuffled
// epoch and the eval step over the validation and test sets, and hands
// what it reports to the run's sinks (RunSinks.h).
//
// TrainingSession.cpp opens a session; TrainingLoop.cpp trains it.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_TRAININGSESSION_H
#define DPC_RUNTIME_TRAIN_TRAININGSESSION_H

#include "runtime/train/Checkpoint.h"
#include "runtime/train/DataOptions.h"
#include "runtime/train/ModelInput.h"
#include "runtime/train/RunOptions.h"
#include "runtime/train/Trainer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace dpc::data {
class BatchLoader;
}
namespace dpc::rt {
class Executor;
}
namespace dpc::plan {
class LoadedPlan;
}

namespace dpc::train {

class NonFiniteGuard;
struct RunSinks;

class TrainingSession {
public:
  /// Loads the plan, joins the process group (if the environment names
  /// one), checks the plan's steps, reads the checkpoint of a resumed run,
  /// loads and checks the data and makes the loaders. `doing` says at each
  /// moment what the session is doing, for a failed memory allocation
  /// (rethrowAsRunError). Throws RunError (or what rethrowAsRunError
  /// turns into one).
  static std::unique_ptr<TrainingSession> open(const RunOptions &given,
                                               std::string &doing);
  ~TrainingSession();
  TrainingSession(const TrainingSession &) = delete;
  TrainingSession &operator=(const TrainingSession &) = delete;

  /// Trains the epochs left, printing progress to `out` (a progress bar
  /// only if `interactive`), and reports the result.
  TrainResult train(std::ostream &out, bool interactive);

private:
  /// The eval step's loss and accuracy over a data set: the means over its
  /// samples (NaN where the plan has no such output).
  struct EvalSums;
  /// An epoch in progress: its running sums.
  struct EpochRun;

  explicit TrainingSession(const RunOptions &given);

  // The stages of `open`, in order.
  void loadPlan(std::string &doing);
  void checkSteps();
  void readCheckpoint(std::string &doing);
  void loadData(std::string &doing);
  void makeLoaders();

  /// Runs epoch `epoch` (0-based), or what --steps leaves of it; false
  /// where onEpochEnd ends the run there.
  bool runEpoch(int64_t epoch, RunSinks &sinks, NonFiniteGuard &guard);
  /// Binds the train step's next batch, step `index` of the epoch, and
  /// returns it (null: the epoch or --steps is done).
  const data::Batch *bindNextStep(const EpochRun &run, int64_t index);
  /// After a train step of `rows` rows (`counted` targets that count):
  /// its loss and what --on-nonfinite makes of non-finite values, into the
  /// epoch's sums.
  void finishStep(EpochRun &run, int64_t rows, int64_t counted, RunSinks &sinks,
                  NonFiniteGuard &guard);
  /// After the epoch's train steps: validation, test, the epoch's metrics
  /// and where they go. False where onEpochEnd ends the run.
  bool finishEpoch(EpochRun &run, RunSinks &sinks);
  /// Runs the eval step over `loader`'s data set in order.
  EvalSums evaluate(data::BatchLoader &loader);
  /// The result, and the final lines of a run.
  TrainResult report(const RunSinks &sinks) const;

  RunOptions options;
  /// The options as this rank sees them: rank 0 alone reports and writes
  /// files.
  RunOptions local;
  std::shared_ptr<const plan::LoadedPlan> loaded;
  bool rankMode = false, leader = true;
  std::unique_ptr<rt::Executor> executor;
  std::string planName;

  int trainStep = -1, evalStep = -1;
  bool trainCounts = false;
  std::vector<int64_t> sample;
  PlanInputs inputs;
  PlanTargets targets;

  TrainingState state;
  std::string resumePath;

  LoadedData trainSplit, validationSplit, testSplit;
  bool hasTest = false, hasValidation = false;
  // The loaders read the splits above and the executor's row slices: they
  // are declared after them, to go first.
  std::unique_ptr<data::BatchLoader> trainLoader, testLoader, validationLoader;
  int64_t batchSize = 0, stepsPerEpoch = 0, epochs = 0;

  /// The run's last epoch, if it ended before the epoch did.
  std::optional<EpochMetrics> lastPartialEpoch;
};

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_TRAININGSESSION_H
