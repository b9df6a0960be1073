//===- Executor.cpp - runs the steps of a loaded plan ---------------------===//

#include "runtime/exec/Executor.h"
#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/comm/Communicator.h"
#include "runtime/exec/BatchSplit.h"
#include "runtime/exec/StreamOrder.h"
#include "runtime/exec/Trace.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <stdexcept>

namespace dpc::exec {

using plan::LoadedPlan;
using plan::Storage;

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

} // namespace

/// One replica: a step of the plan on its device.
struct Executor::StepState {
  const plan::Step *step = nullptr;
  Device *device = nullptr;
  comm::Communicator *communicator = nullptr;
  size_t group = 0;
  /// Inputs are double-buffered, so that the next run's inputs upload
  /// while a run reads the current ones: a run reads slot `slot`, and the
  /// caller binds into the slot the next run will read.
  struct Input {
    DeviceBuffer device[2];
    DeviceBuffer staging[2];          // host copies the uploads read
    std::unique_ptr<Event> staged[2]; // the last upload from staging[s]
    /// The device's memory is the host's (Device::isHostMemory): bindings
    /// are written into device[s] directly, and there is no staging.
    bool direct = false;
    bool current[2] = {false, false}; // device[s] holds the latest binding
    int latest = -1;                  // the staging of the latest binding
    size_t bytes = 0;                 // its size
  };
  std::map<int, Input> inputs; // by tensor index
  std::vector<void *> data[2]; // per slot: where each tensor starts
  int slot = 0;                // the slot the next run reads
  int lastSlot = 0;            // the slot the last run read
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<std::unique_ptr<Event>> events;
  std::unique_ptr<Event> uploaded; // after this replica's uploads
  int64_t lastRows = 0;
  /// Each instruction's call, in enqueue order, made on the first run from
  /// a slot: a run only sets the rows of its batch tensors, the batch and
  /// the optimizer step, so that the step loop allocates nothing. A run
  /// waits for the last one, so no stream still reads a call it rewrites.
  struct Prepared {
    plan::KernelCall call;
    /// The arguments that hold the batch: dims[axis] is scale x rows.
    struct BatchArg {
      plan::TensorArg *arg;
      int axis;
      int64_t scale;
    };
    std::vector<BatchArg> batchArgs;
  };
  std::vector<Prepared> prepared[2];
  /// The backend's state per instruction (KernelCall::state), both slots.
  std::vector<std::unique_ptr<plan::KernelState>> kernelStates;
  /// Rank mode on a CPU device, per slot: the all-reduce the scalar
  /// outputs ride on (null: they are gathered after the run).
  std::unique_ptr<ScalarRider> riders[2];
  /// Set by the optimizer updates of the last run that wrote NaN or
  /// infinity (KernelCall::nonFinite), on a device that checks them.
  std::atomic<uint32_t> nonFinite{0};
};

/// The replicas of one step, by device.
/// What an index input may hold: [0, limit), and what its entries are.
struct IndexBound {
  int64_t limit;
  const char *what; // "label" or "index"
};

struct Executor::StepGroup {
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
  std::map<std::string, IndexBound, std::less<>> indexBounds;

  /// Gradient accumulation, for the train step of a plan that has it: the
  /// global rows of each batch input (and the bytes of one row), held until
  /// run() splits them into micro-batches, and the scalar outputs of the
  /// micro-batches before the last.
  struct Staged {
    std::vector<uint8_t> bytes;
    int64_t rowBytes = 0;
  };
  bool accumulates = false;
  std::map<std::string, Staged, std::less<>> staged;
  std::map<std::string, double, std::less<>> earlierScalars;
  /// Rank mode: every scalar output of the last run, gathered at once.
  std::map<std::string, std::vector<double>, std::less<>> scalars;
  bool scalarsGathered = false;
};

namespace {

/// Records the inputs `instruction` reads as indices, if any: labels,
/// bounded by the class count of the logits (the columns of the Logits
/// operand), and embedding indices, by the rows of the Table operand.
void findIndexInputs(const plan::Step &step,
                     const plan::Instruction &instruction,
                     std::map<std::string, IndexBound, std::less<>> &bounds) {
  const plan::KernelSignature *signature =
      plan::getKernelSignature(instruction.kernel());
  const auto *operands = instruction.operands();
  if (!signature || !operands || !step.inputs())
    return;
  struct Role {
    const char *indices, *bounding, *what;
    bool rowsBound; // the bounding operand's dim 0, else its other dims
  };
  for (Role role : {Role{"Labels", "Logits", "label", false},
                    Role{"Indices", "Table", "index", true}}) {
    int indices = signature->findOperand(role.indices);
    int bounding = signature->findOperand(role.bounding);
    if (indices < 0 || bounding < 0 ||
        operands->size() <= static_cast<size_t>(std::max(indices, bounding)))
      continue;
    std::vector<int64_t> dims =
        plan::toDims(step.tensors()->Get(operands->Get(bounding))->dims());
    int64_t limit = role.rowsBound ? dims[0] : 1;
    for (size_t d = 1; !role.rowsBound && d < dims.size(); ++d)
      limit *= dims[d];
    for (const plan::Binding *binding : *step.inputs())
      if (binding->tensor() == operands->Get(indices)) {
        auto [it, inserted] = bounds.emplace(binding->name()->str(),
                                             IndexBound{limit, role.what});
        if (!inserted)
          it->second.limit = std::min(it->second.limit, limit);
      }
  }
}

/// Labels index rows of the logits and embedding indices rows of a table:
/// one outside would make a kernel read out of bounds (CPU) or produce NaN
/// (CUDA), so every backend gets them checked here, on the host, when they
/// are bound.
void checkIndices(std::string_view step, std::string_view name,
                  const void *data, size_t bytes, IndexBound bound) {
  const auto *source = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < bytes / sizeof(int32_t); ++i) {
    int32_t value;
    std::memcpy(&value, source + i * sizeof(int32_t), sizeof value);
    if (value >= 0 && value < bound.limit)
      continue;
    bool label = std::string_view(bound.what) == "label";
    throw std::invalid_argument(
        "step '" + std::string(step) + "': input '" + std::string(name) +
        (label ? "' row " : "' entry ") + std::to_string(i) + " holds " +
        bound.what + " " + std::to_string(value) + ", outside the " +
        std::to_string(bound.limit) +
        (label ? " classes" : " rows of its table"));
  }
}

