//===- ExecOps.cpp - the exec dialect and its ops -------------------------===//

#include "ir/exec/ExecOps.h"
#include "ir/exec/KernelAttributes.h"
#include "runtime/abi/KernelCheck.h"
#include "runtime/abi/KernelLayouts.h"
#include "runtime/abi/KernelSignature.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dpc::exec;
namespace plan = dpc::plan;

#include "ir/exec/ExecOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/exec/ExecAttrs.cpp.inc"

/// `"LinearForward"`: a kernel of Kernels.def by its name, the one spelling
/// of a kernel in exec IR (exec.kernel's and the attribute's).
static ParseResult parseKernelName(AsmParser &parser, KernelAttr &kernel) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (parser.parseString(&name))
    return failure();
  const plan::Kernel *found = plan::findKernel(name);
  if (!found)
    return parser.emitError(loc) << "unknown kernel '" << name << "'";
  kernel = KernelAttr::get(parser.getContext(), *found);
  return success();
}

static void printKernelName(AsmPrinter &printer, Operation *,
                            KernelAttr kernel) {
  printer << '"' << plan::EnumNameKernel(kernel.getKernel()) << '"';
}

static ParseResult parseKernelName(OpAsmParser &parser, KernelAttr &kernel) {
  return parseKernelName(static_cast<AsmParser &>(parser), kernel);
}

Attribute KernelAttr::parse(AsmParser &parser, Type) {
  KernelAttr kernel;
  if (parser.parseLess() || parseKernelName(parser, kernel) ||
      parser.parseGreater())
    return {};
  return kernel;
}

void KernelAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printKernelName(printer, nullptr, *this);
  printer << '>';
}

void ExecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/exec/ExecOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/exec/ExecAttrs.cpp.inc"
      >();
}

LogicalResult PersistentOp::verify() {
  if (!llvm::is_contained({"parameter", "buffer", "optimizer_state"},
                          getKind()))
    return emitOpError() << "kind must be parameter, buffer or "
                            "optimizer_state, got '"
                         << getKind() << "'";
  if (!llvm::is_contained({"model", "zeros", "ones", "constant"}, getInit()))
    return emitOpError() << "init must be model, zeros, ones or constant, got '"
                         << getInit() << "'";
  if (getInit() == "model" && !getSource())
    return emitOpError() << "init = model needs a 'source' tensor name";
  if ((getInit() == "constant") != getValue().has_value())
    return emitOpError() << "init = constant needs a 'value', and only it "
                            "has one";
  if (getValue() &&
      (getKind() != "buffer" || getValue()->getType() != getType()))
    return emitOpError() << "a constant is a buffer whose value has its type "
                         << getType();
  if ((getKind() == "optimizer_state") != getParameter().has_value())
    return emitOpError()
           << "'parameter' names the parameter of optimizer state, and only "
              "optimizer state has one";
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type || !type.hasStaticShape())
    return emitOpError() << "type must be a statically shaped tensor, got "
                         << getType();
  if (getLogicalShape().has_value() != getShardOffset().has_value())
    return emitOpError() << "a shard has a logical_shape and a shard_offset, "
                            "or neither";
  if (std::optional<ArrayRef<int64_t>> logical = getLogicalShape()) {
    int64_t whole = 1;
    for (int64_t dim : *logical)
      whole *= dim;
    int64_t offset = static_cast<int64_t>(*getShardOffset());
    if (type.getRank() != 1 || offset < 0 ||
        offset + type.getNumElements() > whole)
      return emitOpError() << "shard " << type << " at element " << offset
                           << " is not a range of the " << whole
                           << " elements of its logical shape";
  }
  return success();
}

LogicalResult StepOp::verify() {
  if (static_cast<int64_t>(getArenaBytes()) < 0)
    return emitOpError() << "arena size must be >= 0";
  if (static_cast<int64_t>(getBatch()) < 0)
    return emitOpError() << "batch must be >= 0";
  for (std::optional<uint64_t> bytes :
       {getActivationBytes(), getGradientBytes(), getRematFlops(),
        getGatheredParameterBytes()})
    if (bytes && static_cast<int64_t>(*bytes) < 0)
      return emitOpError() << "memory report sizes must be >= 0";
  return success();
}

int64_t dpc::exec::getBatchScale(Value buffer) {
  if (auto arena = buffer.getDefiningOp<ArenaOp>())
    return arena.getBatchScale();
  if (auto view = buffer.getDefiningOp<ViewOp>())
    return view.getBatchScale();
  return 1;
}

