//===- SharedCast.h - bf16 copies of an operand shared between calls -*- C++
//-*-===//
//
// A bf16 linear layer reads its f32 X through a bf16 copy that the kernel
// makes as it runs. When two calls of a step read the same X (the MLP's
// first layer: the forward and the weight gradient both read the input
// batch), the first keeps its copy in a cast slot of the stream
// (Instruction.cast_slot) and the later ones read it from there
// (Instruction.cast_reuse): X is cast once per step instead of once per
// call. This says which kernels honour the slot (the CPU's oneDNN linear
// layers); a backend that does not simply casts again.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_SHAREDCAST_H
#define DPC_RUNTIME_PLAN_SHAREDCAST_H

#include "runtime/plan/Plan_generated.h"

namespace dpc::plan {

/// Whether `kernel`'s operand 0 (X) may be kept in or read from a cast slot.
inline bool canShareCastOperand(Kernel kernel) {
  return kernel == Kernel::LinearForward ||
         kernel == Kernel::LinearReluForward ||
         kernel == Kernel::LinearBackwardWeights;
}

/// The most cast slots a step may name (each holds one copy of an X).
inline constexpr int kMaxCastSlots = 64;

} // namespace dpc::plan

#endif // DPC_RUNTIME_PLAN_SHAREDCAST_H
