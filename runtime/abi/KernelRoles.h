//===- KernelRoles.h - operand and result positions by name -----*- C++ -*-===//
//
// For each kernel of Kernels.def, a namespace with two enums: its operands
// and its results by role, in position order; and its layout rule. Backends and
// shape checks name positions with them
// (`call.operand(roles::Conv2dForward::Bias)`) instead of numbers.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_KERNELROLES_H
#define DPC_RUNTIME_ABI_KERNELROLES_H

#include <cstdint>

#define DPC_KERNEL_UNPAREN(...) __VA_ARGS__

namespace dpc::plan::roles {

template <typename... Roles> constexpr unsigned countRoles(Roles...) {
  return sizeof...(Roles);
}
template <typename... Roles> constexpr uint32_t roleBits(Roles... roles) {
  return (0u | ... | (1u << roles));
}

/// Where a kernel takes tensors in other layouts than plain (Kernels.def's
/// Layout column): bit i set, operand (result) i has that use.
struct LayoutRule {
  uint32_t freeOperands = 0, freeResults = 0;
  uint32_t tiedOperands = 0, tiedResults = 0;
  /// Runs on its Tied tensors element by element, ignoring their layout.
  bool elementwise = false;
};

// The Layout column's values, with the kernel's role names in scope.
#define DPC_KERNEL_LAYOUT_Plain                                                \
  LayoutRule {}
#define DPC_KERNEL_LAYOUT_Any                                                  \
  LayoutRule { ~0u, ~0u, 0, 0, false }
#define DPC_KERNEL_LAYOUT_Same                                                 \
  LayoutRule { 0, 0, ~0u, ~0u, false }
#define DPC_KERNEL_LAYOUT_Elementwise                                          \
  LayoutRule { 0, 0, ~0u, ~0u, true }
#define DPC_KERNEL_LAYOUT_Free(Ins, Outs)                                      \
  LayoutRule { roleBits Ins, roleBits Outs, 0, 0, false }
#define DPC_KERNEL_LAYOUT_Tied(Ins, Outs)                                      \
  LayoutRule { 0, 0, roleBits Ins, roleBits Outs, false }

// Also each list's length, its optional roles as bits and its layout rule,
// computed here where the role names are in scope.
#define DPC_KERNEL(Name, Shape, Attrs, Flags, Layout, Ins, OptIns, Outs,       \
                   OptOuts)                                                    \
  namespace Name {                                                             \
  enum Operand : unsigned { DPC_KERNEL_UNPAREN Ins };                          \
  enum Result : unsigned { DPC_KERNEL_UNPAREN Outs };                          \
  constexpr unsigned kNumOperands = countRoles(DPC_KERNEL_UNPAREN Ins);        \
  constexpr unsigned kNumResults = countRoles(DPC_KERNEL_UNPAREN Outs);        \
  constexpr uint32_t kOptionalOperands = roleBits(DPC_KERNEL_UNPAREN OptIns);  \
  constexpr uint32_t kOptionalResults = roleBits(DPC_KERNEL_UNPAREN OptOuts);  \
  constexpr LayoutRule kLayout = DPC_KERNEL_LAYOUT_##Layout;                   \
  }
#include "runtime/abi/Kernels.def"

#undef DPC_KERNEL_LAYOUT_Plain
#undef DPC_KERNEL_LAYOUT_Any
#undef DPC_KERNEL_LAYOUT_Same
#undef DPC_KERNEL_LAYOUT_Elementwise
#undef DPC_KERNEL_LAYOUT_Free
#undef DPC_KERNEL_LAYOUT_Tied

} // namespace dpc::plan::roles

#endif // DPC_RUNTIME_ABI_KERNELROLES_H
