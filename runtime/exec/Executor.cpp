//===- Executor.cpp - runs the steps of a loaded plan ---------------------===//
//
// The facade: it wires the parts together and keeps the public API.
// Replicas runs the replicas of a step, ReplicaDriver decides what the
// process model decides, TrainingState holds the persistent tensors, and
// MicroBatchRunner runs gradient accumulation's micro-batches.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/Executor.h"
#include "runtime/exec/MicroBatchRunner.h"
#include "runtime/exec/ReplicaDriver.h"
#include "runtime/exec/Replicas.h"
#include "runtime/exec/TrainingState.h"

#include <stdexcept>

namespace dpc::rt {

Executor::Executor(std::shared_ptr<const plan::LoadedPlan> loaded,
                   const DeviceFactory &factory, ProcessRank rank)
    : plan(std::move(loaded)), replicas(std::make_unique<Replicas>(plan)) {
  driver = rank.communicator
               ? createRankReplica(*replicas, factory, std::move(rank))
               : createLocalReplicas(*replicas, factory);
  state = std::make_unique<TrainingState>(*plan, replicas->devices);
  replicas->state = state.get();
  state->copyPrimaryToReplicas(false);
  replicas->allocate(*state, *driver);

  int64_t gradAccum = plan->get().grad_accum();
  if (gradAccum > 1) {
    int train = findStep(plan::StepRole::Train);
    int accumFirst = findStep(plan::StepRole::AccumFirst);
    int accumStep = findStep(plan::StepRole::AccumStep);
    if (train < 0 || accumFirst < 0 || accumStep < 0)
      plan->fail("grad_accum is " + std::to_string(gradAccum) +
                 " but the plan lacks a step of role Train, AccumFirst or "
                 "AccumStep");
    replicas->getGroup(train).accumulates = true;
    microBatches = std::make_unique<MicroBatchRunner>(
        *replicas, *driver, *state, gradAccum, train, accumFirst, accumStep);
  }
}

Executor::~Executor() {
  // Streams stop before the memory their work points to is freed; then the
  // members go in reverse order: the training state, the communicators,
  // and last the replicas with their devices.
  replicas->stop();
}

int Executor::findStep(plan::StepRole role) const {
  int step = plan->findStep(role);
  return step < 0 ? -1 : replicas->getGroup(step).replicas[0];
}

int64_t Executor::getMaxBatch(int step) const {
  const StepGroup &group = replicas->getGroup(step);
  return group.accumulates ? group.maxBatch * microBatches->getGradAccum()
                           : group.maxBatch;
}

int Executor::getNumReplicas(int step) const {
  return static_cast<int>(replicas->getGroup(step).replicas.size());
}

int Executor::getReplicaStep(int step, int replica) const {
  const StepGroup &group = replicas->getGroup(step);
  if (replica < 0 || static_cast<size_t>(replica) >= group.replicas.size())
    throw std::invalid_argument("replica " + std::to_string(replica) +
                                " is out of range");
  return group.replicas[replica];
}

const std::vector<int64_t> &Executor::getLastSplit(int step) const {
  return replicas->getGroup(step).lastSplit;
}

int Executor::getLocalDevice() const { return replicas->localDevice; }

Executor::RowRanges Executor::getLocalRows(int step, int64_t batch) const {
  const StepGroup &group = replicas->getGroup(step);
  std::vector<int64_t> micro =
      group.accumulates ? chunkBatch(batch, microBatches->getGradAccum())
                        : std::vector<int64_t>{batch};
  return driver->getLocalRows(group, batch, micro);
}

const plan::Tensor *Executor::findInput(int step, std::string_view name) const {
  return replicas->findBindingOf(replicas->getGroup(step), name, true);
}

const plan::Tensor *Executor::findOutput(int step,
                                         std::string_view name) const {
  return replicas->findBindingOf(replicas->getGroup(step), name, false);
}

namespace {
/// The name of the first binding in `step`'s replicas with `hasRole`.
template <typename HasRole>
std::string_view findNameByRole(const Replicas &replicas, int step, bool input,
                                HasRole hasRole) {
  for (int r : replicas.getGroup(step).replicas) {
    const plan::Step &s = *replicas.plan->get().steps()->Get(r);
    if (const auto *bindings = input ? s.inputs() : s.outputs())
      for (const plan::Binding *binding : *bindings)
        if (hasRole(*binding))
          return binding->name()->string_view();
  }
  return {};
}
} // namespace

std::string_view Executor::getInputName(int step, plan::InputRole role) const {
  return findNameByRole(*replicas, step, true, [&](const plan::Binding &b) {
    return b.role() == role && role != plan::InputRole::Data;
  });
}

std::string_view Executor::getOutputName(int step,
                                         plan::OutputRole role) const {
  return findNameByRole(*replicas, step, false, [&](const plan::Binding &b) {
    return b.output_role() == role && role != plan::OutputRole::Other;
  });
}

std::string_view Executor::requireInputName(int step,
                                            plan::InputRole role) const {
  std::string_view name = getInputName(step, role);
  if (name.empty())
    throw std::invalid_argument("step '" + replicas->getGroup(step).name +
                                "' has no input of role " +
                                plan::EnumNameInputRole(role));
  return name;
}

std::string_view Executor::requireOutputName(int step,
                                             plan::OutputRole role) const {
  std::string_view name = getOutputName(step, role);
  if (name.empty())
    throw std::invalid_argument("step '" + replicas->getGroup(step).name +
                                "' has no output of role " +
                                plan::EnumNameOutputRole(role));
  return name;
}

void Executor::setInput(int step, std::string_view name, const void *data,
                        size_t bytes) {
  StepGroup &group = replicas->getGroup(step);
  const plan::Tensor *tensor = replicas->findBindingOf(group, name, true);
  if (!tensor)
    throw std::invalid_argument("step '" + group.name + "' has no input '" +
                                std::string(name) + "'");
  if (auto bound = group.indexBounds.find(name);
      bound != group.indexBounds.end() && tensor->dtype() == plan::DType::I32)
    checkIndices(group.name, name, data, bytes, bound->second);
  if (group.accumulates && tensor->batch_dim())
    microBatches->stage(*tensor, name, data, bytes);
  else
    replicas->bindInput(group, *tensor, name, data, bytes);
}

void Executor::run(int step, int64_t batch) {
  start(step, batch);
  finish(step);
}

void Executor::start(int step, int64_t batch) {
  StepGroup &group = replicas->getGroup(step);
  if (replicas->running)
    throw std::logic_error("step '" + replicas->running->name +
                           "' is still running: finish it before step '" +
                           group.name + "' starts");
  if (group.accumulates)
    microBatches->start(batch);
  else
    replicas->start(step, batch, batch, 0);
}

void Executor::finish(int step) {
  StepGroup &group = replicas->getGroup(step);
  if (replicas->running != &group)
    throw std::logic_error("step '" + group.name + "' was not started");
  replicas->finish(group);
}

size_t Executor::getReplicaOutputBytes(int step, int replica,
                                       std::string_view name) const {
  return replicas->getReplicaOutputBytes(step, replica, name);
}

void Executor::getReplicaOutput(int step, int replica, std::string_view name,
                                void *data, size_t bytes) const {
  replicas->getReplicaOutput(step, replica, name, data, bytes);
}

size_t Executor::getOutputBytes(int step, std::string_view name) const {
  const StepGroup &group = replicas->getGroup(step);
  const plan::Tensor *tensor = replicas->findBindingOf(group, name, false);
  if (!tensor)
    throw std::invalid_argument("step '" + group.name + "' has no output '" +
                                std::string(name) + "'");
  size_t bytes = 0;
  for (size_t r = 0; r < group.replicas.size(); ++r) {
    if (!replicas->isLocal(group.replicas[r]) ||
        findBinding(replicas->steps[group.replicas[r]]->step->outputs(), name) <
            0)
      continue;
    bytes += getReplicaOutputBytes(step, static_cast<int>(r), name);
    if (!tensor->batch_dim())
      break;
  }
  return bytes;
}

void Executor::getOutput(int step, std::string_view name, void *data,
                         size_t bytes) const {
  size_t expected = getOutputBytes(step, name);
  if (bytes != expected)
    throw std::invalid_argument("output '" + std::string(name) + "' has " +
                                std::to_string(expected) + " bytes, not " +
                                std::to_string(bytes));
  const StepGroup &group = replicas->getGroup(step);
  bool rows = replicas->findBindingOf(group, name, false)->batch_dim();
  auto *target = static_cast<uint8_t *>(data);
  for (size_t r = 0; r < group.replicas.size(); ++r) {
    if (!replicas->isLocal(group.replicas[r]) ||
        findBinding(replicas->steps[group.replicas[r]]->step->outputs(), name) <
            0)
      continue;
    size_t part = getReplicaOutputBytes(step, static_cast<int>(r), name);
    getReplicaOutput(step, static_cast<int>(r), name, target, part);
    target += part;
    if (!rows)
      break;
  }
}

std::vector<double>
Executor::getReplicaScalarOutputs(int step, std::string_view name) const {
  return replicas->getReplicaScalarOutputs(step, name);
}

double Executor::getScalarOutput(int step, std::string_view name) const {
  return replicas->getScalarOutput(step, name);
}

size_t Executor::getNumPersistent() const { return state->size(); }

size_t Executor::getPersistentBytes(size_t index) const {
  return state->getBytes(index);
}

void Executor::readPersistent(size_t index, void *data) const {
  replicas->checkIdle("reading the training state");
  state->read(index, data);
}

void Executor::writePersistent(size_t index, const void *data) {
  replicas->checkIdle("writing the training state");
  state->write(index, data);
}

const std::vector<size_t> &Executor::getPrimaryPersistent() const {
  return state->getPrimary();
}

std::vector<size_t> Executor::getCheckedPersistent(int step) const {
  const StepGroup &group = replicas->getGroup(step);
  const ReplicaStep &replica =
      *replicas->steps[group.replicas[replicas->getLocalReplica(group)]];
  return state->getCheckedPersistent(*replica.step, *replica.device);
}

bool Executor::wroteNonFinite(int step) const {
  const StepGroup &group = replicas->getGroup(step);
  replicas->checkIdle("reading the non-finite flag");
  const ReplicaStep &replica =
      *replicas->steps[group.replicas[replicas->getLocalReplica(group)]];
  return replica.nonFinite->load(std::memory_order_relaxed) != 0;
}

int64_t Executor::getOptimizerStep() const { return state->optimizerStep; }

void Executor::setOptimizerStep(int64_t step) { state->optimizerStep = step; }

void Executor::setRandomSeed(uint64_t seed) { state->randomSeed = seed; }

void Executor::setTracer(Tracer *newTracer) { replicas->tracer = newTracer; }

std::vector<std::string> Executor::getRunTimeChoices(int device) const {
  return replicas->devices.at(device)
             ? replicas->devices[device]->getRunTimeChoices()
             : std::vector<std::string>();
}

void Executor::gatherShard(size_t index, void *whole) const {
  const plan::Plan &root = plan->get();
  const plan::PersistentTensor &mine = *root.persistent()->Get(index);
  int device = getLocalDevice();
  if (device < 0 || mine.device() != device || !isShard(mine))
    throw std::logic_error("gatherShard: persistent tensor " +
                           std::to_string(index) + " is not this rank's shard");
  if (!replicas->devices[device]->isHostMemory())
    throw std::runtime_error(
        "'" + mine.name()->str() +
        "' is sharded over several GPUs: checkpoints of a sharded plan "
        "under dpc launch are not built yet on GPUs");
  // Every device's range of the tensor, in device (rank) order.
  std::vector<int64_t> sizes(root.devices()->size(), 0);
  for (const plan::PersistentTensor *other : *root.persistent())
    if (isShard(*other) &&
        other->name()->string_view() == mine.name()->string_view())
      sizes.at(other->device()) =
          plan::getNumElements(plan::toDims(other->dims()));
  std::vector<uint8_t> part(getPersistentBytes(index));
  readPersistent(index, part.data());
  comm::Communicator *communicator = driver->getCommunicator(device);
  communicator->allGather({{whole, part.data(), sizes, mine.dtype()}});
}

std::optional<Device::MemoryUse> Executor::getMemoryUse(int device) const {
  if (!replicas->devices.at(device))
    return std::nullopt;
  return replicas->devices[device]->getMemoryUse();
}

} // namespace dpc::rt
