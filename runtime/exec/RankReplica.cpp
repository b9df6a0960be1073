//===- RankReplica.cpp - one process per device ---------------------------===//
//
// DDP's model (`dpc launch`, torchrun, mpirun): this process is rank R of a
// world of one rank per device and drives device R alone. Collectives in
// device memory go through the device's communicator (the host one for a
// CPU device, NCCL made through it for a GPU), the scalar outputs through
// the host communicator. A batch input takes this rank's rows; rank 0's
// training state is broadcast before the first run and its buffers before
// every run; scalar outputs are gathered in one collective per run, or ride
// on one of the run's all-reduces (ScalarRider).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelShapes.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/exec/BatchSplit.h"
#include "runtime/exec/ReplicaDriver.h"
#include "runtime/exec/StreamOrder.h"
#include "runtime/exec/TrainingState.h"

#include <algorithm>
#include <array>
#include <exception>
#include <functional>
#include <map>
#include <stdexcept>

namespace dpc::rt {

std::string getRankDeviceName(const std::string &name, int rank,
                              int localRank) {
  const std::string prefix = "cuda:";
  std::string index = name.substr(std::min(name.size(), prefix.size()));
  if (localRank < 0 || localRank == rank || name.rfind(prefix, 0) != 0 ||
      index.empty() || index.size() > 6 ||
      index.find_first_not_of("0123456789") != std::string::npos)
    return name;
  int ordinal = localRank + (std::stoi(index) - rank);
  return ordinal < 0 ? name : prefix + std::to_string(ordinal);
}

namespace {

/// Rank mode on a CPU device: a step's scalar outputs (loss, correct
/// counts) gathered by one of its sum all-reduces instead of by a
/// collective of their own after the run, which costs a round trip between
/// the processes and a wait on the main thread every step. It passes the
/// all-reduce through with one more buffer: the scalars as f64, this rank's
/// entries filled and the others 0, which the sum gathers (x + 0 is x).
class ScalarRider : public comm::Communicator {
public:
  ScalarRider(comm::Communicator &inner, size_t count,
              std::function<void(double *)> fill)
      : inner(inner), count(count), fill(std::move(fill)) {}
  int getRank() const override { return inner.getRank(); }
  int getWorldSize() const override { return inner.getWorldSize(); }
  void allReduce(const std::vector<comm::ReduceBuffer> &buffers,
                 plan::ReduceOp op) override {
    values.assign(count, 0.0);
    fill(values.data());
    all = buffers;
    all.push_back({values.data(), int64_t(count), plan::DType::F64});
    inner.allReduce(all, op);
    gathered = true;
  }
  void broadcast(const std::vector<comm::ReduceBuffer> &buffers,
                 int root) override {
    inner.broadcast(buffers, root);
  }
  // Straight to the inner communicator: the base class's versions would
  // reach it through allReduce above, with the scalars riding along.
  void reduceScatter(const std::vector<comm::ShardedBuffer> &buffers,
                     plan::ReduceOp op) override {
    inner.reduceScatter(buffers, op);
  }
  void allGather(const std::vector<comm::ShardedBuffer> &buffers) override {
    inner.allGather(buffers);
  }
  /// Whether the last run gathered the scalars (into `values`); cleared by
  /// whoever reads them.
  bool gathered = false;
  std::vector<double> values;

private:
  comm::Communicator &inner;
  size_t count;
  std::function<void(double *)> fill;
  std::vector<comm::ReduceBuffer> all;
};

/// Where each scalar output of a group lies in the f64 vector that gathers
/// them all (its entries [begin, end); replica k's block of `count` at
/// begin + blockOf[k] x count, -1: none).
struct ScalarField {
  std::string name;
  const plan::Tensor *tensor;
  int64_t count;
  size_t begin, end;
  std::vector<int64_t> blockOf;
};

/// "cuda" for "cuda:1".
std::string_view kindOf(std::string_view name) {
  return name.substr(0, name.find(':'));
}

/// One device kind. (A GPU rank's communicator is NCCL, made with every
/// rank; a CPU rank's is the host one.)
void checkOneDeviceKind(const plan::LoadedPlan &plan) {
  const auto &names = *plan.get().devices();
  std::string_view first = names.Get(0)->name()->string_view();
  for (const plan::Device *device : names)
    if (kindOf(device->name()->string_view()) != kindOf(first))
      plan.fail("devices '" + std::string(first) + "' and '" +
                device->name()->str() +
                "': one process per device runs plans of one device kind, "
                "CPU or GPU, not both");
}

class RankReplica : public ReplicaDriver {
public:
  RankReplica(Replicas &replicas, const DeviceFactory &factory,
              ProcessRank rank);

