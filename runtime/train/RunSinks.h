//===- RunSinks.h - what a training run writes on the way -------*- C++ -*-===//
//
// Besides its result, a run of `dpc run` leaves a metrics file (--metrics,
// a JSON line per epoch), a plot (--plot), a Chrome trace of its first
// train steps (--trace) and checkpoints (--checkpoint, --checkpoint-every).
// Each is an object of its own here, so that the training session
// (TrainingSession.h) only says when something happened. In a
// process-per-device run rank 0 alone writes them: the others get empty
// paths and a disabled checkpoint policy. A failure to write is a RunError
// naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_RUNSINKS_H
#define DPC_RUNTIME_TRAIN_RUNSINKS_H

#include "runtime/io/FileWrite.h"
#include "runtime/train/Metrics.h"
#include "runtime/train/Progress.h"

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace dpc::rt {
class Executor;
class Tracer;
} // namespace dpc::rt

namespace dpc::train {

struct RunOptions;
struct TrainingState;

/// --metrics and --plot: a JSON line per epoch, and a chart redrawn after
/// each one.
class MetricsSink {
public:
  /// Opens (creates or truncates) `metricsPath` unless it is empty and
  /// writes `history`, a resumed run's epochs, to it.
  /// Each epoch's line also gives `executor`'s memory (memoryFields).
  MetricsSink(const std::string &metricsPath, std::string plotPath,
              const std::vector<EpochMetrics> &history,
              const rt::Executor *executor = nullptr);
  /// After an epoch: appends `epoch` to the metrics file and redraws the
  /// plot of `history` (the complete epochs, `epoch` among them when
  /// `complete`), then `epoch` if it is not, on an axis of `totalEpochs`.
  void record(const EpochMetrics &epoch,
              const std::vector<EpochMetrics> &history, bool complete,
              int64_t totalEpochs);

private:
  void append(const EpochMetrics &epoch, const std::string &more = "");

  io::AppendFile metrics;
  std::string plotPath;
  const rt::Executor *executor;
  /// Each device's name and the plan's prediction for it, read once.
  std::vector<std::pair<std::string, int64_t>> planned;
};

/// `, "memory": [...], "peak_rss_bytes": N`: for each device this process
/// drives, the plan's prediction (`planned_bytes`: its peak and its
/// inputs, as `dpc inspect` reads them) beside what the runtime allocated
/// there at most (`allocated_peak_bytes`, and `host_peak_bytes` of a GPU's
/// page-locked host memory), what the kernel libraries held for it at most
/// on their own (`library_peak_bytes`), and the process's peak resident memory
/// (VmHWM: everything else too, the data set included; 0 where unknown).
/// `planned`: each device's name and the plan's predicted bytes, in the
/// plan's device order.
std::string
memoryFields(const rt::Executor &executor,
             const std::vector<std::pair<std::string, int64_t>> &planned);

/// --trace: the first kTracedSteps train steps, as a Chrome trace, and a
/// line on how much of the communication they hid behind compute.
class TraceRecorder {
public:
  static constexpr int64_t kTracedSteps = 20;

  /// Starts tracing `executor` unless `path` is empty; `out` and `quiet`
  /// are where the summary line goes and whether it does.
  TraceRecorder(const std::string &path, rt::Executor &executor,
                std::ostream &out, bool quiet);
  ~TraceRecorder();
  /// After each train step: writes the trace once it holds kTracedSteps.
  void afterStep();
  /// Writes the trace if it is still recording (a run shorter than
  /// kTracedSteps); then records nothing more.
  void finish();

private:
  std::string path;
  rt::Executor &executor;
  std::ostream &out;
  bool quiet;
  std::unique_ptr<rt::Tracer> tracer;
  int64_t tracedSteps = 0;
};

/// --checkpoint and --checkpoint-every: when the training state is saved,
/// by rank 0 alone.
class CheckpointPolicy {
public:
  /// For a run of `options` that starts from `state` (a resumed run's
  /// checkpoint counts as saved); `leader`: whether this rank writes;
  /// `collective`: whether capturing the state is a collective (training
  /// state sharded over the ranks), which every rank then joins.
  CheckpointPolicy(const RunOptions &options, bool leader,
                   const TrainingState &state, bool collective = false);
  /// The checkpoint file; empty without --checkpoint.
  const std::string &getPath() const { return path; }
  /// Whether this rank writes checkpoints.
  bool isEnabled() const { return writes; }
  /// Whether this rank takes part in saving them (writes, or joins the
  /// gathering of sharded state).
  bool isSaving() const { return saving; }
  /// --checkpoint-every: whether to save after a step that brought the run
  /// to `stepsDone` steps and its epoch of `stepsPerEpoch` to `step` (an
  /// epoch's end saves on its own).
  bool isDueMidEpoch(int64_t stepsDone, int64_t step,
                     int64_t stepsPerEpoch) const;
  /// Captures `executor`'s training state into `state` and, on the
  /// leader, saves it.
  void save(const rt::Executor &executor, TrainingState &state);
  /// At the end of a run: saves `state` unless the last checkpoint holds
  /// it already (a run that --steps stopped mid-epoch keeps its place).
  void saveIfBehind(const rt::Executor &executor, TrainingState &state);

private:
  std::string directory, path;
  bool writes, saving;
  int64_t every;
  /// stepsDone of the last checkpoint on disk (-1: none yet).
  int64_t savedAt;
};

/// "after epoch E (step S)" or, mid-epoch, "at step S (epoch E, batch B of
/// N)": where a checkpoint stands.
std::string describePosition(const TrainingState &state, int64_t stepsPerEpoch);

/// What a run writes besides its result, rank 0's alone: progress to
/// `out`, the metrics file and plot, the trace and the checkpoints.
struct RunSinks {
  /// `local`: the run's options as this rank sees them (empty paths and
  /// quiet on all but rank 0).
  RunSinks(const RunOptions &options, const RunOptions &local, bool leader,
           rt::Executor &executor, const TrainingState &state,
           std::ostream &out, bool interactive);

  std::ostream &out;
  MetricsSink metrics;
  TraceRecorder trace;
  Progress progress;
  CheckpointPolicy checkpoints;
};

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_RUNSINKS_H
