//===- Executor.h - runs the steps of a loaded plan -------------*- C++ -*-===//
//
// The executor owns the memory of a plan -- one allocation per persistent
// tensor (initialized from the plan), one arena per device (its steps take
// turns in it, so a step's outputs last until the next run on its device),
// two buffers per input (one that a run reads, one that the caller fills
// meanwhile) -- and the streams and events of every step. run() enqueues a
// step's instructions on its streams, each one resolved to a KernelCall at
// the run-time batch, in an order where every event is recorded before it
// is waited for, and then waits for all streams. It is generic over
// Device/Stream/Event: the CPU and a CUDA backend share it.
//
// Data parallelism, one process driving every device of the plan: steps of
// the same name on different devices are the replicas of one step, and the
// `step` handle of every method below stands for all of them (any replica's
// index names the step). run() splits the global batch over the replicas
// (BatchSplit.h), runs them all concurrently and waits for all of them;
// each replica takes part in collectives through its device's communicator
// (rank = device index), and each device holds its own copy of the training
// state (PersistentTensor.device). What the caller sees is global:
//
//  - setInput: a batch input takes the global rows, and each replica gets
//    its contiguous part; any other input goes to every replica.
//  - getOutput: a batch output is every replica's rows concatenated in row
//    order; any other output is the first replica's (that binds it).
//  - getScalarOutput: the sum over the replicas of a one-element output
//    (losses are already weighted by the global batch, counts add up), or
//    the sum of the entries of a gathered one-entry-per-replica vector.
//    getReplicaScalarOutputs gives the per-replica values.
//  - The training state starts equal on every device (the lowest device's
//    copy is copied to the others, as DDP broadcasts rank 0's state), and
//    writePersistent writes every copy. Batch-norm running statistics (and
//    any other Buffer) may drift apart without sync-bn: before each run the
//    lowest device's buffers are copied to the others (DDP's
//    broadcast_buffers). After a failed step the replicas are made equal
//    again from the lowest device.
//
// Data parallelism, one process per device (rank mode: `dpc launch`,
// torchrun, mpirun): the executor is given this process's host communicator
// (Gloo or MPI), of rank R in a world of as many ranks as the plan has
// devices, and drives only device R -- its replica of each step and its
// copy of the training state. Collectives in device memory (all-reduce
// kernels, the state broadcast) go through the device's communicator:
// the host one for a CPU device, NCCL for a GPU (made through the host one,
// createRankCommunicator); host-side ones (the scalar outputs) through the
// host communicator. A plan must not mix CPU and GPU devices here. The same
// calls keep their global meaning, with these differences:
//
//  - setInput: a batch input takes only this rank's rows of the global
//    batch, getLocalRows(step, batch) of them, concatenated (the other
//    ranks bind theirs; with gradient accumulation, its rows of every
//    micro-batch); run(step, batch) still takes the global batch.
//  - getScalarOutput / getReplicaScalarOutputs: global, through one
//    collective per run that gathers every scalar output at once (so every
//    rank must ask for scalars after the same runs); values and their sum
//    are bit for bit those of the one-process run.
//  - getOutput / getReplicaOutput: this rank's replica only.
//  - Training state: one copy, on device R. Before the first run rank 0's
//    state is broadcast to every rank, and before every run its buffers
//    (DDP's broadcast_buffers), so that a rank that initialized or restored
//    differently still starts from rank 0's state.
//
// The executor also holds the plan's optimizer step count: it goes up by
// one before each run of a step that updates parameters (SGD's first step
// and AdamW's bias correction use it), and is saved with the training state.
// When that step has an i64 scalar input of role OptimizerStep (AdamW's step
// operand), the executor binds the count to it before the run.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_EXECUTOR_H
#define DPC_RUNTIME_EXEC_EXECUTOR_H

#include "runtime/comm/Communicator.h"
#include "runtime/device/Device.h"
#include "runtime/plan/PlanLoader.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dpc::rt {

class MicroBatchRunner;
class ReplicaDriver;
class Replicas;
class Tracer;
class TrainingState;

using DeviceFactory = std::function<std::unique_ptr<Device>(
    const std::string &name, const DeviceOptions &options)>;

/// This process's part in a process-per-device run (see above).
struct ProcessRank {
  /// Of rank R (the plan's device R) in a world of one rank per device:
  /// the host communicator (Gloo, MPI).
  std::unique_ptr<comm::Communicator> communicator;
  /// Ranks on this host: they share its cores.
  int localWorldSize = 1;
  /// This rank's index on its host (LOCAL_RANK), -1 for R: which GPU a
  /// plan's cuda:K is on this host (see getRankDeviceName).
  int localRank = -1;
  /// How long waits for a GPU communicator may take (--timeout).
  std::chrono::milliseconds timeout{300000};
};

