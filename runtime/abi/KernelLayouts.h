//===- KernelLayouts.h - which kernel tensors may be blocked ----*- C++ -*-===//
//
// Where a kernel takes a tensor in another layout than plain (Plan.fbs's
// Layout), as Kernels.def's Layout column says: the compiler's layout
// assignment decides by it and the plan loader checks plans against it.
// Every other position is plain.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_KERNELLAYOUTS_H
#define DPC_RUNTIME_ABI_KERNELLAYOUTS_H

#include "runtime/abi/KernelCall.h"
#include "runtime/plan/Plan_generated.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dpc::plan {

/// How one operand or result of a kernel may be laid out.
enum class LayoutUse : uint8_t {
  /// Plain only.
  Plain,
  /// Any layout, whatever the other tensors' (a convolution's activations:
  /// the primitive reorders what it does not take as it is).
  Free,
  /// Any layout, the same as every other Tied tensor of the call (batch
  /// norm, pooling, element-wise ops).
  Tied,
};

/// The use of operand (`result` false) or result `index` of `kernel`.
LayoutUse getLayoutUse(Kernel kernel, bool result, size_t index);

/// Whether `kernel` runs on its Tied tensors element by element, ignoring
/// their layout: then they take a blocked layout only when all have the
/// same dims (no broadcast).
bool isElementwiseLayout(Kernel kernel);

/// Whether a tensor of `dtype` and `dims` can be stored in `layout`: a
/// blocked one needs f32 [n, c, h, w] with c a multiple of the block, so
/// that it takes the plain layout's bytes (no padded channels).
bool canHaveLayout(Layout layout, DType dtype,
                   const std::vector<int64_t> &dims);

/// An error naming the first tensor of `call` whose layout the kernel does
/// not take there, or "".
std::string checkCallLayouts(const KernelCall &call);

/// "plain", "nChw16c": how plans and errors spell a layout.
std::string getLayoutName(Layout layout);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_KERNELLAYOUTS_H
