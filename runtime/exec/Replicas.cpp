//===- Replicas.cpp - the replicas of a plan's steps, run together --------===//

#include "runtime/exec/Replicas.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/exec/BatchSplit.h"
#include "runtime/exec/ReplicaDriver.h"
#include "runtime/exec/TrainingState.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

namespace dpc::rt {

std::pair<const plan::Tensor *, int64_t> asScalar(const plan::Tensor *tensor,
                                                  size_t numReplicas) {
  if (!tensor || tensor->batch_dim() || plan::getDTypeSize(tensor->dtype()) < 4)
    return {nullptr, 0};
  int64_t count = plan::getNumElements(plan::toDims(tensor->dims()));
  bool perReplica = count == 1,
       gathered = numReplicas > 1 && count == int64_t(numReplicas);
  return perReplica || gathered ? std::make_pair(tensor, count)
                                : std::make_pair(nullptr, int64_t(0));
}

void Replicas::stop() {
  for (auto &step : steps)
    if (step)
      step->streams.clear();
  uploadStreams.clear();
}

void Replicas::allocate(const TrainingState &trainingState,
                        ReplicaDriver &replicaDriver) {
  driver = &replicaDriver;
  const plan::Plan &root = plan->get();
  // Steps never run at the same time (run() waits for its own), so the
  // steps of a device share one arena: the device needs its largest step's,
  // which is what `dpc inspect` reports, not their sum.
  std::vector<int64_t> arenaBytes(devices.size(), 0);
  for (const plan::Step *step : *root.steps())
    arenaBytes[step->device()] =
        std::max(arenaBytes[step->device()], step->arena_bytes());
  arenas.resize(devices.size());
  uploadStreams.resize(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    if (!devices[d]) // another rank's
      continue;
    arenas[d] = DeviceBuffer(*devices[d], arenaBytes[d]);
    uploadStreams[d] = devices[d]->createStream(plan::StreamKind::Compute);
  }
  for (flatbuffers::uoffset_t s = 0; s < root.steps()->size(); ++s) {
    int device = root.steps()->Get(s)->device();
    if (!devices[device]) {
      steps.push_back(nullptr); // another rank's replica
      continue;
    }
    steps.push_back(std::make_unique<ReplicaStep>(
        *plan, static_cast<int>(s), *devices[device],
        driver->getCommunicator(device), arenas[device].get(), trainingState));
  }
  groupSteps();
}

void Replicas::groupSteps() {
  // Group the replicas, in the order their names first appear.
  const plan::Plan &root = plan->get();
  std::vector<bool> grouped(steps.size(), false);
  groupOf.assign(steps.size(), 0);
  for (size_t s = 0; s < steps.size(); ++s) {
    if (grouped[s])
      continue;
    auto group = std::make_unique<StepGroup>();
    group->name = root.steps()->Get(s)->name()->str();
    group->replicas = plan->findReplicas(group->name);
    for (int r : group->replicas) {
      grouped[r] = true;
      groupOf[r] = groups.size();
      if (steps[r])
        steps[r]->group = groups.size();
      group->shares.push_back(plan->getMaxBatch(r));
      group->maxBatch += plan->getMaxBatch(r);
      if (const auto *streams = root.steps()->Get(r)->streams())
        for (const plan::Stream *stream : *streams)
          if (const auto *instructions = stream->instructions())
            for (const plan::Instruction *instruction : *instructions) {
              group->updatesParameters |=
                  plan::isOptimizerKernel(instruction->kernel());
              findIndexInputs(*root.steps()->Get(r), *instruction,
                              group->indexBounds);
            }
    }
    group->lastSplit = group->shares;
    groups.push_back(std::move(group));
  }
}

ReplicaStep &Replicas::getStep(int step) const {
  if (step < 0 || static_cast<size_t>(step) >= steps.size())
    throw std::invalid_argument("step index " + std::to_string(step) +
                                " is out of range");
  if (!steps[step])
    throw std::invalid_argument(
        "step " + std::to_string(step) + " runs on device " +
        std::to_string(plan->get().steps()->Get(step)->device()) +
        ", in another rank's process");
  return *steps[step];
}

StepGroup &Replicas::getGroup(int step) const {
  if (step < 0 || static_cast<size_t>(step) >= steps.size())
    throw std::invalid_argument("step index " + std::to_string(step) +
                                " is out of range");
  return *groups[groupOf[step]];
}

size_t Replicas::getLocalReplica(const StepGroup &group) const {
  for (size_t r = 0; r < group.replicas.size(); ++r)
    if (isLocal(group.replicas[r]))
      return r;
  throw std::logic_error("step '" + group.name + "' has no replica on device " +
                         std::to_string(localDevice));
}

void Replicas::checkIdle(std::string_view what) const {
  if (running)
    throw std::logic_error("step '" + running->name +
                           "' is running: finish it before " +
                           std::string(what));
}

const plan::Tensor *Replicas::findBindingOf(const StepGroup &group,
                                            std::string_view name,
                                            bool input) const {
  for (int r : group.replicas) {
    const plan::Step &s = *plan->get().steps()->Get(r);
    int t = findBinding(input ? s.inputs() : s.outputs(), name);
    if (t >= 0)
      return s.tensors()->Get(t);
  }
  return nullptr;
}

std::pair<const plan::Binding *, const plan::Tensor *>
Replicas::findInputOfRole(const StepGroup &group, plan::InputRole role) const {
  for (int r : group.replicas) {
    const plan::Step &s = *plan->get().steps()->Get(r);
    if (const auto *inputs = s.inputs())
      for (const plan::Binding *binding : *inputs)
        if (binding->role() == role)
          return {binding, s.tensors()->Get(binding->tensor())};
  }
  return {nullptr, nullptr};
}

void Replicas::bindInput(StepGroup &group, const plan::Tensor &tensor,
                         std::string_view name, const void *data,
                         size_t bytes) {
  const auto *source = static_cast<const uint8_t *>(data);
  if (tensor.batch_dim() && group.replicas.size() > 1) {
    driver->bindBatchInput(group, tensor, name, source, bytes);
    return;
  }
  int64_t capacity = bytesOf(tensor);
  if (static_cast<int64_t>(bytes) > capacity)
    throw std::invalid_argument("input '" + std::string(name) + "' holds " +
                                std::to_string(capacity) + " bytes, got " +
                                std::to_string(bytes));
  for (int r : group.replicas) {
    if (!isLocal(r))
      continue;
    ReplicaStep &replica = *steps[r];
    int t = findBinding(replica.step->inputs(), name);
    if (t >= 0)
      upload(replica, t, source, bytes);
  }
}

void Replicas::upload(ReplicaStep &replica, int tensor, const void *data,
                      size_t bytes) {
  replica.upload(tensor, data, bytes, *uploadStreams[replica.step->device()],
                 tracer);
}

void Replicas::start(int step, int64_t batch, int64_t lossBatch,
                     int64_t firstRow) {
  StepGroup &group = getGroup(step);
  if (group.maxBatch > 0 && (batch < 1 || batch > group.maxBatch))
    throw std::invalid_argument(
        "batch " + std::to_string(batch) + " is outside 1.." +
        std::to_string(group.maxBatch) + " for step '" + group.name + "'");
  size_t numReplicas = group.replicas.size();
  std::vector<int64_t> split = group.maxBatch > 0
                                   ? splitBatch(group.shares, batch)
                                   : std::vector<int64_t>(numReplicas, 0);
  int64_t expectedRows = driver->getBoundRows(group, split, batch);
  for (const auto &[name, rows] : group.boundRows)
    if (rows != expectedRows)
      throw std::invalid_argument(
          "input '" + name + "' holds " + std::to_string(rows) +
          " rows, but step '" + group.name + "' runs " +
          std::to_string(expectedRows) +
          (expectedRows != batch ? " of " + std::to_string(batch) : ""));
  int64_t &optimizerStep = state->optimizerStep;
  if (group.updatesParameters) {
    ++optimizerStep;
    // AdamW reads the count from an i64 input the caller binds: the
    // executor is that caller, so that the count lives in one place.
    auto [binding, stepInput] =
        findInputOfRole(group, plan::InputRole::OptimizerStep);
    if (stepInput && stepInput->dtype() == plan::DType::I64 &&
        bytesOf(*stepInput) == sizeof(int64_t))
      bindInput(group, *stepInput, binding->name()->string_view(),
                &optimizerStep, sizeof(int64_t));
  }
  driver->shareState(*state);

  // Every replica's work is enqueued before any is waited for: replicas
  // meet in collectives.
  int64_t update = group.updatesParameters ? optimizerStep : optimizerStep + 1;
  for (size_t r = 0; r < numReplicas; firstRow += split[r], ++r) {
    if (!isLocal(group.replicas[r]))
      continue;
    ReplicaStep &replica = *steps[group.replicas[r]];
    replica.finishUploads(*uploadStreams[replica.step->device()]);
    if (group.updatesParameters)
      replica.nonFinite->store(0, std::memory_order_relaxed);
    if (!replica.isPrepared()) {
      replica.prepare(*plan);
      driver->onPrepared(replica);
    }
    replica.enqueue(*plan, split[r], lossBatch, update, firstRow,
                    state->randomSeed, tracer);
    replica.advance(split[r]);
  }
  group.lastSplit = split;
  group.scalarsGathered = false;
  running = &group;
}

void Replicas::finish(StepGroup &group) {
  running = nullptr;
  std::string failure;
  for (int r : group.replicas) {
    if (!isLocal(r))
      continue;
    for (auto &stream : steps[r]->streams) {
      try {
        stream->synchronize();
      } catch (const std::exception &error) {
        if (failure.empty())
          failure = error.what();
      }
    }
  }
  driver->onFinished(group, *state, !failure.empty());
  if (!failure.empty())
    throw std::runtime_error("step '" + group.name + "': " + failure);
}

size_t Replicas::getReplicaOutputBytes(int step, int replica,
                                       std::string_view name) const {
  const StepGroup &group = getGroup(step);
  if (replica < 0 || static_cast<size_t>(replica) >= group.replicas.size())
    throw std::invalid_argument("replica " + std::to_string(replica) +
                                " is out of range");
  const ReplicaStep &state = getStep(group.replicas[replica]);
  int t = findBinding(state.step->outputs(), name);
  if (t < 0)
    throw std::invalid_argument("step '" + state.step->name()->str() +
                                "' on device " +
                                std::to_string(state.step->device()) +
                                " has no output '" + std::string(name) + "'");
  const plan::Tensor &tensor = *state.step->tensors()->Get(t);
  return plan::getNumElements(plan::getRuntimeDims(tensor, state.lastRows)) *
         plan::getDTypeSize(tensor.dtype());
}

void Replicas::getReplicaOutput(int step, int replica, std::string_view name,
                                void *data, size_t bytes) const {
  size_t expected = getReplicaOutputBytes(step, replica, name);
  if (bytes != expected)
    throw std::invalid_argument("output '" + std::string(name) + "' has " +
                                std::to_string(expected) + " bytes, not " +
                                std::to_string(bytes));
  checkIdle("reading outputs");
  const ReplicaStep &state = getStep(getGroup(step).replicas[replica]);
  int t = findBinding(state.step->outputs(), name);
  state.device->copyToHost(data, state.data[state.lastSlot][t], bytes);
}

std::vector<double> Replicas::readScalars(int step, std::string_view name,
                                          const plan::Tensor &tensor,
                                          int64_t count) const {
  const StepGroup &group = getGroup(step);
  size_t numReplicas = group.replicas.size();
  bool gathered = numReplicas > 1 && count == int64_t(numReplicas);
  int64_t size = plan::getDTypeSize(tensor.dtype());
  std::vector<double> values;
  std::vector<uint8_t> raw(count * size);
  for (size_t r = 0; r < numReplicas; ++r) {
    const plan::Step &replica = *plan->get().steps()->Get(group.replicas[r]);
    if (findBinding(replica.outputs(), name) < 0)
      continue;
    size_t first = values.size();
    values.resize(first + count, 0.0);
    // Rank mode: each rank fills its replica's entries, the others 0.
    if (isLocal(group.replicas[r])) {
      getReplicaOutput(step, static_cast<int>(r), name, raw.data(), raw.size());
      for (int64_t i = 0; i < count; ++i)
        values[first + i] =
            readScalar(raw.data() + i * size, tensor.dtype(), name);
    }
    if (gathered)
      break; // one entry per replica, in the first replica that has it
  }
  return values;
}

std::vector<std::string>
Replicas::getScalarOutputNames(const StepGroup &group) const {
  std::vector<std::string> names;
  // The plan's step, not steps[]: in rank mode replica 0 is rank 0's.
  if (const auto *outputs =
          plan->get().steps()->Get(group.replicas[0])->outputs())
    for (const plan::Binding *binding : *outputs)
      if (asScalar(findBindingOf(group, binding->name()->string_view(), false),
                   group.replicas.size())
              .first)
        names.push_back(binding->name()->str());
  return names;
}

std::vector<double> Replicas::getReplicaScalarOutputs(int step,
                                                      std::string_view name) {
  StepGroup &group = getGroup(step);
  const plan::Tensor *binding = findBindingOf(group, name, false);
  if (!binding)
    throw std::invalid_argument("step '" + group.name + "' has no output '" +
                                std::string(name) + "'");
  auto [tensor, count] = asScalar(binding, group.replicas.size());
  if (!tensor)
    throw std::invalid_argument("output '" + std::string(name) +
                                "' is not a scalar");
  return driver->getReplicaScalars(step, group, name, *tensor, count);
}

double Replicas::getScalarOutput(int step, std::string_view name) {
  const StepGroup &group = getGroup(step);
  auto earlier = group.earlierScalars.find(name);
  double sum = earlier == group.earlierScalars.end() ? 0 : earlier->second;
  for (double value : getReplicaScalarOutputs(step, name))
    sum += value;
  return sum;
}

} // namespace dpc::rt