SmallVector<int64_t> dpc::exec::getBufferDims(Value buffer, int64_t batch) {
  SmallVector<int64_t> dims;
  int64_t rows = batch * getBatchScale(buffer);
  for (int64_t dim : cast<MemRefType>(buffer.getType()).getShape())
    dims.push_back(ShapedType::isDynamic(dim) ? rows : dim);
  return dims;
}

/// A buffer holds the batch in at most one dim, a positive multiple of it.
static LogicalResult verifyBatchDim(Operation *op, MemRefType type,
                                    int64_t scale) {
  if (scale < 1)
    return op->emitOpError() << "batch_scale must be >= 1, got " << scale;
  if (type.getNumDynamicDims() > 1)
    return op->emitOpError()
           << "buffer " << type << " holds the batch in more than one dim";
  return success();
}

std::optional<plan::Layout> dpc::exec::parseLayoutName(StringRef name) {
  for (plan::Layout layout : {plan::Layout::Plain, plan::Layout::NChw16c})
    if (name == plan::getLayoutName(layout))
      return layout;
  return std::nullopt;
}

Value dpc::exec::getRootBuffer(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewOp>())
    buffer = view.getSource();
  return buffer;
}

plan::Layout dpc::exec::getBufferLayout(Value buffer) {
  if (auto arena = buffer.getDefiningOp<ArenaOp>())
    if (std::optional<StringRef> name = arena.getLayout())
      return parseLayoutName(*name).value_or(plan::Layout::Plain);
  return plan::Layout::Plain;
}

LogicalResult ArenaOp::verify() {
  if (static_cast<int64_t>(getOffset()) < 0)
    return emitOpError() << "offset must be >= 0";
  auto type = cast<MemRefType>(getBuffer().getType());
  if (failed(verifyBatchDim(*this, type, getBatchScale())))
    return failure();
  if (std::optional<StringRef> name = getLayout()) {
    std::optional<plan::Layout> layout = parseLayoutName(*name);
    if (!layout)
      return emitOpError() << "unknown layout '" << *name << "'";
    // The batch, if any, must be dim 0 as it is: n.
    std::vector<int64_t> dims(type.getShape().begin(), type.getShape().end());
    if (!dims.empty() && ShapedType::isDynamic(dims[0]) && getBatchScale() == 1)
      dims[0] = 1;
    FailureOr<plan::DType> dtype =
        getPlanDType(type.getElementType(), getLoc());
    if (failed(dtype))
      return failure();
    if (!plan::canHaveLayout(*layout, *dtype, dims))
      return emitOpError() << "layout " << *name
                           << " needs an f32 [n, c, h, w] "
                           << "buffer with c a multiple of 16, not " << type;
  }
  return success();
}

LogicalResult ViewOp::verify() {
  if (getBufferLayout(getSource()) != plan::Layout::Plain)
    return emitOpError() << "cannot view a buffer that is not plain";
  auto source = cast<MemRefType>(getSource().getType());
  auto result = cast<MemRefType>(getBuffer().getType());
  if (source.getElementType() != result.getElementType())
    return emitOpError() << "cannot change the element type";
  if (failed(verifyBatchDim(*this, result, getBatchScale())))
    return failure();
  if (std::optional<uint64_t> offset = getOffset()) {
    auto start = static_cast<int64_t>(*offset);
    if (!source.hasStaticShape() || !result.hasStaticShape() || start < 0 ||
        start + result.getNumElements() > source.getNumElements())
      return emitOpError() << "range of " << result << " at element " << start
                           << " is not within " << source;
    return success();
  }
  // Both hold the batch or neither: compare the sizes per sample.
  auto perSample = [](MemRefType type, int64_t scale) {
    int64_t n = scale;
    for (int64_t dim : type.getShape())
      if (!ShapedType::isDynamic(dim))
        n *= dim;
    return n;
  };
  if (source.hasStaticShape() != result.hasStaticShape() ||
      perSample(source, dpc::exec::getBatchScale(getSource())) !=
          perSample(result, getBatchScale()))
    return emitOpError() << "view " << result << " does not cover the same "
                         << "elements as " << source;
  return success();
}

