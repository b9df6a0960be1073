//===- Executor.cpp - runs the steps of a loaded plan ---------------------===//

#include "runtime/exec/Executor.h"
#include "runtime/plan/KernelSignature.h"
#include "runtime/plan/PlanTypes.h"

#include <cstring>
#include <exception>
#include <stdexcept>

namespace dpc::exec {

using plan::LoadedPlan;
using plan::Storage;

struct Executor::StepState {
  const plan::Step *step = nullptr;
  Device *device = nullptr;
  DeviceBuffer arena;
  std::vector<DeviceBuffer> inputs; // by tensor index; empty if not an input
  std::vector<void *> data;         // where each tensor starts
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<std::unique_ptr<Event>> events;
  bool updatesParameters = false;
  int64_t lastBatch = 0;
};

namespace {

int64_t bytesOf(const plan::Tensor &tensor) {
  return plan::getNumElements(plan::toDims(tensor.dims())) *
         plan::getDTypeSize(tensor.dtype());
}

const plan::Tensor *
findBinding(const plan::Step &step,
            const flatbuffers::Vector<flatbuffers::Offset<plan::Binding>> *list,
            std::string_view name) {
  for (flatbuffers::uoffset_t i = 0; list && i < list->size(); ++i)
    if (list->Get(i)->name()->string_view() == name)
      return step.tensors()->Get(list->Get(i)->tensor());
  return nullptr;
}

} // namespace

Executor::Executor(std::shared_ptr<const LoadedPlan> loaded,
                   const DeviceFactory &factory)
    : plan(std::move(loaded)) {
  const plan::Plan &root = plan->get();
  for (const plan::Device *device : *root.devices()) {
    try {
      devices.push_back(factory(device->name()->str()));
    } catch (const std::exception &error) {
      plan->fail(error.what());
    }
  }

  // Training state lives on the first device (one-device plans for now).
  Device &home = *devices[0];
  if (const auto *states = root.persistent()) {
    for (const plan::PersistentTensor *state : *states) {
      int64_t count = plan::getNumElements(plan::toDims(state->dims()));
      int64_t size = plan::getDTypeSize(state->dtype());
      DeviceBuffer buffer(home, count * size);
      if (state->init() == plan::InitKind::Data) {
        home.copyFromHost(buffer.get(), state->data()->data(), count * size);
      } else if (state->init() == plan::InitKind::Ones) {
        std::vector<uint8_t> ones(count * size);
        for (int64_t i = 0; i < count; ++i) {
          uint8_t *element = ones.data() + i * size;
          switch (state->dtype()) {
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
        home.copyFromHost(buffer.get(), ones.data(), ones.size());
      } // Zeros: allocate() zero-fills.
      persistent.push_back(std::move(buffer));
    }
  }

  for (flatbuffers::uoffset_t s = 0; s < root.steps()->size(); ++s) {
    const plan::Step &step = *root.steps()->Get(s);
    auto state = std::make_unique<StepState>();
    state->step = &step;
    state->device = devices[step.device()].get();
    state->arena = DeviceBuffer(*state->device, step.arena_bytes());
    size_t numTensors = step.tensors() ? step.tensors()->size() : 0;
    state->inputs.resize(numTensors);
    state->data.assign(numTensors, nullptr);
    // Real storage first, then aliases (which the loader proved acyclic).
    for (size_t t = 0; t < numTensors; ++t) {
      const plan::Tensor &tensor = *step.tensors()->Get(t);
      switch (tensor.storage()) {
      case Storage::Arena:
        state->data[t] =
            static_cast<uint8_t *>(state->arena.get()) + tensor.offset();
        break;
      case Storage::Persistent:
        state->data[t] = persistent[tensor.persistent()].get();
        break;
      case Storage::Input:
        state->inputs[t] = DeviceBuffer(*state->device, bytesOf(tensor));
        state->data[t] = state->inputs[t].get();
        break;
      default:
        break;
      }
    }
    for (size_t t = 0; t < numTensors; ++t) {
      size_t base = t;
      while (step.tensors()->Get(base)->storage() == Storage::Alias)
        base = step.tensors()->Get(base)->alias();
      state->data[t] = state->data[base];
    }
    if (const auto *streams = step.streams()) {
      for (const plan::Stream *stream : *streams) {
        state->streams.push_back(state->device->createStream(stream->kind()));
        if (const auto *instructions = stream->instructions())
          for (const plan::Instruction *instruction : *instructions)
            state->updatesParameters |=
                plan::isOptimizerKernel(instruction->kernel());
      }
    }
    for (int e = 0; e < step.num_events(); ++e)
      state->events.push_back(state->device->createEvent());
    steps.push_back(std::move(state));
  }
}

Executor::~Executor() {
  // Streams stop before the memory their work points to is freed.
  for (auto &step : steps)
    step->streams.clear();
}

Executor::StepState &Executor::getStep(int step) const {
  if (step < 0 || static_cast<size_t>(step) >= steps.size())
    throw std::invalid_argument("step index " + std::to_string(step) +
                                " is out of range");
  return *steps[step];
}

std::vector<int64_t> Executor::runtimeDims(const plan::Tensor &tensor,
                                           int64_t batch) const {
  std::vector<int64_t> dims = plan::toDims(tensor.dims());
  if (tensor.batch_dim() && batch > 0)
    dims[0] = batch;
  return dims;
}

const plan::Tensor *Executor::findInput(int step, std::string_view name) const {
  const plan::Step &s = *getStep(step).step;
  return findBinding(s, s.inputs(), name);
}

const plan::Tensor *Executor::findOutput(int step,
                                         std::string_view name) const {
  const plan::Step &s = *getStep(step).step;
  return findBinding(s, s.outputs(), name);
}

void Executor::setInput(int step, std::string_view name, const void *data,
                        size_t bytes) {
  StepState &state = getStep(step);
  const plan::Tensor *tensor = findInput(step, name);
  if (!tensor)
    throw std::invalid_argument("step '" + state.step->name()->str() +
                                "' has no input '" + std::string(name) + "'");
  if (static_cast<int64_t>(bytes) > bytesOf(*tensor))
    throw std::invalid_argument("input '" + std::string(name) + "' holds " +
                                std::to_string(bytesOf(*tensor)) +
                                " bytes, got " + std::to_string(bytes));
  // The binding names an Input tensor (checked by the loader): its index
  // is the binding's.
  for (const plan::Binding *binding : *state.step->inputs())
    if (binding->name()->string_view() == name)
      state.device->copyFromHost(state.data[binding->tensor()], data, bytes);
}

void Executor::run(int step, int64_t batch) {
  StepState &state = getStep(step);
  const plan::Step &planStep = *state.step;
  int64_t maxBatch = plan->getMaxBatch(step);
  if (maxBatch > 0 && (batch < 1 || batch > maxBatch))
    throw std::invalid_argument("batch " + std::to_string(batch) +
                                " is outside 1.." + std::to_string(maxBatch) +
                                " for step '" + planStep.name()->str() + "'");
  if (state.updatesParameters) {
    ++optimizerStep;
    // AdamW reads the count from an i64 input the caller binds: the
    // executor is that caller, so that the count lives in one place.
    const plan::Tensor *stepInput = findInput(step, "step");
    if (stepInput && stepInput->dtype() == plan::DType::I64 &&
        bytesOf(*stepInput) == sizeof(int64_t))
      setInput(step, "step", &optimizerStep, sizeof(int64_t));
  }

  auto bind = [&](const flatbuffers::Vector<int32_t> *indices,
                  std::vector<plan::TensorArg> &args) {
    for (flatbuffers::uoffset_t k = 0; indices && k < indices->size(); ++k) {
      int t = indices->Get(k);
      plan::TensorArg arg;
      if (t >= 0) {
        const plan::Tensor &tensor = *planStep.tensors()->Get(t);
        arg.present = true;
        arg.data = state.data[t];
        arg.dtype = tensor.dtype();
        arg.dims = runtimeDims(tensor, batch);
      }
      args.push_back(std::move(arg));
    }
  };
  for (auto [s, i] : plan->getEnqueueOrder(step)) {
    const plan::Instruction &instruction =
        *planStep.streams()->Get(s)->instructions()->Get(i);
    Stream &stream = *state.streams[s];
    if (const auto *waits = instruction.wait_events())
      for (int e : *waits)
        stream.wait(*state.events[e]);
    plan::KernelCall call;
    call.kernel = instruction.kernel();
    call.instruction = &instruction;
    call.batch = batch;
    call.optimizerStep = optimizerStep;
    bind(instruction.operands(), call.operands);
    bind(instruction.results(), call.results);
    stream.launch(std::move(call));
    if (const auto *signals = instruction.signal_events())
      for (int e : *signals)
        stream.record(*state.events[e]);
  }

  std::string failure;
  for (auto &stream : state.streams) {
    try {
      stream->synchronize();
    } catch (const std::exception &error) {
      if (failure.empty())
        failure = error.what();
    }
  }
  state.lastBatch = batch;
  if (!failure.empty())
    throw std::runtime_error("step '" + planStep.name()->str() +
                             "': " + failure);
}

size_t Executor::getOutputBytes(int step, std::string_view name) const {
  const plan::Tensor *tensor = findOutput(step, name);
  if (!tensor)
    throw std::invalid_argument("step '" + getStep(step).step->name()->str() +
                                "' has no output '" + std::string(name) + "'");
  return plan::getNumElements(runtimeDims(*tensor, getStep(step).lastBatch)) *
         plan::getDTypeSize(tensor->dtype());
}

void Executor::getOutput(int step, std::string_view name, void *data,
                         size_t bytes) const {
  size_t expected = getOutputBytes(step, name);
  if (bytes != expected)
    throw std::invalid_argument("output '" + std::string(name) + "' has " +
                                std::to_string(expected) + " bytes, not " +
                                std::to_string(bytes));
  StepState &state = getStep(step);
  for (const plan::Binding *binding : *state.step->outputs())
    if (binding->name()->string_view() == name) {
      state.device->copyToHost(data, state.data[binding->tensor()], bytes);
      return;
    }
}

double Executor::getScalarOutput(int step, std::string_view name) const {
  const plan::Tensor *tensor = findOutput(step, name);
  size_t bytes = getOutputBytes(step, name);
  if (!tensor ||
      bytes != static_cast<size_t>(plan::getDTypeSize(tensor->dtype())))
    throw std::invalid_argument("output '" + std::string(name) +
                                "' is not a scalar");
  uint8_t raw[8];
  getOutput(step, name, raw, bytes);
  switch (tensor->dtype()) {
  case plan::DType::F32: {
    float value;
    std::memcpy(&value, raw, 4);
    return value;
  }
  case plan::DType::F64: {
    double value;
    std::memcpy(&value, raw, 8);
    return value;
  }
  case plan::DType::I32: {
    int32_t value;
    std::memcpy(&value, raw, 4);
    return value;
  }
  case plan::DType::I64: {
    int64_t value;
    std::memcpy(&value, raw, 8);
    return static_cast<double>(value);
  }
  default:
    throw std::invalid_argument("output '" + std::string(name) +
                                "' has a 16-bit dtype");
  }
}

size_t Executor::getPersistentBytes(size_t index) const {
  return persistent.at(index).size();
}

void Executor::readPersistent(size_t index, void *data) const {
  const DeviceBuffer &buffer = persistent.at(index);
  buffer.getDevice()->copyToHost(data, buffer.get(), buffer.size());
}

void Executor::writePersistent(size_t index, const void *data) {
  DeviceBuffer &buffer = persistent.at(index);
  buffer.getDevice()->copyFromHost(buffer.get(), data, buffer.size());
}

} // namespace dpc::exec