int64_t bytesOf(const plan::Tensor &tensor) {
  return plan::getNumElements(plan::toDims(tensor.dims())) *
         plan::getDTypeSize(tensor.dtype());
}

/// The bytes of one row of a batch-major tensor (whose own share of rows
/// may be 0).
int64_t rowBytesOf(const plan::Tensor &tensor) {
  std::vector<int64_t> dims = plan::toDims(tensor.dims());
  dims.erase(dims.begin());
  return plan::getNumElements(dims) * plan::getDTypeSize(tensor.dtype());
}

using Bindings = flatbuffers::Vector<flatbuffers::Offset<plan::Binding>>;

/// The tensor index `name` is bound to in `list`, or -1.
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

/// torch.chunk's rule: ceil(batch / parts) rows per chunk, the last one
/// shorter, so that there may be fewer than `parts` chunks.
std::vector<int64_t> chunkBatch(int64_t batch, int64_t parts) {
  std::vector<int64_t> chunks;
  int64_t chunk = (batch + parts - 1) / parts;
  for (int64_t left = batch; left > 0; left -= chunk)
    chunks.push_back(std::min(chunk, left));
  return chunks;
}

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

/// "cuda" for "cuda:1".
std::string_view kindOf(std::string_view name) {
  return name.substr(0, name.find(':'));
}

/// Rank mode: one device kind. (A GPU rank's communicator is NCCL, made
/// with every rank; a CPU rank's is the host one.)
void checkOneDeviceKind(const LoadedPlan &plan) {
  const auto &names = *plan.get().devices();
  std::string_view first = names.Get(0)->name()->string_view();
  for (const plan::Device *device : names)
    if (kindOf(device->name()->string_view()) != kindOf(first))
      plan.fail("devices '" + std::string(first) + "' and '" +
                device->name()->str() +
                "': one process per device runs plans of one device kind, "
                "CPU or GPU, not both");
}

} // namespace

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

