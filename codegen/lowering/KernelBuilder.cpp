//===- KernelBuilder.cpp - what an nn op's lowering builds with -----------===//

#include "codegen/lowering/KernelBuilder.h"

#include "runtime/abi/KernelSignature.h"

using namespace mlir;
using namespace dpc;

StringRef dpc::getKernelName(plan::Kernel kernel) {
  return plan::EnumNameKernel(kernel);
}

std::optional<plan::Kernel> dpc::getKernel(exec::KernelOp op) {
  return op.getKernel();
}

exec::KernelOp KernelBuilder::kernel(plan::Kernel kernel, ValueRange ins,
                                     ValueRange outs,
                                     ArrayRef<NamedAttribute> attrs,
                                     Value workspace) {
  auto op = builder.create<exec::KernelOp>(builder.getUnknownLoc(), kernel, ins,
                                           outs, workspace);
  for (NamedAttribute a : attrs)
    op->setAttr(a.getName(), a.getValue());
  return op;
}

SmallVector<Value> KernelBuilder::orderByRole(ArrayRef<RoleValue> ins) {
  SmallVector<Value> ordered;
  for (const RoleValue &in : ins) {
    if (ordered.size() <= in.role)
      ordered.resize(in.role + 1);
    assert(!ordered[in.role] && "two values for one role");
    ordered[in.role] = in.value;
  }
  while (!ordered.empty() && !ordered.back())
    ordered.pop_back();
  assert(llvm::all_of(ordered, [](Value value) { return value; }) &&
         "an optional role left out before one that is given");
  return ordered;
}

SmallVector<Value> KernelBuilder::buffersByRole(ArrayRef<RoleValue> ins) {
  SmallVector<Value> buffers = orderByRole(ins);
  for (Value &value : buffers)
    value = buffer(value);
  return buffers;
}

SmallVector<Value> KernelBuilder::allocateAll(ValueRange values) {
  SmallVector<Value> buffers;
  for (Value value : values)
    buffers.push_back(allocate(value));
  return buffers;
}

LogicalResult KernelBuilder::call(Operation *op, plan::Kernel kernel,
                                  ArrayRef<RoleValue> ins,
                                  ArrayRef<NamedAttribute> attrs,
                                  int64_t workspaceBytes) {
  SmallVector<Value> inBuffers = buffersByRole(ins);
  SmallVector<Value> outs = allocateAll(op->getResults());
  Value workspace =
      workspaceBytes ? allocateWorkspace(workspaceBytes) : Value();
  this->kernel(kernel, inBuffers, outs, attrs, workspace);
  return success();
}

LogicalResult KernelBuilder::callVariadic(Operation *op, plan::Kernel kernel,
                                          ValueRange ins,
                                          ArrayRef<NamedAttribute> attrs) {
  SmallVector<Value> inBuffers;
  for (Value value : ins)
    inBuffers.push_back(buffer(value));
  this->kernel(kernel, inBuffers, allocateAll(op->getResults()), attrs);
  return success();
}
