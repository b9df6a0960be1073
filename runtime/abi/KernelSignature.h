//===- KernelSignature.h - what each kernel takes, from Kernels.def -*- C++
//-*-===//
//
// Kernels.def in a form the plan loader and the compiler's exec.kernel
// verifier check against: how many operands and results an instruction
// has, which may be left out (index -1, or missing at the end), their role
// names, which attributes it takes, and how the shared dispatch treats it.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_KERNELSIGNATURE_H
#define DPC_RUNTIME_ABI_KERNELSIGNATURE_H

#include "runtime/plan/Plan_generated.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace dpc::plan {

/// How the shared dispatch and the checks treat a kernel (Kernels.def).
enum KernelFlags : uint32_t {
  kAttrsRequired = 1 << 0,
  kTakesWorkspace = 1 << 1,
  kRunsOnEmpty = 1 << 2,
  kCollective = 1 << 3,
  kOptimizer = 1 << 4,
  kVariadic = 1 << 5,
  kVariadicResults = 1 << 6,
  kMixedPrecision = 1 << 7,
};

struct KernelSignature {
  const char *name;
  uint8_t minOperands, maxOperands;
  uint8_t minResults, maxResults;
  /// Bit i set: operand (result) i may be -1 or missing.
  uint32_t optionalOperands, optionalResults;
  KernelAttrs attrs;
  uint32_t flags;
  /// The role lists as written in Kernels.def: "(X, W, Bias)".
  const char *operandRoles, *resultRoles;

  bool isOptionalOperand(size_t i) const {
    return i >= minOperands || (optionalOperands >> i & 1);
  }
  bool isOptionalResult(size_t i) const {
    return i >= minResults || (optionalResults >> i & 1);
  }
  bool has(KernelFlags flag) const { return (flags & flag) != 0; }
  /// False when every attribute has a default, so NONE is accepted.
  bool attrsRequired() const { return has(kAttrsRequired); }
  bool takesWorkspace() const { return has(kTakesWorkspace); }

  /// The role of operand (result) `i`: "Bias"; "" past the list (a variadic
  /// kernel's later operands take the first role's name).
  std::string_view getOperandRole(size_t i) const;
  std::string_view getResultRole(size_t i) const;
  /// The position of the operand with role `role`, or -1.
  int findOperand(std::string_view role) const;
};

/// Null for a kernel this runtime does not implement.
const KernelSignature *getKernelSignature(Kernel kernel);

/// The kernel named `name` (Kernels.def's spelling), or null.
const Kernel *findKernel(std::string_view name);

/// "operand 2 (Bias)", "result 0 (Y)": how errors name a tensor of a call.
std::string describeOperand(Kernel kernel, size_t i);
std::string describeResult(Kernel kernel, size_t i);

/// True for the kernels that update parameters (they advance the plan's
/// optimizer step count).
bool isOptimizerKernel(Kernel kernel);
/// True for the kernels every replica joins (AllReduce, AllGather,
/// ReduceScatter).
bool isCollectiveKernel(Kernel kernel);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_KERNELSIGNATURE_H
