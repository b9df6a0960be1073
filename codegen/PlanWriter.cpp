//===- PlanWriter.cpp - exec IR to a plan file ----------------------------===//
//
// The exec dialect mirrors the plan schema, so writing is a walk: each
// exec.persistent becomes a PersistentTensor (with its initial value), each
// exec.step a Step whose tensors are its buffers in order of definition and
// whose one compute stream holds its kernels.
//
//===----------------------------------------------------------------------===//

#include "codegen/PlanWriter.h"
#include "ir/nn/StepNames.h"

#include "ir/exec/ExecOps.h"
#include "ir/exec/KernelAttributes.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/plan/PlanChecksum.h"
#include "runtime/plan/PlanVersion.h"
#include "runtime/plan/Plan_generated.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;
namespace fb = dpc::plan;

namespace {

FailureOr<fb::Kernel> kernelOf(ex::KernelOp op) {
  if (fb::getKernelSignature(op.getKernel()))
    return op.getKernel();
  return op.emitError() << "kernel " << int(op.getKernel())
                        << " is not in the plan schema";
}

/// What the plan loader accepts of a tensor (runtime/abi/PlanTypes.h):
/// checked here, where the op (and its model node) is known, so that the
/// compiler never writes a plan its own loader refuses.
LogicalResult checkTensorLimits(Location loc, ArrayRef<int64_t> dims) {
  if (dims.size() > fb::kMaxTensorRank)
    return emitError(loc) << "a tensor of rank " << dims.size()
                          << ": plans hold tensors of rank at most "
                          << fb::kMaxTensorRank;
  if (fb::getNumElements(std::vector<int64_t>(dims.begin(), dims.end())) < 0)
    return emitError(loc) << "a tensor of dims [" << dims
                          << "]: plans hold tensors of at most 2^48 ("
                          << fb::kMaxTensorElements << ") elements";
  return success();
}

LogicalResult checkStepLimits(ex::StepOp op, size_t numStreams,
                              int64_t numEvents) {
  if (op.getArenaBytes() < 0 || op.getArenaBytes() > fb::kMaxDeviceBytes)
    return op.emitError() << "an arena of " << op.getArenaBytes()
                          << " bytes: a device holds at most "
                          << fb::kMaxDeviceBytes << " bytes in a plan";
  if (numStreams > fb::kMaxStreams)
    return op.emitError() << numStreams << " streams: a step has at most "
                          << fb::kMaxStreams;
  if (numEvents > fb::kMaxEvents)
    return op.emitError() << numEvents << " events: a step has at most "
                          << fb::kMaxEvents;
  return success();
}

/// The kind of `op`: gradient accumulation names its accumulators
/// `<param>.grad_accum` (AccumulateGradients.cpp).
fb::PersistentKind getPersistentKind(ex::PersistentOp op) {
  if (op.getKind() == "parameter")
    return fb::PersistentKind::Parameter;
  if (op.getKind() == "buffer")
    return fb::PersistentKind::Buffer;
  if (op.getPlanName().ends_with(".grad_accum"))
    return fb::PersistentKind::GradAccumulator;
  return fb::PersistentKind::OptimizerState;
}

/// The role of a step, from the name its pass gave it.
fb::StepRole getStepRole(StringRef name) {
  return llvm::StringSwitch<fb::StepRole>(name)
      .Case(dpc::steps::kTrain, fb::StepRole::Train)
      .Case(dpc::steps::kEval, fb::StepRole::Eval)
      .Case(dpc::steps::kAccumFirst, fb::StepRole::AccumFirst)
      .Case(dpc::steps::kAccumStep, fb::StepRole::AccumStep)
      .Default(fb::StepRole::Other);
}

/// The role of a step's input, from the name the train step gave it.
fb::InputRole getInputRole(StringRef name) {
  return llvm::StringSwitch<fb::InputRole>(name)
      .Case("labels", fb::InputRole::Labels)
      .Case("lr", fb::InputRole::LearningRate)
      .Case("step", fb::InputRole::OptimizerStep)
      .Default(fb::InputRole::Data);
}

/// The role of a step's output, from the name the train step gave it.
fb::OutputRole getOutputRole(StringRef name) {
  return llvm::StringSwitch<fb::OutputRole>(name)
      .Case("loss", fb::OutputRole::Loss)
      .Case("correct", fb::OutputRole::Correct)
      .Case("logits", fb::OutputRole::Logits)
      .Default(fb::OutputRole::Other);
}

/// The initial values a plan can hold, leaving room for the steps.
constexpr uint64_t kMaxInitialBytes = (uint64_t(1) << 31) - (64 << 20);

class Writer {
public:
  Writer(ModuleOp module, const PlanOptions &options)
      : module(module), options(options) {}

