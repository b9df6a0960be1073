//===- ReplicaDriver.h - what the process model decides ---------*- C++ -*-===//
//
// Data parallelism runs in one of two process models (Executor.h): one
// process drives every replica (LocalReplicas.cpp), or each process drives
// the replica on its own device (RankReplica.cpp). A driver makes the
// devices and communicators of its model and answers, for Replicas, the
// questions whose answers differ: which rows of a batch this process binds,
// how the training state stays equal, and how scalar outputs are gathered.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_REPLICADRIVER_H
#define DPC_RUNTIME_EXEC_REPLICADRIVER_H

#include "runtime/exec/Executor.h"
#include "runtime/exec/Replicas.h"

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace dpc::rt {

class TrainingState;

class ReplicaDriver {
public:
  virtual ~ReplicaDriver() = default;

  /// The communicator for collectives in device `device`'s memory.
  virtual comm::Communicator *getCommunicator(int device) const = 0;
  /// The rows of `group`'s global batch of `batch` rows that this process
  /// binds, of each of its micro-batches `micro` (Executor::getLocalRows).
  virtual Executor::RowRanges
  getLocalRows(const StepGroup &group, int64_t batch,
               const std::vector<int64_t> &micro) const = 0;
  /// How many rows of each micro-batch this process holds.
  virtual std::vector<int64_t>
  getHeldRows(const StepGroup &group, int64_t batch,
              const std::vector<int64_t> &micro) const = 0;
  /// Binds the global rows of batch input `name` (bound to `tensor`) to
  /// `group`'s replicas, of which there are several.
  virtual void bindBatchInput(StepGroup &group, const plan::Tensor &tensor,
                              std::string_view name, const uint8_t *data,
                              size_t bytes) = 0;
  /// The rows the batch inputs of a run of `batch` rows, split `split`
  /// over the replicas, must have been bound with.
  virtual int64_t getBoundRows(const StepGroup &group,
                               const std::vector<int64_t> &split,
                               int64_t batch) const = 0;
  /// Before every run: makes the copies of the training state agree.
  virtual void shareState(TrainingState &state) = 0;
  /// After replica `step` prepared the calls of its next slot.
  virtual void onPrepared(ReplicaStep &step) { (void)step; }
  /// After `group`'s replicas finished a run (`failed`: one of them threw).
  virtual void onFinished(StepGroup &group, TrainingState &state,
                          bool failed) = 0;
  /// Each replica's value of scalar output `name` (`count` entries of
  /// `tensor`) of `step`'s last run.
  virtual std::vector<double> getReplicaScalars(int step, StepGroup &group,
                                                std::string_view name,
                                                const plan::Tensor &tensor,
                                                int64_t count) = 0;
};

/// One process drives every device of the plan: makes them with `factory`
/// into `replicas`, and an in-process (or NCCL) communicator over them.
std::unique_ptr<ReplicaDriver>
createLocalReplicas(Replicas &replicas, const DeviceFactory &factory);
/// This process drives device `rank`'s replicas: checks the world, makes
/// that device with `factory` into `replicas` and its communicator.
std::unique_ptr<ReplicaDriver> createRankReplica(Replicas &replicas,
                                                 const DeviceFactory &factory,
                                                 ProcessRank rank);

} // namespace dpc::rt

#endif // DPC_RUNTIME_EXEC_REPLICADRIVER_H
