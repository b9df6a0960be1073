//===- LocalReplicas.cpp - one process drives every replica ---------------===//
//
// DataParallel's model: this process makes every device of the plan and a
// communicator over them (in-process threads for CPU devices, NCCL for
// GPUs). A batch input takes the global rows and each replica gets its
// contiguous part; each device holds its own copy of the training state,
// made equal from the lowest device's before each run (the buffers) and
// after a failed one (all of it); scalar outputs are read from every
// replica.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/BatchSplit.h"
#include "runtime/exec/ReplicaDriver.h"
#include "runtime/exec/TrainingState.h"

#include <exception>
#include <stdexcept>

namespace dpc::rt {

namespace {

class LocalReplicas : public ReplicaDriver {
public:
  LocalReplicas(Replicas &replicas, const DeviceFactory &factory);

  comm::Communicator *getCommunicator(int device) const override {
    return communicators[device].get();
  }
  Executor::RowRanges
  getLocalRows(const StepGroup &, int64_t batch,
               const std::vector<int64_t> &) const override {
    return {{0, batch}};
  }
  std::vector<int64_t>
  getHeldRows(const StepGroup &, int64_t,
              const std::vector<int64_t> &micro) const override {
    return micro;
  }
  void bindBatchInput(StepGroup &group, const plan::Tensor &tensor,
                      std::string_view name, const uint8_t *data,
                      size_t bytes) override;
  int64_t getBoundRows(const StepGroup &, const std::vector<int64_t> &,
                       int64_t batch) const override {
    return batch; // the global rows
  }
  void shareState(TrainingState &state) override {
    // Batch-norm running statistics (and any other Buffer) may drift apart
    // without sync-bn: DDP's broadcast_buffers.
    if (replicas.devices.size() > 1)
      state.copyPrimaryToReplicas(true);
  }
  void onFinished(StepGroup &group, TrainingState &state,
                  bool failed) override {
    // Replicas may have stopped at different points: make them equal.
    if (failed && group.replicas.size() > 1)
      state.copyPrimaryToReplicas(false);
  }
  std::vector<double> getReplicaScalars(int step, StepGroup &,
                                        std::string_view name,
                                        const plan::Tensor &tensor,
                                        int64_t count) override {
    return replicas.readScalars(step, name, tensor, count);
  }

private:
  Replicas &replicas;
  std::vector<std::unique_ptr<comm::Communicator>> communicators;
};

LocalReplicas::LocalReplicas(Replicas &replicas, const DeviceFactory &factory)
    : replicas(replicas) {
  const plan::LoadedPlan &plan = *replicas.plan;
  int numDevices = static_cast<int>(plan->devices()->size());
  DeviceOptions options;
  options.numLocalDevices = numDevices;
  options.numPlanDevices = numDevices;
  for (int d = 0; d < numDevices; ++d) {
    std::string name = plan->devices()->Get(d)->name()->str();
    try {
      replicas.devices.push_back(factory(name, options));
    } catch (const std::exception &error) {
      plan.fail(error.what());
    }
  }
  // In-process for CPU devices, NCCL for GPUs.
  std::vector<Device *> members;
  for (const auto &device : replicas.devices)
    members.push_back(device.get());
  try {
    communicators = createCommunicators(members);
  } catch (const std::exception &error) {
    plan.fail(error.what());
  }
}

void LocalReplicas::bindBatchInput(StepGroup &group, const plan::Tensor &tensor,
                                   std::string_view name, const uint8_t *data,
                                   size_t bytes) {
  // The global rows, each replica's part to its device.
  int64_t rowBytes = rowBytesOf(tensor);
  if (rowBytes == 0)
    throw std::invalid_argument("input '" + std::string(name) +
                                "' has empty rows");
  int64_t rows = static_cast<int64_t>(bytes) / rowBytes;
  if (static_cast<int64_t>(bytes) % rowBytes != 0 || rows > group.maxBatch)
    throw std::invalid_argument("input '" + std::string(name) +
                                "' takes up to " +
                                std::to_string(group.maxBatch) + " rows of " +
                                std::to_string(rowBytes) + " bytes, got " +
                                std::to_string(bytes) + " bytes");
  std::vector<int64_t> split = splitBatch(group.shares, rows);
  for (size_t r = 0; r < group.replicas.size(); ++r) {
    ReplicaStep &replica = *replicas.steps[group.replicas[r]];
    int t = findBinding(replica.step->inputs(), name);
    if (t >= 0)
      replicas.upload(replica, t, data, split[r] * rowBytes);
    data += split[r] * rowBytes;
  }
  group.boundRows[std::string(name)] = rows;
}

} // namespace

std::unique_ptr<ReplicaDriver>
createLocalReplicas(Replicas &replicas, const DeviceFactory &factory) {
  return std::make_unique<LocalReplicas>(replicas, factory);
}

} // namespace dpc::rt