Executor::Executor(std::shared_ptr<const LoadedPlan> loaded,
                   const DeviceFactory &factory, ProcessRank rank)
    : plan(std::move(loaded)) {
  const plan::Plan &root = plan->get();
  int numDevices = static_cast<int>(root.devices()->size());
  DeviceOptions options;
  options.numLocalDevices = numDevices;
  options.numPlanDevices = numDevices;
  if (rank.communicator) {
    int worldSize = rank.communicator->getWorldSize();
    if (worldSize != numDevices)
      plan->fail("the plan has " + std::to_string(numDevices) +
                 " device(s), but WORLD_SIZE is " + std::to_string(worldSize) +
                 " (a process-per-device run needs one rank per device)");
    localDevice = rank.communicator->getRank();
    options.numLocalDevices = std::max(1, rank.localWorldSize);
    checkOneDeviceKind(*plan);
  }
  for (int d = 0; d < numDevices; ++d) {
    if (localDevice >= 0 && d != localDevice) {
      devices.push_back(nullptr); // another rank's
      continue;
    }
    std::string name = root.devices()->Get(d)->name()->str();
    if (localDevice >= 0)
      name = getRankDeviceName(name, localDevice, rank.localRank);
    try {
      devices.push_back(factory(name, options));
    } catch (const std::exception &error) {
      plan->fail(error.what());
    }
  }
  if (localDevice >= 0) {
    // Every rank gets here with a device of the same kind, so that all or
    // none take part in making a GPU communicator (a host collective).
    communicators.resize(numDevices);
    hostCommunicator = std::move(rank.communicator);
    communicators[localDevice] = createRankCommunicator(
        *devices[localDevice], *hostCommunicator, rank.timeout);
  } else {
    // In-process for CPU devices, NCCL for GPUs.
    std::vector<Device *> members;
    for (const auto &device : devices)
      members.push_back(device.get());
    try {
      communicators = createCommunicators(members);
    } catch (const std::exception &error) {
      plan->fail(error.what());
    }
  }

  // Each device's copy of the training state, on that device.
  std::map<std::string, std::vector<size_t>> byName;
  if (const auto *states = root.persistent()) {
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
      } else if (state->init() == plan::InitKind::Ones) {
        std::vector<uint8_t> ones(count * size);
        fillOnes(ones.data(), count, state->dtype());
        home.copyFromHost(buffer.get(), ones.data(), ones.size());
      } // Zeros: allocate() zero-fills.
      byName[state->name()->str()].push_back(persistent.size());
      persistent.push_back(std::move(buffer));
    }
    copies.resize(persistent.size());
    for (size_t i = 0; i < persistent.size(); ++i) {
      if (!devices[states->Get(i)->device()])
        continue;
      const std::vector<size_t> &all = byName[states->Get(i)->name()->str()];
      copies[i] = all;
      size_t lowest = all[0];
      for (size_t c : all)
        if (states->Get(c)->device() < states->Get(lowest)->device())
          lowest = c;
      if (lowest == i)
        primary.push_back(i);
    }
  }
  copyPrimaryToReplicas(false);

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
    const plan::Step &step = *root.steps()->Get(s);
    if (!devices[step.device()]) {
      steps.push_back(nullptr); // another rank's replica
      continue;
    }
    auto state = std::make_unique<StepState>();
    state->step = &step;
    state->device = devices[step.device()].get();
    state->communicator = getCommunicator(step.device());
    state->lastRows = plan->getMaxBatch(s); // outputs before a run
    size_t numTensors = step.tensors() ? step.tensors()->size() : 0;
    int stepIndex = static_cast<int>(s);
    for (int s = 0; s < 2; ++s) {
      std::vector<void *> &data = state->data[s];
      data.assign(numTensors, nullptr);
      // Real storage first, then aliases (which the loader proved acyclic).
      for (size_t t = 0; t < numTensors; ++t) {
        const plan::Tensor &tensor = *step.tensors()->Get(t);
        switch (tensor.storage()) {
        case Storage::Arena:
          data[t] = static_cast<uint8_t *>(arenas[step.device()].get()) +
                    tensor.offset();
          break;
        case Storage::Persistent:
          data[t] = persistent[tensor.persistent()].get();
          break;
        case Storage::Input: {
          StepState::Input &input = state->inputs[t];
          Device &device = *state->device;
          input.device[s] = DeviceBuffer(device, bytesOf(tensor));
          input.direct = device.isHostMemory();
          if (!input.direct)
            input.staging[s] =
                DeviceBuffer(device, bytesOf(tensor), DeviceBuffer::OnHost);
          input.staged[s] = device.createEvent();
          data[t] = input.device[s].get();
          break;
        }
        default:
          break;
        }
      }
      for (size_t t = 0; t < numTensors; ++t)
        data[t] = data[plan->getAliasBase(stepIndex, t)];
    }
    state->uploaded = state->device->createEvent();
    if (const auto *streams = step.streams())
      for (const plan::Stream *stream : *streams)
        state->streams.push_back(state->device->createStream(stream->kind()));
    for (int e = 0; e < step.num_events(); ++e)
      state->events.push_back(state->device->createEvent());
    steps.push_back(std::move(state));
  }

  // Group the replicas, in the order their names first appear.
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

  gradAccum = root.grad_accum();
  if (gradAccum > 1) {
    int train = findStep("train_step");
    if (train < 0 || findStep("accum_first") < 0 || findStep("accum_step") < 0)
      plan->fail("grad_accum is " + std::to_string(gradAccum) +
                 " but the plan lacks train_step, accum_first or accum_step");
    getGroup(train).accumulates = true;
  }
}

Executor::~Executor() {
  // Streams stop before the memory their work points to is freed.
  for (auto &step : steps)
    if (step)
      step->streams.clear();
  uploadStreams.clear();
}