/// Rank mode: the device rank `rank` (`localRank` on its host) creates for
/// the plan's device `name`. A plan's cuda:K counts the GPUs of all hosts
/// in rank order, so on this host it is GPU LOCAL_RANK + (K - R): for the
/// usual plan (cuda:0, cuda:1, ... for ranks 0, 1, ...) rank R drives
/// cuda:LOCAL_RANK, as torchrun's workers do, and on one host cuda:K itself.
/// Other names are kept.
std::string getRankDeviceName(const std::string &name, int rank, int localRank);

class Executor {
public:
  /// Creates the plan's devices (by default with createDevice), allocates
  /// and initializes its memory, and an in-process communicator over the
  /// devices; with `rank`'s communicator, only device R and its memory (rank
  /// mode, with its device's communicator). Throws plan::PlanError naming
  /// the plan for a device this runtime lacks, a world size other than the
  /// plan's device count, or (rank mode) a plan mixing CPU and GPU devices;
  /// comm::CommError when the GPU communicator cannot be made.
  explicit Executor(std::shared_ptr<const plan::LoadedPlan> plan,
                    const DeviceFactory &factory = createDevice,
                    ProcessRank rank = {});
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  const plan::LoadedPlan &getPlan() const { return *plan; }
  /// The step of role `role` (its replica on the lowest device), or -1.
  int findStep(plan::StepRole role) const;
  /// The global batch step `step` runs at most: its replicas' compiled
  /// batches together.
  int64_t getMaxBatch(int step) const;

  /// The replicas of `step`: their count, and the plan index of replica
  /// `replica` (ordered by device).
  int getNumReplicas(int step) const;
  int getReplicaStep(int step, int replica) const;
  /// The rows each replica ran in the last run of `step`.
  const std::vector<int64_t> &getLastSplit(int step) const;

  /// Rank mode: this process's device (its rank); -1 otherwise.
  int getLocalDevice() const;
  /// The rows of a global batch of `batch` rows that this process binds,
  /// as {first row, count} ranges in order: all of them outside rank mode;
  /// with gradient accumulation, one range per micro-batch.
  using RowRanges = std::vector<std::pair<int64_t, int64_t>>;
  RowRanges getLocalRows(int step, int64_t batch) const;

  /// The tensor bound to input/output `name` of `step` (in the first
  /// replica that binds it), or null.
  const plan::Tensor *findInput(int step, std::string_view name) const;
  const plan::Tensor *findOutput(int step, std::string_view name) const;
  /// The name of `step`'s input/output of `role` (the runtime finds the
  /// plan's labels, learning rate, loss, ... by role, never by name), or
  /// empty when it has none: every call below that takes a name takes it.
  std::string_view getInputName(int step, plan::InputRole role) const;
  std::string_view getOutputName(int step, plan::OutputRole role) const;
  const plan::Tensor *findInput(int step, plan::InputRole role) const {
    std::string_view name = getInputName(step, role);
    return name.empty() ? nullptr : findInput(step, name);
  }
  const plan::Tensor *findOutput(int step, plan::OutputRole role) const {
    std::string_view name = getOutputName(step, role);
    return name.empty() ? nullptr : findOutput(step, name);
  }
  /// The input/output of `role`: std::invalid_argument where there is none.
  std::string_view requireInputName(int step, plan::InputRole role) const;
  std::string_view requireOutputName(int step, plan::OutputRole role) const;

