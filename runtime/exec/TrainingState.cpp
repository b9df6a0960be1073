//===- TrainingState.cpp - the copies of a plan's persistent state --------===//

#include "runtime/exec/TrainingState.h"
#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

namespace dpc::rt {

namespace {

void fillOnes(uint8_t *bytes, int64_t count, plan::DType dtype) {
  int64_t size = plan::getDTypeSize(dtype);
  for (int64_t i = 0; i < count; ++i) {
    uint8_t *element = bytes + i * size;
    switch (dtype) {
    case plan::DType::F32: {
      float one = 1.f;
      std::memcpy(element, &one, size);
      break;
    }
    case plan::DType::F64: {
      double one = 1.0;
      std::memcpy(element, &one, size);
      break;
    }
    case plan::DType::F16:
      element[0] = 0x00, element[1] = 0x3c;
      break;
    case plan::DType::BF16:
      element[0] = 0x80, element[1] = 0x3f;
      break;
    default: // little-endian integers
      element[0] = 1;
      break;
    }
  }
}

/// The operands an optimizer update writes in place: what it checks.
std::vector<unsigned> getUpdatedOperands(plan::Kernel kernel) {
  switch (kernel) {
  case plan::Kernel::SgdUpdate: {
    using namespace plan::roles::SgdUpdate;
    return {Param, MomentumBuffer};
  }
  case plan::Kernel::AdamWUpdate: {
    using namespace plan::roles::AdamWUpdate;
    return {Param, ExpAvg, ExpAvgSq};
  }
  default:
    return {};
  }
}

/// The copies of a tensor share its name; the shards of one are apart.
std::string getCopyKey(const plan::PersistentTensor &state) {
  std::string key = state.name()->str();
  if (isShard(state))
    key += "#" + std::to_string(state.shard_offset());
  return key;
}

} // namespace

bool isShard(const plan::PersistentTensor &state) {
  return state.logical_dims() != nullptr;
}

std::vector<int64_t> getWholeDims(const plan::PersistentTensor &state) {
  return plan::toDims(isShard(state) ? state.logical_dims() : state.dims());
}

TrainingState::TrainingState(
    const plan::LoadedPlan &plan,
    const std::vector<std::unique_ptr<Device>> &devices)
    : plan(plan) {
  const auto *states = plan->persistent();
  if (!states)
    return;
  // Each device's copy of the training state, on that device. A copy that
  // starts as another's (SameAsCopy) takes that one's data from the plan,
  // which every process holds whole.
  std::map<std::string, const plan::PersistentTensor *> withData;
  for (const plan::PersistentTensor *state : *states)
    if (state->init() == plan::InitKind::Data)
      withData.emplace(state->name()->str(), state);
  std::map<std::string, std::vector<size_t>> byName;
  for (const plan::PersistentTensor *state : *states) {
    if (!devices[state->device()]) {
      persistent.emplace_back(); // another rank's copy
      continue;
    }
    Device &home = *devices[state->device()];
    int64_t count = plan::getNumElements(plan::toDims(state->dims()));
    int64_t size = plan::getDTypeSize(state->dtype());
    DeviceBuffer buffer(home, count * size);
    if (state->init() == plan::InitKind::Data) {
      home.copyFromHost(buffer.get(), state->data()->data(), count * size);
    } else if (state->init() == plan::InitKind::SameAsCopy) {
      home.copyFromHost(buffer.get(),
                        withData.at(state->name()->str())->data()->data(),
                        count * size);
    } else if (state->init() == plan::InitKind::Ones) {
      std::vector<uint8_t> ones(count * size);
      fillOnes(ones.data(), count, state->dtype());
      home.copyFromHost(buffer.get(), ones.data(), ones.size());
    } // Zeros: allocate() zero-fills.
    byName[getCopyKey(*state)].push_back(persistent.size());
    persistent.push_back(std::move(buffer));
  }
  copies.resize(persistent.size());
  for (size_t i = 0; i < persistent.size(); ++i) {
    if (!devices[states->Get(i)->device()])
      continue;
    const std::vector<size_t> &all = byName[getCopyKey(*states->Get(i))];
    copies[i] = all;
    size_t lowest = all[0];
    for (size_t c : all)
      if (states->Get(c)->device() < states->Get(lowest)->device())
        lowest = c;
    if (lowest == i)
      primary.push_back(i);
  }
}

void TrainingState::read(size_t index, void *data) const {
  const DeviceBuffer &buffer = persistent.at(index);
  if (!buffer.getDevice())
    throw std::invalid_argument("persistent tensor " + std::to_string(index) +
                                " lives in another rank's process");
  buffer.getDevice()->copyToHost(data, buffer.get(), buffer.size());
}

void TrainingState::write(size_t index, const void *data) {
  persistent.at(index);
  for (size_t copy : copies[index]) {
    DeviceBuffer &buffer = persistent[copy];
    if (buffer.getDevice()) // not another rank's
      buffer.getDevice()->copyFromHost(buffer.get(), data, buffer.size());
  }
}

void TrainingState::copyPrimaryToReplicas(bool buffersOnly) {
  const auto *states = plan->persistent();
  std::vector<uint8_t> staging;
  for (size_t p : primary) {
    if (copies[p].size() < 2 ||
        (buffersOnly && states->Get(p)->kind() != plan::PersistentKind::Buffer))
      continue;
    staging.resize(persistent[p].size());
    read(p, staging.data());
    write(p, staging.data());
  }
}

std::vector<comm::ReduceBuffer>
TrainingState::getPrimaryBuffers(bool buffersOnly) {
  const auto *states = plan->persistent();
  std::vector<comm::ReduceBuffer> buffers;
  for (size_t p : primary) {
    const plan::PersistentTensor &state = *states->Get(p);
    // A shard is a device's own, not a copy of rank 0's.
    if ((buffersOnly && state.kind() != plan::PersistentKind::Buffer) ||
        isShard(state))
      continue;
    buffers.push_back({persistent[p].get(),
                       plan::getNumElements(plan::toDims(state.dims())),
                       state.dtype()});
  }
  return buffers;
}

void TrainingState::zero(plan::PersistentKind kind) {
  for (size_t index : primary)
    if (plan->persistent()->Get(index)->kind() == kind)
      write(index, std::vector<uint8_t>(getBytes(index)).data());
}

std::vector<size_t>
TrainingState::getCheckedPersistent(const plan::Step &step,
                                    const Device &device) const {
  std::vector<size_t> checked;
  if (!device.checksUpdates())
    return checked;
  for (const plan::Stream *stream : *step.streams())
    for (const plan::Instruction *instruction : *stream->instructions()) {
      if (!plan::isOptimizerKernel(instruction->kernel()))
        continue;
      for (unsigned position : getUpdatedOperands(instruction->kernel())) {
        if (position >= instruction->operands()->size())
          continue;
        int t = instruction->operands()->Get(position);
        if (t < 0)
          continue;
        const plan::Tensor &tensor = *step.tensors()->Get(t);
        if (tensor.storage() != plan::Storage::Persistent)
          continue;
        auto index = static_cast<size_t>(tensor.persistent());
        if (std::find(primary.begin(), primary.end(), index) != primary.end())
          checked.push_back(index);
      }
    }
  std::sort(checked.begin(), checked.end());
  checked.erase(std::unique(checked.begin(), checked.end()), checked.end());
  return checked;
}

} // namespace dpc::rt