  FailureOr<std::vector<uint8_t>> write();

private:
  LogicalResult writePersistent(ex::PersistentOp op);
  LogicalResult writeStep(ex::StepOp op);
  void recordModelFacts(const fb::StepT &step);

  ModuleOp module;
  const PlanOptions &options;
  fb::PlanT plan;
  llvm::StringMap<int> persistentIndex;
};

LogicalResult Writer::writePersistent(ex::PersistentOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  auto tensor = std::make_unique<fb::PersistentTensorT>();
  tensor->name = op.getPlanName().str();
  tensor->device = op.getDevice();
  tensor->kind = getPersistentKind(op);
  FailureOr<fb::DType> dtype =
      ex::getPlanDType(type.getElementType(), op.getLoc());
  if (failed(dtype))
    return failure();
  tensor->dtype = *dtype;
  tensor->dims.assign(type.getShape().begin(), type.getShape().end());
  if (failed(checkTensorLimits(op.getLoc(), tensor->dims)))
    return failure();
  if (op.getParameter())
    tensor->parameter = op.getParameter()->str();
  if (std::optional<ArrayRef<int64_t>> logical = op.getLogicalShape()) {
    tensor->logical_dims.assign(logical->begin(), logical->end());
    tensor->shard_offset = static_cast<int64_t>(*op.getShardOffset());
  }
  if (op.getInit() == "zeros") {
    tensor->init = fb::InitKind::Zeros;
  } else if (op.getInit() == "ones") {
    tensor->init = fb::InitKind::Ones;
  } else if (auto value = op.getValueAttr()) {
    tensor->init = fb::InitKind::Data;
    ArrayRef<char> raw = cast<DenseElementsAttr>(value).getRawData();
    tensor->data.assign(raw.begin(), raw.end());
  } else if (op.getName() && !op.getLogicalShape()) {
    // A replica's copy starts as device 0's, whose data the plan holds.
    tensor->init = fb::InitKind::SameAsCopy;
  } else {
    tensor->init = fb::InitKind::Data;
    StringRef source = *op.getSource();
    const std::vector<uint8_t> *data =
        options.initialValues ? options.initialValues(source) : nullptr;
    if (!data)
      return op.emitError() << "no initial value for '" << op.getPlanName()
                            << "': the model has no tensor '" << source << "'";
    // A shard (--shard parameters) starts as its range of the whole.
    size_t elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
    std::optional<ArrayRef<int64_t>> logical = op.getLogicalShape();
    int64_t wholeCount =
        logical ? RankedTensorType::get(*logical, type.getElementType())
                      .getNumElements()
                : type.getNumElements();
    size_t expected = wholeCount * elementBytes;
    if (data->size() != expected)
      return op.emitError()
             << "the initial value of '" << op.getPlanName() << "' has "
             << data->size() << " bytes; its type needs " << expected;
    size_t begin = logical ? *op.getShardOffset() * elementBytes : 0;
    tensor->data.assign(data->begin() + begin,
                        data->begin() + begin +
                            type.getNumElements() * elementBytes);
  }
  persistentIndex[op.getSymName()] = plan.persistent.size();
  plan.persistent.push_back(std::move(tensor));
  return success();
}

/// Writes the buffers at their peak (for `dpc inspect`).
void writeLiveAtPeak(ex::StepOp op, fb::StepT &step) {
  if (ArrayAttr live = op.getLiveAtPeakAttr())
    for (auto entry : live.getAsRange<DictionaryAttr>()) {
      auto tensor = std::make_unique<fb::LiveTensorT>();
      if (auto name = entry.getAs<StringAttr>("name"))
        tensor->name = name.str();
      if (auto kind = entry.getAs<StringAttr>("kind"))
        tensor->kind = kind.str();
      if (auto bytes = entry.getAs<IntegerAttr>("bytes"))
        tensor->bytes = bytes.getInt();
      step.live_at_peak.push_back(std::move(tensor));
    }
}

/// Writes an exec.step's body: its buffers as tensors in order of
/// definition, its bindings, and its kernels on their streams.
class StepWriter {
public:
  StepWriter(ex::StepOp op, fb::StepT &step,
             const llvm::StringMap<int> &persistentIndex)
      : op(op), step(step), persistentIndex(persistentIndex) {
    streamFor(0);
  }

