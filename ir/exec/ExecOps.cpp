//===- ExecOps.cpp - the exec dialect and its ops -------------------------===//

#include "ir/exec/ExecOps.h"
#include "runtime/plan/KernelSignature.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace dpc::exec;
namespace plan = dpc::plan;

#include "ir/exec/ExecOpsDialect.cpp.inc"

void ExecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/exec/ExecOps.cpp.inc"
      >();
}

LogicalResult PersistentOp::verify() {
  if (!llvm::is_contained({"parameter", "buffer", "optimizer_state"},
                          getKind()))
    return emitOpError() << "kind must be parameter, buffer or "
                            "optimizer_state, got '"
                         << getKind() << "'";
  if (!llvm::is_contained({"model", "zeros", "ones"}, getInit()))
    return emitOpError() << "init must be model, zeros or ones, got '"
                         << getInit() << "'";
  if (getInit() == "model" && !getSource())
    return emitOpError() << "init = model needs a 'source' tensor name";
  if ((getKind() == "optimizer_state") != getParameter().has_value())
    return emitOpError()
           << "'parameter' names the parameter of optimizer state, and only "
              "optimizer state has one";
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type || !type.hasStaticShape())
    return emitOpError() << "type must be a statically shaped tensor, got "
                         << getType();
  return success();
}

LogicalResult StepOp::verify() {
  if (static_cast<int64_t>(getArenaBytes()) < 0)
    return emitOpError() << "arena size must be >= 0";
  if (static_cast<int64_t>(getBatch()) < 0)
    return emitOpError() << "batch must be >= 0";
  for (std::optional<uint64_t> bytes :
       {getActivationBytes(), getGradientBytes(), getRematFlops()})
    if (bytes && static_cast<int64_t>(*bytes) < 0)
      return emitOpError() << "memory report sizes must be >= 0";
  return success();
}

LogicalResult ArenaOp::verify() {
  if (static_cast<int64_t>(getOffset()) < 0)
    return emitOpError() << "offset must be >= 0";
  return success();
}

LogicalResult ViewOp::verify() {
  auto source = cast<MemRefType>(getSource().getType());
  auto result = cast<MemRefType>(getBuffer().getType());
  if (source.getElementType() != result.getElementType())
    return emitOpError() << "cannot change the element type";
  // Both are batch-major: compare the per-sample sizes.
  auto perSample = [](MemRefType type) {
    int64_t n = 1;
    for (auto [i, dim] : llvm::enumerate(type.getShape()))
      if (!(i == 0 && ShapedType::isDynamic(dim)))
        n *= dim;
    return n;
  };
  if (source.isDynamicDim(0) != result.isDynamicDim(0) ||
      perSample(source) != perSample(result))
    return emitOpError() << "view " << result << " does not cover the same "
                         << "elements as " << source;
  return success();
}

LogicalResult KernelOp::verify() {
  // The runtime's own table of what each kernel takes (Plan.fbs).
  const char *const *names = plan::EnumNamesKernel();
  const plan::KernelSignature *signature = nullptr;
  for (int k = int(plan::Kernel::MIN); k <= int(plan::Kernel::MAX); ++k)
    if (getKernel() == names[k])
      signature = plan::getKernelSignature(plan::Kernel(k));
  if (!signature)
    return emitOpError() << "unknown kernel '" << getKernel() << "'";
  auto range = [](unsigned min, unsigned max) {
    return std::to_string(min) +
           (min == max ? "" : " to " + std::to_string(max));
  };
  unsigned ins = getIns().size(), outs = getOuts().size();
  if (ins < signature->minOperands || ins > signature->maxOperands)
    return emitOpError() << getKernel() << " takes "
                         << range(signature->minOperands,
                                  signature->maxOperands)
                         << " inputs, got " << ins;
  if (outs < signature->minResults || outs > signature->maxResults)
    return emitOpError() << getKernel() << " writes "
                         << range(signature->minResults, signature->maxResults)
                         << " outputs, got " << outs;
  if (Value workspace = getWorkspace()) {
    if (!signature->takesWorkspace)
      return emitOpError() << getKernel() << " takes no workspace";
    if (!workspace.getDefiningOp<ArenaOp>())
      return emitOpError() << "workspace must be an arena buffer";
  }
  return success();
}

SmallVector<NamedAttribute> KernelOp::getKernelAttrs() {
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : (*this)->getDiscardableAttrs())
    attrs.push_back(attr);
  return attrs;
}

#define GET_OP_CLASSES
#include "ir/exec/ExecOps.cpp.inc"
