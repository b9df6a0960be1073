//===- PlanInstructionChecks.cpp - a step's instructions and dataflow
//-------===//
//
// The checks of each step's kernel instructions: signatures, operands,
// events, the order the streams impose, and that every tensor is written
// before it is read.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanValidator.h"

namespace dpc::plan {

void PlanValidator::checkInstructions(const Step &step,
                                      const std::string &stepWhere,
                                      int numTensors, int64_t maxBatch) {
  const auto *streams = step.streams();
  int numEvents = step.num_events();
  std::vector<int> signaller(numEvents, -1);
  std::vector<bool> waited(numEvents, false);
  for (flatbuffers::uoffset_t s = 0; streams && s < streams->size(); ++s) {
    const Stream &stream = *streams->Get(s);
    const auto *instructions = stream.instructions();
    // The tensor whose copy each cast slot of this stream holds so far.
    std::vector<int> castSlotTensor(kMaxCastSlots + 1, -1);
    for (flatbuffers::uoffset_t i = 0; instructions && i < instructions->size();
         ++i) {
      const Instruction &instruction = *instructions->Get(i);
      std::string where = stepWhere + ", stream " + std::to_string(s) +
                          ", instruction " + std::to_string(i);
      const char *kernelName = EnumNameKernel(instruction.kernel());
      where += *kernelName ? std::string(" (") + kernelName + ")" : "";
      checkInstruction(step, instruction, where, numTensors, maxBatch);
      checkCastSlot(instruction, where, castSlotTensor);
      auto checkEvents = [&](const flatbuffers::Vector<int32_t> *events,
                             bool signal) {
        for (flatbuffers::uoffset_t k = 0; events && k < events->size(); ++k) {
          int e = events->Get(k);
          if (e < 0 || e >= numEvents)
            loaded.fail(where + ": event " + std::to_string(e) +
                        " is out of range (the step has " +
                        std::to_string(numEvents) + " events)");
          if (!signal) {
            waited[e] = true;
            continue;
          }
          if (signaller[e] != -1)
            loaded.fail(where + ": event " + std::to_string(e) +
                        " is signalled twice in one step");
          signaller[e] = static_cast<int>(s);
        }
      };
      checkEvents(instruction.wait_events(), false);
      checkEvents(instruction.signal_events(), true);
    }
  }
  for (int e = 0; e < numEvents; ++e)
    if (waited[e] && signaller[e] == -1)
      loaded.fail(stepWhere + ": event " + std::to_string(e) +
                  " is waited for but never signalled");
  loaded.enqueueOrder.push_back(orderForEnqueue(step, stepWhere));
  checkDataflow(step, stepWhere, loaded.enqueueOrder.back());
}

namespace {

/// The writes of a step's tensors (by alias base) as (stream, instruction
/// index): the first, and the first on each other stream -- what a read
/// needs to know whether some write happens before it.
class WriteLog {
public:
  using Write = std::pair<int32_t, int32_t>;
  explicit WriteLog(size_t numTensors) : first(numTensors, {-1, -1}) {}

  void record(int base, int32_t stream, int32_t index) {
    Write &earliest = first[base];
    if (earliest.first < 0) {
      earliest = {stream, index};
      return;
    }
    if (earliest.first == stream)
      return;
    std::vector<Write> &writes = others[base];
    for (const Write &write : writes)
      if (write.first == stream)
        return;
    writes.push_back({stream, index});
  }

  /// Whether a write of `base` comes before `clock` (each stream's last
  /// instruction known to have run).
  bool precedes(int base, const std::vector<int32_t> &clock) const {
    if (isBefore(first[base], clock))
      return true;
    auto other = others.find(base);
    return other != others.end() &&
           std::any_of(other->second.begin(), other->second.end(),
                       [&](const Write &w) { return isBefore(w, clock); });
  }

private:
  static bool isBefore(const Write &write, const std::vector<int32_t> &clock) {
    return write.first >= 0 && clock[write.first] >= write.second;
  }