Executor::StepState &Executor::getStep(int step) const {
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

Executor::StepGroup &Executor::getGroup(int step) const {
  if (step < 0 || static_cast<size_t>(step) >= steps.size())
    throw std::invalid_argument("step index " + std::to_string(step) +
                                " is out of range");
  return *groups[groupOf[step]];
}

bool Executor::isLocal(int planStep) const {
  return steps[planStep] != nullptr;
}

size_t Executor::getLocalReplica(const StepGroup &group) const {
  for (size_t r = 0; r < group.replicas.size(); ++r)
    if (isLocal(group.replicas[r]))
      return r;
  throw std::logic_error("step '" + group.name + "' has no replica on device " +
                         std::to_string(localDevice));
}

Executor::RowRanges Executor::getLocalRows(int step, int64_t batch) const {
  const StepGroup &group = getGroup(step);
  if (localDevice < 0 || group.replicas.size() == 1 || group.maxBatch == 0)
    return {{0, batch}};
  size_t local = getLocalReplica(group);
  std::vector<int64_t> micro = group.accumulates ? chunkBatch(batch, gradAccum)
                                                 : std::vector<int64_t>{batch};
  RowRanges ranges;
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

int Executor::findStep(std::string_view name) const {
  std::vector<int> replicas = plan->findReplicas(name);
  return replicas.empty() ? -1 : replicas[0];
}

int64_t Executor::getMaxBatch(int step) const {
  const StepGroup &group = getGroup(step);
  return group.accumulates ? group.maxBatch * gradAccum : group.maxBatch;
}

int Executor::getNumReplicas(int step) const {
  return static_cast<int>(getGroup(step).replicas.size());
}

int Executor::getReplicaStep(int step, int replica) const {
  const StepGroup &group = getGroup(step);
  if (replica < 0 || static_cast<size_t>(replica) >= group.replicas.size())
    throw std::invalid_argument("replica " + std::to_string(replica) +
                                " is out of range");
  return group.replicas[replica];
}

const std::vector<int64_t> &Executor::getLastSplit(int step) const {
  return getGroup(step).lastSplit;
}

const plan::Tensor *Executor::findBindingOf(const StepGroup &group,
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

const plan::Tensor *Executor::findInput(int step, std::string_view name) const {
  return findBindingOf(getGroup(step), name, true);
}

const plan::Tensor *Executor::findOutput(int step,
                                         std::string_view name) const {
  return findBindingOf(getGroup(step), name, false);
}

void Executor::setInput(int step, std::string_view name, const void *data,
                        size_t bytes) {
  StepGroup &group = getGroup(step);
  const plan::Tensor *tensor = findBindingOf(group, name, true);
  if (!tensor)
    throw std::invalid_argument("step '" + group.name + "' has no input '" +
                                std::string(name) + "'");
  if (auto bound = group.indexBounds.find(name);
      bound != group.indexBounds.end() && tensor->dtype() == plan::DType::I32)
    checkIndices(group.name, name, data, bytes, bound->second);
  if (group.accumulates && tensor->batch_dim()) {
    // Up to K micro-batches of rows, for run() to split.
    int64_t rowBytes = rowBytesOf(*tensor);
    if (rowBytes == 0 || static_cast<int64_t>(bytes) % rowBytes != 0 ||
        static_cast<int64_t>(bytes) / rowBytes > getMaxBatch(step))
      throw std::invalid_argument(
          "input '" + std::string(name) + "' takes up to " +
          std::to_string(getMaxBatch(step)) + " rows of " +
          std::to_string(rowBytes) + " bytes, got " + std::to_string(bytes) +
          " bytes");
    const auto *source = static_cast<const uint8_t *>(data);
    group.staged[std::string(name)] = {
        std::vector<uint8_t>(source, source + bytes), rowBytes};
    return;
  }
  bindInput(group, *tensor, name, data, bytes);
}

void Executor::bindInput(StepGroup &group, const plan::Tensor &binding,
                         std::string_view name, const void *data,
                         size_t bytes) {
  const plan::Tensor *tensor = &binding;
  const auto *source = static_cast<const uint8_t *>(data);
  int64_t capacity = bytesOf(*tensor);
  if (!tensor->batch_dim() || group.replicas.size() == 1) {
    if (static_cast<int64_t>(bytes) > capacity)
      throw std::invalid_argument("input '" + std::string(name) + "' holds " +
                                  std::to_string(capacity) + " bytes, got " +
                                  std::to_string(bytes));
    for (int r : group.replicas) {
      if (!isLocal(r))
        continue;
      StepState &state = *steps[r];
      int t = findBinding(state.step->inputs(), name);
      if (t >= 0)
        upload(state, t, source, bytes);
    }
    return;
  }
  if (localDevice >= 0) {
    // This rank's rows only (getLocalRows).
    StepState &state = *steps[group.replicas[getLocalReplica(group)]];
    int t = findBinding(state.step->inputs(), name);
    int64_t rowBytes = rowBytesOf(*tensor);
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
    upload(state, t, source, bytes);
    group.boundRows[std::string(name)] = rows;
    return;
  }
  // The global rows, each replica's part to its device.
  int64_t rowBytes = rowBytesOf(*tensor);
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
    StepState &state = *steps[group.replicas[r]];
    int t = findBinding(state.step->inputs(), name);
    if (t >= 0)
      upload(state, t, source, split[r] * rowBytes);
    source += split[r] * rowBytes;
  }
  group.boundRows[std::string(name)] = rows;
}

void Executor::upload(StepState &state, int tensor, const void *data,
                      size_t bytes) {
  StepState::Input &input = state.inputs.at(tensor);
  int s = state.slot;
  // The staging buffer (direct: the slot) may still feed an earlier upload;
  // no run reads slot s until the next one starts.
  input.staged[s]->synchronize();
  if (input.direct) {
    if (bytes)
      std::memcpy(input.device[s].get(), data, bytes);
    input.current[s] = true;
    input.current[1 - s] = false;
    input.latest = s;
    input.bytes = bytes;
    return;
  }
  if (bytes)
    std::memcpy(input.staging[s].get(), data, bytes);
  Stream &stream = *uploadStreams[state.step->device()];
  auto copy = [&] {
    stream.copyFromHost(input.device[s].get(), input.staging[s].get(), bytes);
  };
  if (tracer)
    enqueueTimed(*tracer, stream,
                 {"upload " + flatbuffers::GetString(
                                  state.step->tensors()->Get(tensor)->name()),
                  state.step->device(), -1, SpanKind::Upload, 0, 0},
                 copy);
  else
    copy();
  stream.record(*input.staged[s]);
  input.current[s] = true;
  input.current[1 - s] = false;
  input.latest = s;
  input.bytes = bytes;
}

void Executor::finishUploads(StepState &state) {
  Stream &stream = *uploadStreams[state.step->device()];
  int s = state.slot;
  for (auto &[tensor, input] : state.inputs) {
    if (input.current[s] || input.latest < 0)
      continue;
    // Bound before the last run and not since: the run reads it again.
    const DeviceBuffer &source =
        input.direct ? input.device[input.latest] : input.staging[input.latest];
    stream.copyFromHost(input.device[s].get(), source.get(), input.bytes);
    stream.record(*input.staged[input.latest]);
    input.current[s] = true;
  }
  stream.record(*state.uploaded);
  for (auto &compute : state.streams)
    compute->wait(*state.uploaded);
}

void Executor::copyPrimaryToReplicas(bool buffersOnly) {
  const auto *states = plan->get().persistent();
  std::vector<uint8_t> staging;
  for (size_t p : primary) {
    if (copies[p].size() < 2 ||
        (buffersOnly && states->Get(p)->kind() != plan::PersistentKind::Buffer))
      continue;
    staging.resize(persistent[p].size());
    readPersistent(p, staging.data());
    writePersistent(p, staging.data());
  }
}

comm::Communicator *Executor::getCommunicator(int device) const {
  // Rank mode on a CPU device: its memory is host memory.
  if (device == localDevice && !communicators[device])
    return hostCommunicator.get();
  return communicators[device].get();
}

void Executor::broadcastState(bool buffersOnly) {
  const auto *states = plan->get().persistent();
  std::vector<comm::ReduceBuffer> buffers;
  for (size_t p : primary) {
    const plan::PersistentTensor &state = *states->Get(p);
    if (buffersOnly && state.kind() != plan::PersistentKind::Buffer)
      continue;
    buffers.push_back({persistent[p].get(),
                       plan::getNumElements(plan::toDims(state.dims())),
                       state.dtype()});
  }
  if (!buffers.empty())
    getCommunicator(localDevice)->broadcast(buffers, 0);
}

void Executor::prepare(int index) {
  StepState &state = *steps[index];
  const plan::Step &planStep = *state.step;
  const auto &order = plan->getEnqueueOrder(index);
  std::vector<StepState::Prepared> &prepared = state.prepared[state.slot];
  prepared.resize(order.size());
  state.kernelStates.resize(order.size());
  auto batchArg = [&](StepState::Prepared &entry, int t, plan::TensorArg *arg) {
    const plan::Tensor *tensor = t >= 0 ? planStep.tensors()->Get(t) : nullptr;
    if (tensor && tensor->batch_dim())
      entry.batchArgs.push_back(
          {arg, tensor->batch_axis(), tensor->batch_scale()});
  };
  auto argOf = [&](int t) {
    plan::TensorArg arg;
    if (t >= 0) {
      const plan::Tensor &tensor = *planStep.tensors()->Get(t);
      arg.present = true;
      arg.data = state.data[state.slot][t];
      arg.dtype = tensor.dtype();
      arg.dims = plan::toDims(tensor.dims());
      arg.layout = tensor.layout();
    }
    return arg;
  };
  for (size_t c = 0; c < order.size(); ++c) {
    auto [s, i] = order[c];
    const plan::Instruction &instruction =
        *planStep.streams()->Get(s)->instructions()->Get(i);
    StepState::Prepared &entry = prepared[c];
    plan::KernelCall &call = entry.call;
    call.kernel = instruction.kernel();
    call.instruction = &instruction;
    call.communicator = state.communicator;
    call.state = &state.kernelStates[c];
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
    if (plan::isOptimizerKernel(call.kernel) && state.device->checksUpdates())
      call.nonFinite = &state.nonFinite;
  }
  attachScalarRider(index);
}

void Executor::attachScalarRider(int index) {
  StepState &state = *steps[index];
  const StepGroup &group = *groups[state.group];
  // Rank mode, with the collectives in host memory (a CPU device): what
  // the rider reads and what the host communicator sums.
  if (localDevice < 0 || group.replicas.size() < 2 ||
      state.communicator != hostCommunicator.get())
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
  size_t local = getLocalReplica(group);
  const plan::Step &planStep = *state.step;
  for (const ScalarField &field : fields) {
    if (field.blockOf[local] < 0)
      continue;
    int t = findBinding(planStep.outputs(), field.name);
    const plan::Tensor &tensor = *planStep.tensors()->Get(t);
    sources.push_back(
        {size_t(field.begin + field.blockOf[local] * field.count),
         static_cast<const uint8_t *>(state.data[state.slot][t]),
         tensor.dtype(), field.count, field.name, t});
  }
  // The last sum all-reduce that starts after every write of them.
  const auto &order = plan->getEnqueueOrder(index);
  StreamOrder streamOrder(planStep, order);
  std::vector<size_t> writers;
  for (const Source &source : sources)
    for (size_t writer : streamOrder.findWriters(source.tensor))
      writers.push_back(writer);
  std::vector<StepState::Prepared> &prepared = state.prepared[state.slot];
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
              values[source.at + i] = readScalar(source.data + i * size,
                                                 source.dtype, source.name);
          }
        });
    prepared[c].call.communicator = rider.get();
    state.riders[state.slot] = std::move(rider);
    return;
  }
}