namespace {

/// A buffer as the runtime's shape checks see it: `?` is the step's batch.
FailureOr<plan::TensorArg> toTensorArg(Value buffer, int64_t batch,
                                       Location loc) {
  auto type = cast<MemRefType>(buffer.getType());
  FailureOr<plan::DType> dtype = getPlanDType(type.getElementType(), loc);
  if (failed(dtype))
    return failure();
  plan::TensorArg arg;
  arg.present = true;
  arg.dtype = *dtype;
  arg.layout = getBufferLayout(buffer);
  for (int64_t dim : dpc::exec::getBufferDims(buffer, batch))
    arg.dims.push_back(dim);
  return arg;
}

/// The stream and the events index the step's (Plan.fbs: Step.streams,
/// Step.num_events).
LogicalResult verifySchedule(KernelOp op) {
  if (std::optional<uint64_t> stream = op.getStream();
      stream && static_cast<int64_t>(*stream) < 0)
    return op.emitOpError()
           << "stream must be >= 0, got " << static_cast<int64_t>(*stream);
  for (std::optional<ArrayRef<int64_t>> events : {op.getWait(), op.getSignal()})
    if (events &&
        llvm::any_of(*events, [](int64_t event) { return event < 0; }))
      return op.emitOpError() << "events must be >= 0";
  return success();
}

} // namespace

LogicalResult KernelOp::verify() {
  // The runtime's own list of what each kernel takes (Kernels.def).
  const plan::Kernel kernelValue = getKernel();
  const plan::Kernel *kernel = &kernelValue;
  const plan::KernelSignature *known = plan::getKernelSignature(*kernel);
  if (!known)
    return emitOpError() << "unknown kernel " << int(*kernel);
  const plan::KernelSignature &signature = *known;
  auto range = [](unsigned min, unsigned max) {
    return std::to_string(min) +
           (min == max ? "" : " to " + std::to_string(max));
  };
  unsigned ins = getIns().size(), outs = getOuts().size();
  if (ins < signature.minOperands || ins > signature.maxOperands)
    return emitOpError() << getKernelName() << " takes "
                         << range(signature.minOperands, signature.maxOperands)
                         << " inputs, got " << ins;
  if (outs < signature.minResults || outs > signature.maxResults)
    return emitOpError() << getKernelName() << " writes "
                         << range(signature.minResults, signature.maxResults)
                         << " outputs, got " << outs;
  if (Value workspace = getWorkspace()) {
    if (!signature.takesWorkspace())
      return emitOpError() << getKernelName() << " takes no workspace";
    if (!workspace.getDefiningOp<ArenaOp>())
      return emitOpError() << "workspace must be an arena buffer";
  }
  FailureOr<plan::KernelAttrsUnion> attrs =
      convertKernelAttrs(getOperation(), signature);
  if (failed(attrs))
    return failure();
  FailureOr<plan::DType> precision =
      convertKernelPrecision(getOperation(), signature);
  if (failed(precision))
    return failure();
  if (failed(convertKernelSharedCast(getOperation(), *kernel, *precision)))
    return failure();
  if (failed(verifySchedule(*this)))
    return failure();

  // Shapes and attributes, as the plan loader will check them. Outside a
  // step the batch is unknown: counts are all there is to check.
  auto step = (*this)->getParentOfType<StepOp>();
  if (!step)
    return success();
  plan::KernelCall call;
  call.kernel = *kernel;
  call.batch = step.getBatch();
  for (auto [buffers, args] : {std::pair(getIns(), &call.operands),
                               std::pair(getOuts(), &call.results)})
    for (Value buffer : buffers) {
      FailureOr<plan::TensorArg> arg =
          toTensorArg(buffer, step.getBatch(), getLoc());
      if (failed(arg))
        return failure();
      args->push_back(std::move(*arg));
    }
  if (Value workspace = getWorkspace()) {
    FailureOr<plan::TensorArg> arg =
        toTensorArg(workspace, step.getBatch(), getLoc());
    if (failed(arg))
      return failure();
    call.workspace = std::move(*arg);
  }
  plan::InstructionT instruction;
  instruction.kernel = *kernel;
  instruction.attrs = std::move(*attrs);
  instruction.precision = *precision;
  flatbuffers::FlatBufferBuilder builder;
  builder.Finish(plan::Instruction::Pack(builder, &instruction));
  call.instruction =
      flatbuffers::GetRoot<plan::Instruction>(builder.GetBufferPointer());
  std::string error = plan::findKernelCallError(call);
  if (error.empty())
    error = plan::checkCallLayouts(call);
  if (!error.empty())
    return emitOpError() << getKernelName() << ": " << error;
  return success();
}

SmallVector<NamedAttribute> KernelOp::getKernelAttrs() {
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : (*this)->getAttrs())
    if (attr.getName() != getKernelAttrName() &&
        attr.getName() != getOperandSegmentSizesAttrName())
      attrs.push_back(attr);
  return attrs;
}

#define GET_OP_CLASSES
#include "ir/exec/ExecOps.cpp.inc"