  LogicalResult writeBody();

private:
  fb::StreamT &streamFor(int64_t index);
  FailureOr<fb::TensorT *> addTensor(Value buffer, StringRef name,
                                     fb::Storage storage);
  LogicalResult writeNested(Operation &nested);
  LogicalResult writeInput(ex::InputOp input);
  LogicalResult writeKernel(ex::KernelOp kernel);

  ex::StepOp op;
  fb::StepT &step;
  const llvm::StringMap<int> &persistentIndex;
  // Stream 0 computes; stream 1 (if used) communicates.
  SmallVector<std::unique_ptr<fb::StreamT>> streams;
  int64_t numEvents = 0;
  DenseMap<Value, int> tensorIndex;
};

fb::StreamT &StepWriter::streamFor(int64_t index) {
  while (int64_t(streams.size()) <= index) {
    streams.push_back(std::make_unique<fb::StreamT>());
    streams.back()->kind = streams.size() == 1 ? fb::StreamKind::Compute
                                               : fb::StreamKind::Communication;
  }
  return *streams[index];
}

FailureOr<fb::TensorT *> StepWriter::addTensor(Value buffer, StringRef name,
                                               fb::Storage storage) {
  auto type = cast<MemRefType>(buffer.getType());
  auto tensor = std::make_unique<fb::TensorT>();
  tensor->name = name.str();
  FailureOr<fb::DType> dtype =
      ex::getPlanDType(type.getElementType(), buffer.getLoc());
  if (failed(dtype))
    return failure();
  tensor->dtype = *dtype;
  tensor->layout = ex::getBufferLayout(buffer);
  for (int64_t dim : ex::getBufferDims(buffer, op.getBatch()))
    tensor->dims.push_back(dim);
  if (failed(checkTensorLimits(buffer.getLoc(), tensor->dims)))
    return failure();
  for (auto [axis, dim] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(dim)) {
      tensor->batch_dim = true;
      tensor->batch_axis = static_cast<int32_t>(axis);
      tensor->batch_scale = ex::getBatchScale(buffer);
    }
  tensor->storage = storage;
  tensorIndex[buffer] = step.tensors.size();
  step.tensors.push_back(std::move(tensor));
  return step.tensors.back().get();
}

LogicalResult StepWriter::writeBody() {
  for (Operation &nested : op.getBody().front())
    if (failed(writeNested(nested)))
      return failure();
  if (failed(checkStepLimits(op, streams.size(), numEvents)))
    return failure();
  for (auto &stream : streams)
    step.streams.push_back(std::move(stream));
  step.num_events = int32_t(numEvents);
  return success();
}

LogicalResult StepWriter::writeNested(Operation &nested) {
  if (auto input = dyn_cast<ex::InputOp>(nested))
    return writeInput(input);
  if (auto arena = dyn_cast<ex::ArenaOp>(nested)) {
    auto tensor = addTensor(arena, "t" + std::to_string(tensorIndex.size()),
                            fb::Storage::Arena);
    if (failed(tensor))
      return failure();
    (*tensor)->offset = arena.getOffset();
    return success();
  }
  if (auto state = dyn_cast<ex::StateOp>(nested)) {
    auto tensor = addTensor(state, state.getTensor(), fb::Storage::Persistent);
    if (failed(tensor))
      return failure();
    auto index = persistentIndex.find(state.getTensor());
    if (index == persistentIndex.end())
      return state.emitError() << "refers to an undeclared persistent tensor";
    (*tensor)->persistent = index->second;
    return success();
  }
  if (auto view = dyn_cast<ex::ViewOp>(nested)) {
    auto tensor = addTensor(view, "view" + std::to_string(tensorIndex.size()),
                            fb::Storage::Alias);
    if (failed(tensor))
      return failure();
    (*tensor)->alias = tensorIndex.lookup(view.getSource());
    auto type = cast<MemRefType>(view.getType());
    (*tensor)->offset = static_cast<int64_t>(view.getOffset().value_or(0)) *
                        ((type.getElementTypeBitWidth() + 7) / 8);
    return success();
  }
  if (auto kernel = dyn_cast<ex::KernelOp>(nested))
    return writeKernel(kernel);
  if (auto output = dyn_cast<ex::OutputOp>(nested)) {
    auto binding = std::make_unique<fb::BindingT>();
    binding->name = output.getName().str();
    binding->tensor = tensorIndex.lookup(output.getBuffer());
    binding->output_role = getOutputRole(output.getName());
    step.outputs.push_back(std::move(binding));
    return success();
  }
  return nested.emitError() << "cannot be written to a plan";
}

LogicalResult StepWriter::writeInput(ex::InputOp input) {
  if (failed(addTensor(input, input.getName(), fb::Storage::Input)))
    return failure();
  // The plan records a sample's dims (sample_dims): the loader and the
  // data sets take 1 to 3 of them, after the batch.
  auto type = cast<MemRefType>(input.getType());
  fb::InputRole role = getInputRole(input.getName());
  bool data = role == fb::InputRole::Data;
  if (data &&
      (type.getRank() < 2 || type.getRank() > 4 || !type.isDynamicDim(0))) {
    InFlightDiagnostic error = input.emitError()
                               << "the model's input must be a batch of "
                                  "samples of 1 to 3 dims ([N, C, H, W], "
                                  "[N, T]) to be trained from a plan; it is [";
    llvm::interleaveComma(type.getShape(), error, [&](int64_t dim) {
      if (ShapedType::isDynamic(dim))
        error << "N";
      else
        error << dim;
    });
    return error << "]";
  }
  auto binding = std::make_unique<fb::BindingT>();
  binding->name = input.getName().str();
  binding->tensor = tensorIndex[input];
  binding->role = role;
  step.inputs.push_back(std::move(binding));
  return success();
}

LogicalResult StepWriter::writeKernel(ex::KernelOp kernel) {
  FailureOr<fb::Kernel> kind = kernelOf(kernel);
  if (failed(kind))
    return failure();
  auto instruction = std::make_unique<fb::InstructionT>();
  instruction->kernel = *kind;
  for (Value in : kernel.getIns())
    instruction->operands.push_back(tensorIndex.lookup(in));
  for (Value out : kernel.getOuts())
    instruction->results.push_back(tensorIndex.lookup(out));
  if (Value workspace = kernel.getWorkspace())
    instruction->workspace = tensorIndex.lookup(workspace);
  FailureOr<fb::KernelAttrsUnion> attrs =
      ex::convertKernelAttrs(kernel, *fb::getKernelSignature(*kind));
  if (failed(attrs))
    return failure();
  instruction->attrs = std::move(*attrs);
  if (auto algorithm = kernel->getAttrOfType<StringAttr>("algorithm"))
    instruction->algorithm = algorithm.str();
  FailureOr<fb::DType> precision =
      ex::convertKernelPrecision(kernel, *fb::getKernelSignature(*kind));
  if (failed(precision))
    return failure();
  instruction->precision = *precision;
  FailureOr<ex::SharedCast> cast =
      ex::convertKernelSharedCast(kernel, *kind, *precision);
  if (failed(cast))
    return failure();
  instruction->cast_slot = cast->slot;
  instruction->cast_reuse = cast->reuse;
  auto events = [&](StringRef name, std::vector<int32_t> &into) {
    if (auto list = kernel->getAttrOfType<DenseI64ArrayAttr>(name))
      for (int64_t event : list.asArrayRef()) {
        into.push_back(int32_t(event));
        numEvents = std::max(numEvents, event + 1);
      }
  };
  events("wait", instruction->wait_events);
  events("signal", instruction->signal_events);
  int64_t stream = 0;
  if (auto attr = kernel->getAttrOfType<IntegerAttr>("stream"))
    stream = attr.getInt();
  streamFor(stream).instructions.push_back(std::move(instruction));
  return success();
}

LogicalResult Writer::writeStep(ex::StepOp op) {
  auto step = std::make_unique<fb::StepT>();
  step->name = op.getName().str();
  step->role = getStepRole(op.getName());
  step->device = op.getDevice();
  step->arena_bytes = op.getArenaBytes();
  step->activation_bytes = op.getActivationBytes().value_or(0);
  step->gradient_bytes = op.getGradientBytes().value_or(0);
  step->remat_flops = op.getRematFlops().value_or(0);
  step->gathered_parameter_bytes = op.getGatheredParameterBytes().value_or(0);
  writeLiveAtPeak(op, *step);
  if (failed(StepWriter(op, *step, persistentIndex).writeBody()))
    return failure();
  recordModelFacts(*step);
  plan.steps.push_back(std::move(step));
  return success();
}

/// The model's sample shape, class count and optimizer, from a step's
/// bindings and kernels.
void Writer::recordModelFacts(const fb::StepT &step) {
  for (auto &binding : step.inputs)
    if (binding->name == "images")
      plan.sample_dims.assign(step.tensors[binding->tensor]->dims.begin() + 1,
                              step.tensors[binding->tensor]->dims.end());
  for (auto &binding : step.outputs)
    if (binding->name == "logits")
      plan.num_classes = step.tensors[binding->tensor]->dims.back();
  for (auto &instruction : step.streams[0]->instructions) {
    if (instruction->kernel == fb::Kernel::SgdUpdate)
      plan.optimizer = "sgd";
    if (instruction->kernel == fb::Kernel::AdamWUpdate)
      plan.optimizer = "adamw";
  }
}

FailureOr<std::vector<uint8_t>> Writer::write() {
  plan.version = plan::kPlanVersion;
  plan.producer = "dpc";
  plan.model = options.modelPath;
  plan.compiled_batch = options.batch;
  if (auto accumulate = module->getAttrOfType<IntegerAttr>("dpc.grad_accum"))
    plan.grad_accum = accumulate.getInt();
  if (const std::optional<OnnxModelRecord> &record = options.onnxModel) {
    plan.onnx_model = std::make_unique<fb::OnnxModelT>();
    plan.onnx_model->ir_version = record->irVersion;
    plan.onnx_model->opset = record->opset;
    plan.onnx_model->min_opset = record->minOpset;
    plan.onnx_model->max_opset = record->maxOpset;
    plan.onnx_model->head = record->head;
    plan.onnx_model->graph = record->graph;
    plan.onnx_model->problem = record->problem;
    for (const OnnxModelRecord::Form &form : record->forms) {
      auto entry = std::make_unique<fb::OnnxGraphFormT>();
      entry->min_opset = form.minOpset;
      entry->max_opset = form.maxOpset;
      entry->graph = form.graph;
      entry->problem = form.problem;
      plan.onnx_model->forms.push_back(std::move(entry));
    }
  }
  SmallVector<StringRef> devices = {"cpu:0"};
  if (auto names = module->getAttrOfType<ArrayAttr>("exec.devices"))
    devices = llvm::to_vector(names.getAsValueRange<StringAttr>());
  for (StringRef name : devices) {
    auto device = std::make_unique<fb::DeviceT>();
    device->name = name.str();
    plan.devices.push_back(std::move(device));
  }
  for (auto op : module.getOps<ex::PersistentOp>())
    if (failed(writePersistent(op)))
      return failure();
  // FlatBuffers' offsets are 32-bit: a plan file is under 2 GiB.
  uint64_t initialBytes = 0;
  for (const auto &tensor : plan.persistent)
    initialBytes += tensor->data.size();
  if (initialBytes >= kMaxInitialBytes)
    return module.emitError()
           << "the model's initial values take "
           << llvm::formatv("{0:F2}", initialBytes / 1073741824.0).str()
           << " GiB: a plan file holds less than 2 GiB";
  for (auto op : module.getOps<ex::StepOp>())
    if (failed(writeStep(op)))
      return failure();
  if (plan.steps.empty())
    return module.emitError() << "has no exec.step to write";
  // Each device's share of the batch, from its training step.
  if (devices.size() > 1) {
    plan.split.assign(devices.size(), 0);
    for (auto op : module.getOps<ex::StepOp>())
      if (op.getName() == dpc::steps::kTrain && op.getDevice() < devices.size())
        plan.split[op.getDevice()] = op.getBatch();
  }

  plan.checksum = fb::kUnsealedChecksum;
  flatbuffers::FlatBufferBuilder builder(1 << 20);
  fb::FinishPlanBuffer(builder, fb::Plan::Pack(builder, &plan));
  std::vector<uint8_t> bytes(builder.GetBufferPointer(),
                             builder.GetBufferPointer() + builder.GetSize());
  if (!fb::sealPlan(bytes))
    return module.emitError() << "the packed plan does not verify";
  return bytes;
}

} // namespace

FailureOr<std::vector<uint8_t>> dpc::writePlan(ModuleOp module,
                                               const PlanOptions &options) {
  return Writer(module, options).write();
}
