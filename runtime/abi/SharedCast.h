//===- SharedCast.h - bf16 copies of an operand shared between calls -*- C++
//-*-===//
//
// A bf16 convolution or linear layer reads its f32 operands through bf16
// copies that the kernel makes as it runs. When two calls of a step read
// the same tensor (the MLP's first layer: the forward and the weight
// gradient both read the input batch; a convolution's backward-data and
// backward-weights both read its DY), the first keeps its copy in a cast
// slot of the stream (Instruction.cast_slot) and the later ones read it
// from there (Instruction.cast_reuse): the tensor is cast once per step
// instead of once per call. Each kernel that honours the slot (the CPU's
// oneDNN calls) shares one operand, named here by its Kernels.def role; a
// backend that does not simply casts again.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_SHAREDCAST_H
#define DPC_RUNTIME_ABI_SHAREDCAST_H

#include "runtime/abi/KernelSignature.h"
#include "runtime/plan/Plan_generated.h"

#include <string_view>

namespace dpc::plan {

/// The role of the operand whose bf16 copy `kernel` may keep in or read
/// from a cast slot, or "" when it shares none.
inline std::string_view getSharedCastRole(Kernel kernel) {
  switch (kernel) {
  case Kernel::LinearForward:
  case Kernel::LinearReluForward:
  case Kernel::LinearBackwardWeights:
    return "X";
  case Kernel::Conv2dBackwardData:
  case Kernel::Conv2dBackwardWeights:
    return "DY";
  default:
    return "";
  }
}

/// The position of that operand among `kernel`'s operands, or -1.
inline int getSharedCastOperand(Kernel kernel) {
  std::string_view role = getSharedCastRole(kernel);
  const KernelSignature *signature = getKernelSignature(kernel);
  return role.empty() || !signature ? -1 : signature->findOperand(role);
}

/// The most cast slots a step may name (each holds one copy at a time).
inline constexpr int kMaxCastSlots = 64;

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAREDCAST_H