  /// Copies `bytes` into input `name` of `step` (at most its compiled size;
  /// with several replicas a batch input takes whole rows, split like the
  /// batch). Throws std::invalid_argument for an unknown name or too many
  /// bytes.
  void setInput(int step, std::string_view name, const void *data,
                size_t bytes);
  void setInput(int step, plan::InputRole role, const void *data,
                size_t bytes) {
    setInput(step, requireInputName(step, role), data, bytes);
  }
  /// Runs `step` on `batch` global rows (1..getMaxBatch, any batch for a
  /// step without batch tensors) on every replica and waits for them.
  /// With gradient accumulation (the plan's grad_accum K > 1), the train
  /// step takes up to K times its replicas' batch: its batch inputs are
  /// held on the host, split like torch.chunk into at most K micro-batches,
  /// run by the AccumFirst and AccumStep steps and last the train step,
  /// every loss averaged over the whole `batch`; its scalar outputs are then
  /// summed over the micro-batches.
  /// With several replicas, batch inputs must have been bound with `batch`
  /// rows. Throws std::runtime_error if a kernel fails.
  void run(int step, int64_t batch);
  /// run() in two halves, so that the host overlaps a run: start() returns
  /// once the run is enqueued, and until finish() the caller may bind the
  /// next run's inputs -- inputs are double-buffered, and each setInput
  /// copies into page-locked host memory and uploads from there on its own
  /// stream, which the next run's streams wait for. Reading outputs or the
  /// training state, or starting any step, before finish() throws
  /// std::logic_error: one run at a time (a device's steps share its
  /// arena). With gradient accumulation, start() runs every micro-batch but
  /// the last. finish() throws what run() throws.
  void start(int step, int64_t batch);
  void finish(int step);
  /// Copies output `name` of the last run of `step`, at its batch, into
  /// `data` (`bytes` must be what getOutputBytes says): see above.
  void getOutput(int step, std::string_view name, void *data,
                 size_t bytes) const;
  size_t getOutputBytes(int step, std::string_view name) const;
  void getOutput(int step, plan::OutputRole role, void *data,
                 size_t bytes) const {
    getOutput(step, requireOutputName(step, role), data, bytes);
  }
  size_t getOutputBytes(int step, plan::OutputRole role) const {
    return getOutputBytes(step, requireOutputName(step, role));
  }
  /// The global value of a scalar output, converted to double: see above.
  double getScalarOutput(int step, std::string_view name) const;
  double getScalarOutput(int step, plan::OutputRole role) const {
    return getScalarOutput(step, requireOutputName(step, role));
  }
  /// Each replica's value of a scalar output (one entry per replica).
  std::vector<double> getReplicaScalarOutputs(int step,
                                              std::string_view name) const;
  /// Output `name` of one replica, as it computed it.
  void getReplicaOutput(int step, int replica, std::string_view name,
                        void *data, size_t bytes) const;
  size_t getReplicaOutputBytes(int step, int replica,
                               std::string_view name) const;

  /// Training state: persistent tensors by index into Plan.persistent (one
  /// per device holding a copy).
  size_t getNumPersistent() const;
  size_t getPersistentBytes(size_t index) const;
  /// Reads copy `index`.
  void readPersistent(size_t index, void *data) const;
  /// Writes `data` to every copy of tensor `index` (on every device).
  void writePersistent(size_t index, const void *data);
  /// Rank mode: the whole of the sharded tensor whose shard on this
  /// process's device is persistent tensor `index`, every rank's range
  /// gathered into `whole` (host memory) through the device's
  /// communicator. A collective: every rank calls it for the same tensors
  /// in the same order. Throws std::runtime_error on a GPU device.
  void gatherShard(size_t index, void *whole) const;
  /// One copy of each persistent tensor -- the one on the lowest device --
  /// in plan order: what checkpoints and initializers use.
  const std::vector<size_t> &getPrimaryPersistent() const;
  /// The persistent tensors (primary copies, indices into Plan.persistent)
  /// that the optimizer updates of `step` check as they write them: on a
  /// device that checks its updates (Device::checksUpdates), NaN or
  /// infinity written into one of them during a run is then known from
  /// wroteNonFinite() without reading the tensor. Sorted; empty when the
  /// device does not check.
  std::vector<size_t> getCheckedPersistent(int step) const;
  /// Whether the last run of `step` wrote NaN or infinity into one of the
  /// tensors getCheckedPersistent names.
  bool wroteNonFinite(int step) const;
  int64_t getOptimizerStep() const;
  void setOptimizerStep(int64_t step);
  /// The seed of dropout's masks (KernelMath.h): with the optimizer step
  /// and each row's place in the global batch, it decides every mask, so
  /// a resumed run with the same seed draws what an uninterrupted one does.
  void setRandomSeed(uint64_t seed);

  /// Records when every kernel runs, on which device and stream, from now
  /// on (null: stop). The tracer must outlive the runs it records.
  void setTracer(Tracer *newTracer);
  /// Device `device`'s Device::getRunTimeChoices (none for another rank's).
  std::vector<std::string> getRunTimeChoices(int device) const;
  /// What device `device` holds in DeviceBuffers, now and at most (none for
  /// another rank's): the measured side of the plan's memory prediction.
  std::optional<Device::MemoryUse> getMemoryUse(int device) const;

private:
  std::shared_ptr<const plan::LoadedPlan> plan;
  // Declared in the order they are made; destroyed in ~Executor.
  std::unique_ptr<Replicas> replicas;
  std::unique_ptr<ReplicaDriver> driver;
  std::unique_ptr<TrainingState> state;
  std::unique_ptr<MicroBatchRunner> microBatches; // grad_accum > 1 only
};

} // namespace dpc::rt

#endif // DPC_RUNTIME_EXEC_EXECUTOR_H
