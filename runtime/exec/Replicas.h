//===- Replicas.h - the replicas of a plan's steps, run together -*- C++
//-*-===//
//
// The steps of the same name on different devices are the replicas of one
// step (a StepGroup). Replicas holds every replica this process drives and
// what they share -- the devices, one arena per device (its steps take
// turns in it), one upload stream per device -- and runs a group: binds its
// inputs, starts every replica, waits for them, reads their outputs. What
// depends on the process model (which replicas are here, how the batch and
// the training state are shared, how scalars are gathered) it asks of its
// ReplicaDriver.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_REPLICAS_H
#define DPC_RUNTIME_EXEC_REPLICAS_H

#include "runtime/exec/IndexInputChecks.h"
#include "runtime/exec/ReplicaStep.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dpc::rt {

class ReplicaDriver;
class Tracer;
class TrainingState;

/// The replicas of one step, by device.
struct StepGroup {
  std::string name;
  std::vector<int> replicas; // plan step indices
  std::vector<int64_t> shares;
  int64_t maxBatch = 0;
  bool updatesParameters = false;
  std::vector<int64_t> lastSplit;
  /// Rows last bound to each batch input (several replicas only).
  std::map<std::string, int64_t, std::less<>> boundRows;
  /// Inputs a kernel reads as class indices (a Labels role) or as table
  /// rows (an Indices role), with how many classes or rows there are.
  IndexBounds indexBounds;
  /// The train step of a plan with gradient accumulation (MicroBatchRunner),
  /// and the scalar outputs of its micro-batches before the last.
  bool accumulates = false;
  std::map<std::string, double, std::less<>> earlierScalars;
  /// Rank mode: every scalar output of the last run, gathered at once.
  std::map<std::string, std::vector<double>, std::less<>> scalars;
  bool scalarsGathered = false;
};

/// Output `tensor` as scalars, if it is one (Executor::getScalarOutput):
/// the tensor and its entry count, or {null, 0}.
std::pair<const plan::Tensor *, int64_t> asScalar(const plan::Tensor *tensor,
                                                  size_t numReplicas);

class Replicas {
public:
  explicit Replicas(std::shared_ptr<const plan::LoadedPlan> plan)
      : plan(std::move(plan)) {}
  ~Replicas() { stop(); }
  /// Stops the streams, before the memory their work points to is freed.
  void stop();

  /// Once the devices (null: another rank's) are made: the arenas, upload
  /// streams and replicas, grouped by step, with `driver` for what the
  /// process model decides.
  void allocate(const TrainingState &state, ReplicaDriver &driver);

  ReplicaStep &getStep(int step) const;
  StepGroup &getGroup(int step) const;
  /// Whether this process drives plan step `planStep`.
  bool isLocal(int planStep) const { return steps[planStep] != nullptr; }
  /// The index in `group` of this process's first replica.
  size_t getLocalReplica(const StepGroup &group) const;
  /// Throws std::logic_error while a run is in flight.
  void checkIdle(std::string_view what) const;

  /// The tensor bound to input (or output) `name` in the first replica of
  /// `group` that binds it, or null.
  const plan::Tensor *findBindingOf(const StepGroup &group,
                                    std::string_view name, bool input) const;
  /// The input of role `role` in the first replica of `group` that binds
  /// one, and its tensor, or nulls.
  std::pair<const plan::Binding *, const plan::Tensor *>
  findInputOfRole(const StepGroup &group, plan::InputRole role) const;
  /// Copies the global rows of a batch input (or any other input) to the
  /// replicas of `group`.
  void bindInput(StepGroup &group, const plan::Tensor &binding,
                 std::string_view name, const void *data, size_t bytes);
  /// Copies `bytes` into input tensor `tensor` of `replica`.
  void upload(ReplicaStep &replica, int tensor, const void *data, size_t bytes);

  /// Starts every replica of `step` on `batch` rows, losses averaged over
  /// `lossBatch`, the first at row `firstRow` of the update's batch (a
  /// micro-batch's offset); finish waits for them.
  void start(int step, int64_t batch, int64_t lossBatch, int64_t firstRow);
  void finish(StepGroup &group);

  size_t getReplicaOutputBytes(int step, int replica,
                               std::string_view name) const;
  void getReplicaOutput(int step, int replica, std::string_view name,
                        void *data, size_t bytes) const;
  /// Output `name` (`count` scalars) of every replica of `step` binding it,
  /// in replica order; another rank's replicas' entries are 0.
  std::vector<double> readScalars(int step, std::string_view name,
                                  const plan::Tensor &tensor,
                                  int64_t count) const;
  std::vector<std::string> getScalarOutputNames(const StepGroup &group) const;
  /// Executor::getReplicaScalarOutputs and getScalarOutput.
  std::vector<double> getReplicaScalarOutputs(int step, std::string_view name);
  double getScalarOutput(int step, std::string_view name);

  std::shared_ptr<const plan::LoadedPlan> plan;
  TrainingState *state = nullptr;
  ReplicaDriver *driver = nullptr;
  Tracer *tracer = nullptr;
  std::vector<std::unique_ptr<Device>> devices; // null: another rank's
  std::vector<DeviceBuffer> arenas; // one per device, shared by its steps
  std::vector<std::unique_ptr<Stream>> uploadStreams; // per device: inputs
  std::vector<std::unique_ptr<ReplicaStep>> steps;    // null: another rank's
  std::vector<size_t> groupOf;                        // by plan step
  std::vector<std::unique_ptr<StepGroup>> groups;
  StepGroup *running = nullptr; // started and not finished
  int localDevice = -1;         // rank mode: this process's device

private:
  void groupSteps();
};

} // namespace dpc::rt

#endif // DPC_RUNTIME_EXEC_REPLICAS_H