  comm::Communicator *getCommunicator(int device) const override {
    // A CPU device: its memory is host memory.
    if (device == replicas.localDevice && !communicator)
      return hostCommunicator.get();
    return device == replicas.localDevice ? communicator.get() : nullptr;
  }
  Executor::RowRanges
  getLocalRows(const StepGroup &group, int64_t batch,
               const std::vector<int64_t> &micro) const override;
  std::vector<int64_t>
  getHeldRows(const StepGroup &group, int64_t batch,
              const std::vector<int64_t> &micro) const override;
  void bindBatchInput(StepGroup &group, const plan::Tensor &tensor,
                      std::string_view name, const uint8_t *data,
                      size_t bytes) override;
  int64_t getBoundRows(const StepGroup &group,
                       const std::vector<int64_t> &split,
                       int64_t batch) const override {
    return group.replicas.size() > 1 ? split[replicas.getLocalReplica(group)]
                                     : batch;
  }
  void shareState(TrainingState &state) override;
  void onPrepared(ReplicaStep &step) override;
  void onFinished(StepGroup &group, TrainingState &state, bool failed) override;
  std::vector<double> getReplicaScalars(int step, StepGroup &group,
                                        std::string_view name,
                                        const plan::Tensor &tensor,
                                        int64_t count) override;

private:
  std::vector<ScalarField> getScalarFields(const StepGroup &group) const;
  /// `group`'s scalar outputs from their gathered vector.
  void storeGatheredScalars(StepGroup &group,
                            const std::vector<double> &all) const;

