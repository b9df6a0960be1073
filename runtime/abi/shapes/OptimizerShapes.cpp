//===- OptimizerShapes.cpp - optimizer updates ----------------------------===//

#include "runtime/abi/shapes/OptimizerShapes.h"
#include "runtime/abi/KernelArgs.h"
#include "runtime/abi/KernelAttrs.h"

namespace dpc::plan {
using namespace args;

int64_t getOptimizerSize(const KernelCall &call) {
  int64_t size = operand(call, 0).getNumElements();
  expectOperandCount(call, 1, size);
  if (call.kernel == Kernel::SgdUpdate) {
    // (param, grad, lr[, momentum_buffer])
    expectOperandCount(call, 2, 1);
    SgdParams p = getSgdParams(call);
    if (p.momentum != 0.0 && !hasOperand(call, 3))
      fail("SGD with momentum needs a momentum buffer (operand 3)");
    if (hasOperand(call, 3))
      expectOperandCount(call, 3, size);
  } else {
    // (param, grad, exp_avg, exp_avg_sq, lr, step)
    expectOperandCount(call, 2, size);
    expectOperandCount(call, 3, size);
    expectOperandCount(call, 4, 1);
    expectOperandCount(call, 5, 1, DType::I64);
  }
  return size;
}

} // namespace dpc::plan
