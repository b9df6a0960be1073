//===- ReplicaStep.cpp - one replica of a step on its device --------------===//

#include "runtime/exec/ReplicaStep.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/exec/Trace.h"
#include "runtime/exec/TrainingState.h"

#include <cstdio>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>

namespace dpc::rt {

int64_t bytesOf(const plan::Tensor &tensor) {
  return plan::getNumElements(plan::toDims(tensor.dims())) *
         plan::getDTypeSize(tensor.dtype());
}

int64_t rowBytesOf(const plan::Tensor &tensor) {
  std::vector<int64_t> dims = plan::toDims(tensor.dims());
  dims.erase(dims.begin());
  return plan::getNumElements(dims) * plan::getDTypeSize(tensor.dtype());
}

int findBinding(const Bindings *list, std::string_view name) {
  for (flatbuffers::uoffset_t i = 0; list && i < list->size(); ++i)
    if (list->Get(i)->name()->string_view() == name)
      return list->Get(i)->tensor();
  return -1;
}

double readScalar(const uint8_t *raw, plan::DType dtype,
                  std::string_view name) {
  switch (dtype) {
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

namespace {

/// Enqueues `work` on `stream` between host functions on the same stream
/// that time it as the stream runs it.
void enqueueTimed(Tracer &tracer, Stream &stream, TraceSpan span,
                  const std::function<void()> &work) {
  auto start = std::make_shared<double>();
  stream.enqueueHostFunction([&tracer, start] { *start = tracer.now(); });
  work();
  stream.enqueueHostFunction([&tracer, start, span]() mutable {
    span.startMicros = *start;
    span.endMicros = tracer.now();
    tracer.add(std::move(span));
  });
}

} // namespace

ReplicaStep::ReplicaStep(const plan::LoadedPlan &plan, int index,
                         Device &device, comm::Communicator *communicator,
                         void *arena, const TrainingState &state)
    : index(index), step(plan->steps()->Get(index)), device(&device),
      communicator(communicator) {
  lastRows = plan.getMaxBatch(index); // outputs before a run
  for (int s = 0; s < 2; ++s)
    layOut(plan, s, arena, state);
  uploaded = device.createEvent();
  if (const auto *planStreams = step->streams())
    for (const plan::Stream *stream : *planStreams)
      streams.push_back(device.createStream(stream->kind()));
  for (int e = 0; e < step->num_events(); ++e)
    events.push_back(device.createEvent());
  nonFiniteMemory =
      DeviceBuffer(device, sizeof(std::atomic<uint32_t>), DeviceBuffer::OnHost);
  nonFinite = new (nonFiniteMemory.get()) std::atomic<uint32_t>(0);
}

void ReplicaStep::layOut(const plan::LoadedPlan &plan, int s, void *arena,
                         const TrainingState &state) {
  size_t numTensors = step->tensors() ? step->tensors()->size() : 0;
  std::vector<void *> &where = data[s];
  where.assign(numTensors, nullptr);
  // Real storage first, then aliases (which the loader proved acyclic).
  for (size_t t = 0; t < numTensors; ++t) {
    const plan::Tensor &tensor = *step->tensors()->Get(t);
    switch (tensor.storage()) {
    case plan::Storage::Arena:
      where[t] = static_cast<uint8_t *>(arena) + tensor.offset();
      break;
    case plan::Storage::Persistent:
      where[t] = state.getData(tensor.persistent());
      break;
    case plan::Storage::Input: {
      Input &input = inputs[t];
      input.device[s] = DeviceBuffer(*device, bytesOf(tensor));
      input.direct = device->isHostMemory();
      if (!input.direct)
        input.staging[s] =
            DeviceBuffer(*device, bytesOf(tensor), DeviceBuffer::OnHost);
      input.staged[s] = device->createEvent();
      where[t] = input.device[s].get();
      break;
    }
    default:
      break;
    }
  }
  for (size_t t = 0; t < numTensors; ++t)
    where[t] = static_cast<uint8_t *>(where[plan.getAliasBase(index, t)]) +
               plan.getAliasOffset(index, t);
}

void ReplicaStep::upload(int tensor, const void *source, size_t bytes,
                         Stream &uploads, Tracer *tracer) {
  Input &input = inputs.at(tensor);
  int s = slot;
  // The staging buffer (direct: the slot) may still feed an earlier upload;
  // no run reads slot s until the next one starts.
  input.staged[s]->synchronize();
  if (input.direct) {
    if (bytes)
      std::memcpy(input.device[s].get(), source, bytes);
    input.current[s] = true;
    input.current[1 - s] = false;
    input.latest = s;
    input.bytes = bytes;
    return;
  }
  if (bytes)
    std::memcpy(input.staging[s].get(), source, bytes);
  auto copy = [&] {
    uploads.copyFromHost(input.device[s].get(), input.staging[s].get(), bytes);
  };
  if (tracer)
    enqueueTimed(*tracer, uploads,
                 {"upload " + flatbuffers::GetString(
                                  step->tensors()->Get(tensor)->name()),
                  step->device(), -1, SpanKind::Upload, 0, 0},
                 copy);
  else
    copy();
  uploads.record(*input.staged[s]);
  input.current[s] = true;
  input.current[1 - s] = false;
  input.latest = s;
  input.bytes = bytes;
}

void ReplicaStep::finishUploads(Stream &uploads) {
  int s = slot;
  for (auto &[tensor, input] : inputs) {
    if (input.current[s] || input.latest < 0)
      continue;
    // Bound before the last run and not since: the run reads it again.
    const DeviceBuffer &source =
        input.direct ? input.device[input.latest] : input.staging[input.latest];
    uploads.copyFromHost(input.device[s].get(), source.get(), input.bytes);
    uploads.record(*input.staged[input.latest]);
    input.current[s] = true;
  }
  uploads.record(*uploaded);
  for (auto &compute : streams)
    compute->wait(*uploaded);
}

void ReplicaStep::prepare(const plan::LoadedPlan &plan) {
  const auto &order = plan.getEnqueueOrder(index);
  std::vector<Prepared> &calls = prepared[slot];
  calls.resize(order.size());
  kernelStates.resize(order.size());
  auto batchArg = [&](Prepared &entry, int t, plan::TensorArg *arg) {
    const plan::Tensor *tensor = t >= 0 ? step->tensors()->Get(t) : nullptr;
    if (tensor && tensor->batch_dim())
      entry.batchArgs.push_back(
          {arg, tensor->batch_axis(), tensor->batch_scale()});
  };
  auto argOf = [&](int t) {
    plan::TensorArg arg;
    if (t >= 0) {
      const plan::Tensor &tensor = *step->tensors()->Get(t);
      arg.present = true;
      arg.data = data[slot][t];
      arg.dtype = tensor.dtype();
      arg.dims = plan::toDims(tensor.dims());
      arg.layout = tensor.layout();
    }
    return arg;
  };
  for (size_t c = 0; c < order.size(); ++c) {
    auto [s, i] = order[c];
    const plan::Instruction &instruction =
        *step->streams()->Get(s)->instructions()->Get(i);
    Prepared &entry = calls[c];
    plan::KernelCall &call = entry.call;
    call.kernel = instruction.kernel();
    call.instruction = &instruction;
    call.communicator = communicator;
    call.state = &kernelStates[c];
    auto bind = [&](const flatbuffers::Vector<int32_t> *indices,
                    std::vector<plan::TensorArg> &args) {
      for (flatbuffers::uoffset_t k = 0; indices && k < indices->size(); ++k)
        args.push_back(argOf(indices->Get(k)));
      // Filled: the arguments stay put from here on.
      for (flatbuffers::uoffset_t k = 0; indices && k < indices->size(); ++k)
        batchArg(entry, indices->Get(k), &args[k]);
    };
    bind(instruction.operands(), call.operands);
    bind(instruction.results(), call.results);
    call.workspace = argOf(instruction.workspace());
    batchArg(entry, instruction.workspace(), &call.workspace);
    if (plan::isOptimizerKernel(call.kernel) && device->checksUpdates())
      call.nonFinite = nonFinite;
  }
  graphs.capturable = true;
  for (const Prepared &entry : calls) {
    plan::Kernel kernel = entry.call.kernel;
    if (plan::isCollectiveKernel(kernel) ||
        kernel == plan::Kernel::DropoutForward ||
        kernel == plan::Kernel::DropoutBackward)
      graphs.capturable = false;
  }
}

bool ReplicaStep::enqueueAsGraph(const plan::LoadedPlan &plan,
                                 const GraphKey &key, int64_t update,
                                 int64_t firstRow, uint64_t randomSeed) {
  auto found = graphs.recorded.find(key);
  if (found != graphs.recorded.end()) {
    device->replay(*found->second, *streams.front());
    return true;
  }
  if (graphs.seen[key]++ == 0)
    return false; // the first run of this key warms the backend
  std::vector<Stream *> order;
  for (auto &stream : streams)
    order.push_back(stream.get());
  device->beginCapture(order);
  issue(plan, key.rows, key.batch, update, firstRow, randomSeed, nullptr);
  std::string why;
  std::unique_ptr<StepGraph> graph = device->endCapture(order, why);
  if (!graph) {
    // Nothing ran: the caller enqueues the run kernel by kernel, as every
    // later one.
    std::fprintf(stderr,
                 "dpc: %s: step '%s' is not replayed as a graph (%s); its "
                 "kernels are enqueued one by one\n",
                 device->getName().c_str(),
                 flatbuffers::GetString(step->name()).c_str(), why.c_str());
    graphs.enabled = false;
    return false;
  }
  device->replay(*graph, *streams.front());
  graphs.recorded.emplace(key, std::move(graph));
  return true;
}

void ReplicaStep::enqueue(const plan::LoadedPlan &plan, int64_t rows,
                          int64_t batch, int64_t update, int64_t firstRow,
                          uint64_t randomSeed, Tracer *tracer) {
  // A trace times each kernel with host functions between them: kernel by
  // kernel then.
  if (graphs.enabled && graphs.capturable && !tracer &&
      device->capturesSteps() &&
      enqueueAsGraph(plan, {slot, rows, batch, update == 1}, update, firstRow,
                     randomSeed))
    return;
  issue(plan, rows, batch, update, firstRow, randomSeed, tracer);
}

void ReplicaStep::issue(const plan::LoadedPlan &plan, int64_t rows,
                        int64_t batch, int64_t update, int64_t firstRow,
                        uint64_t randomSeed, Tracer *tracer) {
  std::vector<Prepared> &calls = prepared[slot];
  const auto &order = plan.getEnqueueOrder(index);
  for (size_t c = 0; c < order.size(); ++c) {
    int s = order[c].first;
    const plan::Instruction &instruction = *calls[c].call.instruction;
    Stream &stream = *streams[s];
    if (const auto *waits = instruction.wait_events())
      for (int e : *waits)
        stream.wait(*events[e]);
    plan::KernelCall &call = calls[c].call;
    for (const Prepared::BatchArg &batchArg : calls[c].batchArgs)
      batchArg.arg->dims[batchArg.axis] = rows * batchArg.scale;
    call.batch = batch;
    call.optimizerStep = update;
    call.randomSeed = randomSeed;
    call.firstRow = firstRow;
    if (!tracer) {
      stream.launchPrepared(call);
    } else {
      bool collective =
          step->streams()->Get(s)->kind() == plan::StreamKind::Communication;
      enqueueTimed(*tracer, stream,
                   {plan::EnumNameKernel(instruction.kernel()), step->device(),
                    s, collective ? SpanKind::Communication : SpanKind::Compute,
                    0, 0},
                   [&] { stream.launchPrepared(call); });
    }
    if (const auto *signals = instruction.signal_events())
      for (int e : *signals)
        stream.record(*events[e]);
  }
}

void ReplicaStep::advance(int64_t rows) {
  lastSlot = slot;
  slot = 1 - slot;
  lastRows = rows;
}

} // namespace dpc::rt