void Executor::enqueue(int index, int64_t rows, int64_t batch, int64_t update,
                       int64_t firstRow) {
  StepState &state = *steps[index];
  const plan::Step &planStep = *state.step;
  if (state.prepared[state.slot].empty())
    prepare(index);
  std::vector<StepState::Prepared> &prepared = state.prepared[state.slot];
  const auto &order = plan->getEnqueueOrder(index);
  for (size_t c = 0; c < order.size(); ++c) {
    auto [s, i] = order[c];
    const plan::Instruction &instruction = *prepared[c].call.instruction;
    Stream &stream = *state.streams[s];
    if (const auto *waits = instruction.wait_events())
      for (int e : *waits)
        stream.wait(*state.events[e]);
    plan::KernelCall &call = prepared[c].call;
    for (const StepState::Prepared::BatchArg &batchArg : prepared[c].batchArgs)
      batchArg.arg->dims[batchArg.axis] = rows * batchArg.scale;
    call.batch = batch;
    call.optimizerStep = update;
    call.randomSeed = randomSeed;
    call.firstRow = firstRow;
    if (!tracer) {
      stream.launchPrepared(call);
    } else {
      bool collective =
          planStep.streams()->Get(s)->kind() == plan::StreamKind::Communication;
      enqueueTimed(*tracer, stream,
                   {plan::EnumNameKernel(instruction.kernel()),
                    planStep.device(), int(s),
                    collective ? SpanKind::Communication : SpanKind::Compute, 0,
                    0},
                   [&] { stream.launchPrepared(call); });
    }
    if (const auto *signals = instruction.signal_events())
      for (int e : *signals)
        stream.record(*state.events[e]);
  }
}

