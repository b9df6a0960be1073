//===- KernelSignature.h - operand and result counts per kernel -*- C++ -*-===//
//
// What Plan.fbs says, per kernel, in a form the loader can check: how many
// operands and results an instruction has, which of them may be left out
// (index -1, or a missing trailing one), and which attributes it takes.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_KERNELSIGNATURE_H
#define DPC_RUNTIME_PLAN_KERNELSIGNATURE_H

#include "runtime/plan/Plan_generated.h"

#include <cstdint>

namespace dpc::plan {

struct KernelSignature {
  uint8_t minOperands, maxOperands;
  uint8_t minResults, maxResults;
  /// Bit i set: operand (result) i may be -1 or missing.
  uint32_t optionalOperands, optionalResults;
  KernelAttrs attrs;
  /// False when every attribute has a default, so NONE is accepted.
  bool attrsRequired;
  /// Whether an instruction may name a scratch workspace tensor.
  bool takesWorkspace = false;

  bool isOptionalOperand(size_t i) const {
    return i >= minOperands || (optionalOperands >> i & 1);
  }
  bool isOptionalResult(size_t i) const {
    return i >= minResults || (optionalResults >> i & 1);
  }
};

/// Null for a kernel this runtime does not implement.
const KernelSignature *getKernelSignature(Kernel kernel);

/// True for the kernels that update parameters (they advance the plan's
/// optimizer step count).
bool isOptimizerKernel(Kernel kernel);

} // namespace dpc::plan

#endif // DPC_RUNTIME_PLAN_KERNELSIGNATURE_H