  std::vector<Write> first;
  std::map<int, std::vector<Write>> others;
};

} // namespace

void PlanValidator::checkDataflow(
    const Step &step, const std::string &stepWhere,
    const std::vector<std::pair<int, int>> &order) {
  const auto *tensors = step.tensors();
  const auto *streams = step.streams();
  size_t numTensors = tensors ? tensors->size() : 0;
  size_t numStreams = streams ? streams->size() : 0;
  const std::vector<int> &base = loaded.aliasBase.back();
  // An Input tensor holds a value only when a binding fills it.
  std::vector<bool> bound(numTensors, false);
  if (const auto *inputs = step.inputs())
    for (const Binding *input : *inputs)
      bound[input->tensor()] = true;
  auto isUnboundInput = [&](int t) {
    return tensors->Get(base[t])->storage() == Storage::Input &&
           !bound[base[t]];
  };
  auto startsWritten = [&](int t) {
    return tensors->Get(base[t])->storage() != Storage::Arena &&
           !isUnboundInput(t);
  };
  WriteLog writes(numTensors);
  std::vector<std::vector<int32_t>> streamClock(
      numStreams, std::vector<int32_t>(numStreams, -1));
  std::vector<int32_t> eventClock(size_t(step.num_events()) * numStreams, -1);
  auto isWritten = [&](int t, const std::vector<int32_t> &clock) {
    return startsWritten(t) || writes.precedes(base[t], clock);
  };
  // Not a structured binding: the lambda below captures s and i, which
  // C++17 (and clang before 16) does not allow of bindings.
  for (const std::pair<int, int> &entry : order) {
    int s = entry.first, i = entry.second;
    const Instruction &instruction = *streams->Get(s)->instructions()->Get(i);
    std::vector<int32_t> &clock = streamClock[s];
    if (const auto *waits = instruction.wait_events())
      for (int e : *waits)
        for (size_t k = 0; k < numStreams; ++k)
          clock[k] = std::max(clock[k], eventClock[e * numStreams + k]);
    clock[s] = i;
    Kernel kernel = instruction.kernel();
    auto checkRead = [&](int t, const std::string &what) {
      if (t < 0 || isWritten(t, clock))
        return;
      const Tensor &tensor = *tensors->Get(t);
      loaded.fail(stepWhere + ", stream " + std::to_string(s) +
                  ", instruction " + std::to_string(i) + " (" +
                  EnumNameKernel(kernel) + "): " + what + " reads tensor " +
                  std::to_string(t) +
                  (tensor.name() ? " ('" + tensor.name()->str() + "')" : "") +
                  (isUnboundInput(t) ? ", an input that no binding fills"
                                     : " before any instruction writes it"));
    };
    if (const auto *operands = instruction.operands())
      for (flatbuffers::uoffset_t k = 0; k < operands->size(); ++k)
        checkRead(operands->Get(k), describeOperand(kernel, k));
    if (const auto *results = instruction.results())
      for (flatbuffers::uoffset_t k = 0; k < results->size(); ++k) {
        // y += x reads y.
        if (kernel == Kernel::Accumulate)
          checkRead(results->Get(k), describeResult(kernel, k));
        if (results->Get(k) >= 0)
          writes.record(base[results->Get(k)], s, i);
      }
    // In-place updates write what they read; nothing to record for
    // tensors that start written.
    if (const auto *signals = instruction.signal_events())
      for (int e : *signals)
        std::copy(clock.begin(), clock.end(),
                  eventClock.begin() + size_t(e) * numStreams);
  }
  // Outputs are read by the caller after every stream has finished.
  std::vector<int32_t> end(numStreams, INT32_MAX);
  if (const auto *outputs = step.outputs())
    for (const Binding *output : *outputs)
      if (!isWritten(output->tensor(), end))
        loaded.fail(stepWhere + ": output '" + output->name()->str() +
                    "' (tensor " + std::to_string(output->tensor()) +
                    ") is never written by an instruction");
}

void PlanValidator::checkCastSlot(const Instruction &instruction,
                                  const std::string &where,
                                  std::vector<int> &castSlotTensor) {
  int slot = instruction.cast_slot();
  if (slot == 0 && !instruction.cast_reuse())
    return;
  if (slot < 1 || slot > kMaxCastSlots)
    loaded.fail(where + ": cast slot " + std::to_string(slot) +
                " is out of range [1, " + std::to_string(kMaxCastSlots) + "]");
  int operand = getSharedCastOperand(instruction.kernel());
  if (operand < 0 || instruction.precision() != DType::BF16 ||
      !instruction.operands() ||
      static_cast<int>(instruction.operands()->size()) <= operand)
    loaded.fail(where + ": cast slot " + std::to_string(slot) +
                " on a call that does not share an operand's bf16 cast");
  int tensor = instruction.operands()->Get(operand);
  if (!instruction.cast_reuse())
    castSlotTensor[slot] = tensor;
  else if (castSlotTensor[slot] != tensor)
    loaded.fail(where + ": reads cast slot " + std::to_string(slot) +
                ", which the stream's latest call to fill it filled "
                "with another tensor");
}

void PlanValidator::checkInstruction(const Step &step,
                                     const Instruction &instruction,
                                     const std::string &where, int numTensors,
                                     int64_t maxBatch) {
  const KernelSignature *signature = getKernelSignature(instruction.kernel());
  if (!signature)
    loaded.fail(where + ": kernel " +
                std::to_string(static_cast<int>(instruction.kernel())) +
                " is not supported by this runtime");
  KernelCall call;
  call.kernel = instruction.kernel();
  call.instruction = &instruction;
  call.batch = maxBatch;
  auto bind = [&](const flatbuffers::Vector<int32_t> *indices, const char *role,
                  size_t lo, size_t hi,
                  bool (KernelSignature::*isOptional)(size_t) const,
                  std::vector<TensorArg> &args) {
    size_t count = indices ? indices->size() : 0;
    if (count < lo || count > hi)
      loaded.fail(where + ": has " + std::to_string(count) + " " + role +
                  "s, expected " +
                  (lo == hi
                       ? std::to_string(lo)
                       : std::to_string(lo) + " to " + std::to_string(hi)));
    for (size_t k = 0; k < count; ++k) {
      int t = indices->Get(k);
      TensorArg arg;
      if (t == -1 && (signature->*isOptional)(k)) {
        args.push_back(arg);
        continue;
      }
      if (t < 0 || t >= numTensors)
        loaded.fail(where + ": " + role + " " + std::to_string(k) +
                    " is tensor " + std::to_string(t) + ", but the step has " +
                    std::to_string(numTensors) + " tensors");
      const Tensor &tensor = *step.tensors()->Get(t);
      arg.present = true;
      arg.dtype = tensor.dtype();
      arg.dims = toDims(tensor.dims());
      arg.layout = tensor.layout();
      args.push_back(arg);
    }
  };
  bind(instruction.operands(), "operand", signature->minOperands,
       signature->maxOperands, &KernelSignature::isOptionalOperand,
       call.operands);
  bind(instruction.results(), "result", signature->minResults,
       signature->maxResults, &KernelSignature::isOptionalResult, call.results);
  if (int w = instruction.workspace(); w != -1) {
    if (!signature->takesWorkspace())
      loaded.fail(where + ": " + EnumNameKernel(instruction.kernel()) +
                  " takes no workspace");
    if (w < 0 || w >= numTensors)
      loaded.fail(where + ": workspace is tensor " + std::to_string(w) +
                  ", but the step has " + std::to_string(numTensors) +
                  " tensors");
    const Tensor &tensor = *step.tensors()->Get(w);
    std::vector<int64_t> dims = toDims(tensor.dims());
    if (tensor.dtype() != DType::U8 || dims.size() != 1 || tensor.batch_dim())
      loaded.fail(where + ": workspace tensor " + std::to_string(w) +
                  " is not a 1-D U8 buffer of a fixed size");
    call.workspace = {true, nullptr, DType::U8, dims};
  }
  KernelAttrs attrs = instruction.attrs_type();
  if (attrs != signature->attrs &&
      (attrs != KernelAttrs::NONE || signature->attrsRequired()))
    loaded.fail(where + ": has " +
                (attrs == KernelAttrs::NONE
                     ? std::string("no attributes")
                     : std::string(EnumNameKernelAttrs(attrs))) +
                ", expected " + EnumNameKernelAttrs(signature->attrs));
  try {
    checkKernelCall(call);
  } catch (const ShapeError &error) {
    loaded.fail(where + ": " + error.what());
  }
  if (std::string problem = checkCallLayouts(call); !problem.empty())
    loaded.fail(where + ": " + problem);
  // Replicas run on different numbers of rows: only tensors without a
  // batch dim have the same size everywhere.
  if (isCollectiveKernel(instruction.kernel()))
    for (int t : *instruction.operands())
      if (step.tensors()->Get(t)->batch_dim())
        loaded.fail(where + ": operand tensor " + std::to_string(t) +
                    " has a batch dim; replicas cannot reduce it");
}

int PlanValidator::countCollectives(const Step &step) {
  int count = 0;
  for (flatbuffers::uoffset_t s = 0;
       step.streams() && s < step.streams()->size(); ++s)
    if (const auto *instructions = step.streams()->Get(s)->instructions())
      for (const Instruction *instruction : *instructions)
        count += isCollectiveKernel(instruction->kernel());
  return count;
}

} // namespace dpc::plan