void Executor::run(int step, int64_t batch) {
  start(step, batch);
  finish(step);
}

void Executor::start(int step, int64_t batch) {
  StepGroup &group = getGroup(step);
  if (running)
    throw std::logic_error("step '" + running->name +
                           "' is still running: finish it before step '" +
                           group.name + "' starts");
  if (group.accumulates)
    startMicroBatches(step, batch);
  else
    startReplicas(step, batch, batch);
}

void Executor::finish(int step) {
  StepGroup &group = getGroup(step);
  if (running != &group)
    throw std::logic_error("step '" + group.name + "' was not started");
  finishReplicas(group);
}

void Executor::checkIdle(std::string_view what) const {
  if (running)
    throw std::logic_error("step '" + running->name +
                           "' is running: finish it before " +
                           std::string(what));
}

void Executor::startMicroBatches(int step, int64_t batch) {
  StepGroup &group = getGroup(step);
  if (batch < 1 || batch > getMaxBatch(step))
    throw std::invalid_argument(
        "batch " + std::to_string(batch) + " is outside 1.." +
        std::to_string(getMaxBatch(step)) + " for step '" + group.name + "'");
  // torch.chunk's rule; only non-empty micro-batches run, the last one as
  // the train step itself, which adds the accumulated gradients. Rank mode
  // holds this rank's part of each (getLocalRows).
  std::vector<int64_t> micro = chunkBatch(batch, gradAccum);
  std::vector<int64_t> held = micro;
  if (localDevice >= 0 && group.replicas.size() > 1) {
    RowRanges ranges = getLocalRows(step, batch);
    for (size_t m = 0; m < micro.size(); ++m)
      held[m] = ranges[m].second;
  }
  int64_t heldRows = 0;
  for (int64_t rows : held)
    heldRows += rows;
  for (const auto &[name, staged] : group.staged)
    if (int64_t(staged.bytes.size()) != heldRows * staged.rowBytes)
      throw std::invalid_argument(
          "input '" + name + "' holds " +
          std::to_string(staged.bytes.size() / staged.rowBytes) +
          " rows, but step '" + group.name + "' runs " +
          std::to_string(heldRows) +
          (heldRows != batch ? " of " + std::to_string(batch) : ""));
  if (micro.size() == 1) {
    // No accum_first ran to restart the sums (optimizer state
    // "<param>.grad_accum"): start them from zero.
    constexpr std::string_view kSuffix = ".grad_accum";
    for (size_t index : primary) {
      std::string_view stateName =
          plan->get().persistent()->Get(index)->name()->string_view();
      if (stateName.size() > kSuffix.size() &&
          stateName.substr(stateName.size() - kSuffix.size()) == kSuffix)
        writePersistent(index,
                        std::vector<uint8_t>(getPersistentBytes(index)).data());
    }
  }
  group.earlierScalars.clear();
  int64_t offset = 0, firstRow = 0;
  for (size_t m = 0; m < micro.size(); ++m) {
    bool last = m + 1 == micro.size();
    int target = last ? step : findStep(m == 0 ? "accum_first" : "accum_step");
    StepGroup &targetGroup = getGroup(target);
    for (const auto &[name, staged] : group.staged) {
      const plan::Tensor *tensor = findBindingOf(targetGroup, name, true);
      if (tensor)
        bindInput(targetGroup, *tensor, name,
                  staged.bytes.data() + offset * staged.rowBytes,
                  held[m] * staged.rowBytes);
    }
    // Every micro-batch's loss is a share of the global batch's mean.
    startReplicas(target, micro[m], batch, firstRow);
    if (last)
      break; // finish() waits for it
    finishReplicas(targetGroup);
    for (const std::string &name : getScalarOutputNames(targetGroup))
      group.earlierScalars[name] += getScalarOutput(target, name);
    offset += held[m];
    firstRow += micro[m];
  }
}