  Replicas &replicas;
  /// NCCL on a GPU, null on a CPU device (getCommunicator); the host
  /// communicator, Gloo/MPI, for host memory.
  std::unique_ptr<comm::Communicator> communicator;
  std::unique_ptr<comm::Communicator> hostCommunicator;
  bool stateShared = false; // rank 0's state broadcast
  /// Per plan step and slot, on a CPU device: the all-reduce the scalar
  /// outputs ride on (null: they are gathered after the run).
  std::map<int, std::array<std::unique_ptr<ScalarRider>, 2>> riders;
};

RankReplica::RankReplica(Replicas &replicas, const DeviceFactory &factory,
                         ProcessRank rank)
    : replicas(replicas) {
  const plan::LoadedPlan &plan = *replicas.plan;
  int numDevices = static_cast<int>(plan->devices()->size());
  int worldSize = rank.communicator->getWorldSize();
  if (worldSize != numDevices)
    plan.fail("the plan has " + std::to_string(numDevices) +
              " device(s), but WORLD_SIZE is " + std::to_string(worldSize) +
              " (a process-per-device run needs one rank per device)");
  int local = replicas.localDevice = rank.communicator->getRank();
  DeviceOptions options;
  options.numLocalDevices = std::max(1, rank.localWorldSize);
  options.numPlanDevices = numDevices;
  checkOneDeviceKind(plan);
  for (int d = 0; d < numDevices; ++d) {
    if (d != local) {
      replicas.devices.push_back(nullptr); // another rank's
      continue;
    }
    std::string name = getRankDeviceName(plan->devices()->Get(d)->name()->str(),
                                         local, rank.localRank);
    try {
      replicas.devices.push_back(factory(name, options));
    } catch (const std::exception &error) {
      plan.fail(error.what());
    }
  }
  // Every rank gets here with a device of the same kind, so that all or
  // none take part in making a GPU communicator (a host collective).
  hostCommunicator = std::move(rank.communicator);
  communicator = createRankCommunicator(*replicas.devices[local],
                                        *hostCommunicator, rank.timeout);
}

Executor::RowRanges
RankReplica::getLocalRows(const StepGroup &group, int64_t batch,
                          const std::vector<int64_t> &micro) const {
  if (group.replicas.size() == 1 || group.maxBatch == 0)
    return {{0, batch}};
  size_t local = replicas.getLocalReplica(group);
  Executor::RowRanges ranges;
  int64_t offset = 0;
  for (int64_t rows : micro) {
    std::vector<int64_t> split = splitBatch(group.shares, rows);
    int64_t first = offset;
    for (size_t r = 0; r < local; ++r)
      first += split[r];
    ranges.push_back({first, split[local]});
    offset += rows;
  }
  return ranges;
}

std::vector<int64_t>
RankReplica::getHeldRows(const StepGroup &group, int64_t batch,
                         const std::vector<int64_t> &micro) const {
  std::vector<int64_t> held = micro;
  if (group.replicas.size() > 1) {
    Executor::RowRanges ranges = getLocalRows(group, batch, micro);
    for (size_t m = 0; m < micro.size(); ++m)
      held[m] = ranges[m].second;
  }
  return held;
}

void RankReplica::bindBatchInput(StepGroup &group, const plan::Tensor &tensor,
                                 std::string_view name, const uint8_t *data,
                                 size_t bytes) {
  // This rank's rows only (getLocalRows).
  ReplicaStep &state =
      *replicas.steps[group.replicas[replicas.getLocalReplica(group)]];
  int t = findBinding(state.step->inputs(), name);
  int64_t rowBytes = rowBytesOf(tensor);
  if (rowBytes == 0)
    throw std::invalid_argument("input '" + std::string(name) +
                                "' has empty rows");
  int64_t rows = static_cast<int64_t>(bytes) / rowBytes;
  if (t < 0) {
    group.boundRows[std::string(name)] = rows;
    return;
  }
  const plan::Tensor &local = *state.step->tensors()->Get(t);
  if (static_cast<int64_t>(bytes) % rowBytes != 0 ||
      static_cast<int64_t>(bytes) > bytesOf(local))
    throw std::invalid_argument(
        "input '" + std::string(name) + "' takes up to " +
        std::to_string(bytesOf(local) / rowBytes) + " rows of " +
        std::to_string(rowBytes) + " bytes on this rank, got " +
        std::to_string(bytes) + " bytes");
  replicas.upload(state, t, data, bytes);
  group.boundRows[std::string(name)] = rows;
}

void RankReplica::shareState(TrainingState &state) {
  if (replicas.devices.size() < 2)
    return;
  // Rank 0's training state (after the first run, its buffers) to every
  // rank.
  std::vector<comm::ReduceBuffer> buffers =
      state.getPrimaryBuffers(stateShared);
  if (!buffers.empty())
    getCommunicator(replicas.localDevice)->broadcast(buffers, 0);
  stateShared = true;
}

void RankReplica::onFinished(StepGroup &group, TrainingState &, bool failed) {
  // A failed collective ends the run: nothing to make equal.
  if (failed || group.replicas.size() < 2)
    return;
  // The scalar outputs, if they rode on an all-reduce.
  ReplicaStep &state =
      *replicas.steps[group.replicas[replicas.getLocalReplica(group)]];
  auto found = riders.find(state.index);
  ScalarRider *rider =
      found == riders.end() ? nullptr : found->second[state.lastSlot].get();
  if (rider && rider->gathered) {
    rider->gathered = false;
    storeGatheredScalars(group, rider->values);
  }
}

void RankReplica::onPrepared(ReplicaStep &state) {
  // With the collectives in host memory (a CPU device): what the rider
  // reads and what the host communicator sums.
  const StepGroup &group = *replicas.groups[state.group];
  if (group.replicas.size() < 2 || state.communicator != hostCommunicator.get())
    return;
  std::vector<ScalarField> fields = getScalarFields(group);
  if (fields.empty())
    return;
  // The local replica's entries: where each lies in the gathered vector,
  // and the tensor that holds it in the slot being prepared.
  struct Source {
    size_t at;
    const uint8_t *data;
    plan::DType dtype;
    int64_t count;
    std::string name;
    int tensor;
  };
  std::vector<Source> sources;
  size_t local = replicas.getLocalReplica(group);
  const plan::Step &planStep = *state.step;
  for (const ScalarField &field : fields) {
    if (field.blockOf[local] < 0)
      continue;
    int t = findBinding(planStep.outputs(), field.name);
    const plan::Tensor &tensor = *planStep.tensors()->Get(t);
    sources.push_back({size_t(field.begin + field.blockOf[local] * field.count),
                       static_cast<const uint8_t *>(state.data[state.slot][t]),
                       tensor.dtype(), field.count, field.name, t});
  }
  // The last sum all-reduce that starts after every write of them.
  const auto &order = replicas.plan->getEnqueueOrder(state.index);
  StreamOrder streamOrder(planStep, order);
  std::vector<size_t> writers;
  for (const Source &source : sources)
    for (size_t writer : streamOrder.findWriters(source.tensor))
      writers.push_back(writer);
  std::vector<ReplicaStep::Prepared> &prepared = state.prepared[state.slot];
  for (size_t c = order.size(); c-- > 0;) {
    const plan::KernelCall &call = prepared[c].call;
    if (call.kernel != plan::Kernel::AllReduce ||
        plan::getAllReduceOp(call) != plan::ReduceOp::Sum)
      continue;
    if (!std::all_of(writers.begin(), writers.end(), [&](size_t writer) {
          return streamOrder.precedes(writer, c);
        }))
      break; // an earlier all-reduce starts earlier still
    size_t count = fields.back().end;
    auto rider = std::make_unique<ScalarRider>(
        *hostCommunicator, count, [sources](double *values) {
          for (const Source &source : sources) {
            int64_t size = plan::getDTypeSize(source.dtype);
            for (int64_t i = 0; i < source.count; ++i)
              values[source.at + i] =
                  readScalar(source.data + i * size, source.dtype, source.name);
          }
        });
    prepared[c].call.communicator = rider.get();
    riders[state.index][state.slot] = std::move(rider);
    return;
  }
}

std::vector<ScalarField>
RankReplica::getScalarFields(const StepGroup &group) const {
  // The plan fixes the list, so every rank builds the same.
  size_t numReplicas = group.replicas.size();
  const auto *planSteps = replicas.plan->get().steps();
  std::vector<ScalarField> fields;
  size_t end = 0;
  for (int r : group.replicas) {
    const auto *outputs = planSteps->Get(r)->outputs();
    for (flatbuffers::uoffset_t o = 0; outputs && o < outputs->size(); ++o) {
      std::string output = outputs->Get(o)->name()->str();
      auto [scalar, entries] =
          asScalar(replicas.findBindingOf(group, output, false), numReplicas);
      if (!scalar ||
          std::any_of(fields.begin(), fields.end(),
                      [&](const ScalarField &f) { return f.name == output; }))
        continue;
      // As readScalars lays them out: a block per replica binding it, or
      // one (the first's) for a gathered vector.
      ScalarField field{output, scalar, entries,
                        end,    end,    std::vector<int64_t>(numReplicas, -1)};
      bool gathered = numReplicas > 1 && entries == int64_t(numReplicas);
      int64_t blocks = 0;
      for (size_t k = 0; k < numReplicas; ++k) {
        if (findBinding(planSteps->Get(group.replicas[k])->outputs(), output) <
            0)
          continue;
        field.blockOf[k] = blocks++;
        if (gathered)
          break;
      }
      field.end = end += blocks * entries;
      fields.push_back(std::move(field));
    }
  }
  return fields;
}

void RankReplica::storeGatheredScalars(StepGroup &group,
                                       const std::vector<double> &all) const {
  group.scalars.clear();
  for (const ScalarField &field : getScalarFields(group))
    group.scalars[field.name] =
        std::vector<double>(all.begin() + field.begin, all.begin() + field.end);
  group.scalarsGathered = true;
}

std::vector<double> RankReplica::getReplicaScalars(int step, StepGroup &group,
                                                   std::string_view name,
                                                   const plan::Tensor &tensor,
                                                   int64_t count) {
  if (group.replicas.size() == 1)
    return replicas.readScalars(step, name, tensor, count);
  // Every scalar output of the last run at once, in one collective, unless
  // they rode on one of the run's all-reduces (onPrepared). x + 0 is x:
  // summing the ranks' vectors, in rank order, gathers them.
  if (!group.scalarsGathered) {
    std::vector<ScalarField> fields = getScalarFields(group);
    std::vector<double> all(fields.empty() ? 0 : fields.back().end, 0.0);
    for (const ScalarField &field : fields) {
      std::vector<double> values =
          replicas.readScalars(step, field.name, *field.tensor, field.count);
      std::copy(values.begin(), values.end(), all.begin() + field.begin);
    }
    // Host memory: the host communicator, whatever the device.
    hostCommunicator->allReduce(
        {{all.data(), int64_t(all.size()), plan::DType::F64}},
        plan::ReduceOp::Sum);
    storeGatheredScalars(group, all);
  }
  auto found = group.scalars.find(name);
  if (found == group.scalars.end())
    throw std::logic_error("output '" + std::string(name) +
                           "' was not gathered");
  return found->second;
}

} // namespace

std::unique_ptr<ReplicaDriver> createRankReplica(Replicas &replicas,
                                                 const DeviceFactory &factory,
                                                 ProcessRank rank) {
  return std::make_unique<RankReplica>(replicas, factory, std::move(rank));
}

} // namespace dpc::rt