void Executor::startReplicas(int step, int64_t batch, int64_t lossBatch,
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
  // Rank mode binds this rank's rows; otherwise the global ones.
  int64_t expectedRows = localDevice >= 0 && numReplicas > 1
                             ? split[getLocalReplica(group)]
                             : batch;
  for (const auto &[name, rows] : group.boundRows)
    if (rows != expectedRows)
      throw std::invalid_argument(
          "input '" + name + "' holds " + std::to_string(rows) +
          " rows, but step '" + group.name + "' runs " +
          std::to_string(expectedRows) +
          (expectedRows != batch ? " of " + std::to_string(batch) : ""));
  if (group.updatesParameters) {
    ++optimizerStep;
    // AdamW reads the count from an i64 input the caller binds: the
    // executor is that caller, so that the count lives in one place.
    const plan::Tensor *stepInput = findBindingOf(group, "step", true);
    if (stepInput && stepInput->dtype() == plan::DType::I64 &&
        bytesOf(*stepInput) == sizeof(int64_t))
      setInput(step, "step", &optimizerStep, sizeof(int64_t));
  }
  if (localDevice >= 0 && devices.size() > 1) {
    broadcastState(stateShared);
    stateShared = true;
  } else if (devices.size() > 1) {
    copyPrimaryToReplicas(true);
  }

  // Every replica's work is enqueued before any is waited for: replicas
  // meet in collectives.
  int64_t update = group.updatesParameters ? optimizerStep : optimizerStep + 1;
  for (size_t r = 0; r < numReplicas; firstRow += split[r], ++r) {
    if (!isLocal(group.replicas[r]))
      continue;
    StepState &state = *steps[group.replicas[r]];
    finishUploads(state);
    if (group.updatesParameters)
      state.nonFinite.store(0, std::memory_order_relaxed);
    enqueue(group.replicas[r], split[r], lossBatch, update, firstRow);
    state.lastSlot = state.slot;
    state.slot = 1 - state.slot;
    state.lastRows = split[r];
  }
  group.lastSplit = split;
  group.scalarsGathered = false;
  running = &group;
}

void Executor::finishReplicas(StepGroup &group) {
  running = nullptr;
  size_t numReplicas = group.replicas.size();
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
  if (!failure.empty()) {
    // Replicas may have stopped at different points: make them equal (in
    // rank mode a failed collective ends the run instead).
    if (numReplicas > 1 && localDevice < 0)
      copyPrimaryToReplicas(false);
    throw std::runtime_error("step '" + group.name + "': " + failure);
  }
  // Rank mode: the scalar outputs, if they rode on an all-reduce.
  if (localDevice >= 0 && numReplicas > 1) {
    StepState &state = *steps[group.replicas[getLocalReplica(group)]];
    ScalarRider *rider = state.riders[state.lastSlot].get();
    if (rider && rider->gathered) {
      rider->gathered = false;
      storeGatheredScalars(group, rider->values);
    }
  }
}

size_t Executor::getReplicaOutputBytes(int step, int replica,
                                       std::string_view name) const {
  const StepState &state = getStep(getReplicaStep(step, replica));
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

void Executor::getReplicaOutput(int step, int replica, std::string_view name,
                                void *data, size_t bytes) const {
  size_t expected = getReplicaOutputBytes(step, replica, name);
  if (bytes != expected)
    throw std::invalid_argument("output '" + std::string(name) + "' has " +
                                std::to_string(expected) + " bytes, not " +
                                std::to_string(bytes));
  checkIdle("reading outputs");
  const StepState &state = getStep(getReplicaStep(step, replica));
  int t = findBinding(state.step->outputs(), name);
  state.device->copyToHost(data, state.data[state.lastSlot][t], bytes);
}

size_t Executor::getOutputBytes(int step, std::string_view name) const {
  const StepGroup &group = getGroup(step);
  const plan::Tensor *tensor = findBindingOf(group, name, false);
  if (!tensor)
    throw std::invalid_argument("step '" + group.name + "' has no output '" +
                                std::string(name) + "'");
  size_t bytes = 0;
  for (size_t r = 0; r < group.replicas.size(); ++r) {
    if (!isLocal(group.replicas[r]) ||
        findBinding(steps[group.replicas[r]]->step->outputs(), name) < 0)
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
  const StepGroup &group = getGroup(step);
  bool rows = findBindingOf(group, name, false)->batch_dim();
  auto *target = static_cast<uint8_t *>(data);
  for (size_t r = 0; r < group.replicas.size(); ++r) {
    if (!isLocal(group.replicas[r]) ||
        findBinding(steps[group.replicas[r]]->step->outputs(), name) < 0)
      continue;
    size_t part = getReplicaOutputBytes(step, static_cast<int>(r), name);
    getReplicaOutput(step, static_cast<int>(r), name, target, part);
    target += part;
    if (!rows)
      break;
  }
}

/// Output `name` of `group` as scalars, if it is one (see getScalarOutput):
/// the tensor and its entry count, or {null, 0}.
static std::pair<const plan::Tensor *, int64_t>
asScalar(const plan::Tensor *tensor, size_t numReplicas) {
  if (!tensor || tensor->batch_dim() || plan::getDTypeSize(tensor->dtype()) < 4)
    return {nullptr, 0};
  int64_t count = plan::getNumElements(plan::toDims(tensor->dims()));
  bool perReplica = count == 1,
       gathered = numReplicas > 1 && count == int64_t(numReplicas);
  return perReplica || gathered ? std::make_pair(tensor, count)
                                : std::make_pair(nullptr, int64_t(0));
}

std::vector<double> Executor::readScalars(int step, std::string_view name,
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

std::vector<Executor::ScalarField>
Executor::getScalarFields(const StepGroup &group) const {
  // The plan fixes the list, so every rank builds the same.
  size_t numReplicas = group.replicas.size();
  std::vector<ScalarField> fields;
  size_t end = 0;
  for (int r : group.replicas) {
    const auto *outputs = plan->get().steps()->Get(r)->outputs();
    for (flatbuffers::uoffset_t o = 0; outputs && o < outputs->size(); ++o) {
      std::string output = outputs->Get(o)->name()->str();
      auto [scalar, entries] =
          asScalar(findBindingOf(group, output, false), numReplicas);
      if (!scalar ||
          std::any_of(fields.begin(), fields.end(),
                      [&](const ScalarField &f) { return f.name == output; }))
        continue;
      // As readScalars lays them out: a block per replica binding it, or
      // one (the first's) for a gathered vector.
      ScalarField field{output, scalar, entries, end, end,
                        std::vector<int64_t>(numReplicas, -1)};
      bool gathered = numReplicas > 1 && entries == int64_t(numReplicas);
      int64_t blocks = 0;
      for (size_t k = 0; k < numReplicas; ++k) {
        const plan::Step &replica = *plan->get().steps()->Get(group.replicas[k]);
        if (findBinding(replica.outputs(), output) < 0)
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

void Executor::storeGatheredScalars(StepGroup &group,
                                    const std::vector<double> &all) const {
  group.scalars.clear();
  for (const ScalarField &field : getScalarFields(group))
    group.scalars[field.name] = std::vector<double>(all.begin() + field.begin,
                                                    all.begin() + field.end);
  group.scalarsGathered = true;
}

std::vector<std::string>
Executor::getScalarOutputNames(const StepGroup &group) const {
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

std::vector<double>
Executor::getReplicaScalarOutputs(int step, std::string_view name) const {
  StepGroup &group = getGroup(step);
  size_t numReplicas = group.replicas.size();
  const plan::Tensor *binding = findBindingOf(group, name, false);
  if (!binding)
    throw std::invalid_argument("step '" + group.name + "' has no output '" +
                                std::string(name) + "'");
  auto [tensor, count] = asScalar(binding, numReplicas);
  if (!tensor)
    throw std::invalid_argument("output '" + std::string(name) +
                                "' is not a scalar");
  if (localDevice < 0 || numReplicas == 1)
    return readScalars(step, name, *tensor, count);

  // Rank mode: every scalar output of the last run at once, in one
  // collective, unless they rode on one of the run's all-reduces
  // (attachScalarRider). x + 0 is x: summing the ranks' vectors, in rank
  // order, gathers them.
  if (!group.scalarsGathered) {
    std::vector<ScalarField> fields = getScalarFields(group);
    std::vector<double> all(fields.empty() ? 0 : fields.back().end, 0.0);
    for (const ScalarField &field : fields) {
      std::vector<double> values =
          readScalars(step, field.name, *field.tensor, field.count);
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

namespace {

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

} // namespace

std::vector<size_t> Executor::getCheckedPersistent(int step) const {
  const StepGroup &group = getGroup(step);
  const StepState &state = *steps[group.replicas[getLocalReplica(group)]];
  std::vector<size_t> checked;
  if (!state.device->checksUpdates())
    return checked;
  const plan::Step &planStep = *state.step;
  for (const plan::Stream *stream : *planStep.streams())
    for (const plan::Instruction *instruction : *stream->instructions()) {
      if (!plan::isOptimizerKernel(instruction->kernel()))
        continue;
      for (unsigned position : getUpdatedOperands(instruction->kernel())) {
        if (position >= instruction->operands()->size())
          continue;
        int t = instruction->operands()->Get(position);
        if (t < 0)
          continue;
        const plan::Tensor &tensor = *planStep.tensors()->Get(t);
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

bool Executor::wroteNonFinite(int step) const {
  const StepGroup &group = getGroup(step);
  checkIdle("reading the non-finite flag");
  const StepState &state = *steps[group.replicas[getLocalReplica(group)]];
  return state.nonFinite.load(std::memory_order_relaxed) != 0;
}

double Executor::getScalarOutput(int step, std::string_view name) const {
  const StepGroup &group = getGroup(step);
  auto earlier = group.earlierScalars.find(name);
  double sum = earlier == group.earlierScalars.end() ? 0 : earlier->second;
  for (double value : getReplicaScalarOutputs(step, name))
    sum += value;
  return sum;
}

size_t Executor::getPersistentBytes(size_t index) const {
  return persistent.at(index).size();
}

void Executor::readPersistent(size_t index, void *data) const {
  checkIdle("reading the training state");
  const DeviceBuffer &buffer = persistent.at(index);
  if (!buffer.getDevice())
    throw std::invalid_argument("persistent tensor " + std::to_string(index) +
                                " lives in another rank's process");
  buffer.getDevice()->copyToHost(data, buffer.get(), buffer.size());
}

void Executor::writePersistent(size_t index, const void *data) {
  checkIdle("writing the training state");
  persistent.at(index);
  for (size_t copy : copies[index]) {
    DeviceBuffer &buffer = persistent[copy];
    if (buffer.getDevice()) // not another rank's
      buffer.getDevice()->copyFromHost(buffer.get(), data, buffer.size());
  }
}

} // namespace dpc::exec
