//===- KernelRoles.h - operand and result positions by name -----*- C++ -*-===//
//
// For each kernel of Kernels.def, a namespace with two enums: its operands
// and its results by role, in position order. Backends and shape checks
// name positions with them (`call.operand(roles::Conv2dForward::Bias)`)
// instead of numbers.
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

// Also each list's length and its optional roles as bits, computed here
// where the role names are in scope.
#define DPC_KERNEL(Name, Shape, Attrs, Flags, Ins, OptIns, Outs, OptOuts)      \
  namespace Name {                                                             \
  enum Operand : unsigned { DPC_KERNEL_UNPAREN Ins };                          \
  enum Result : unsigned { DPC_KERNEL_UNPAREN Outs };                          \
  constexpr unsigned kNumOperands = countRoles(DPC_KERNEL_UNPAREN Ins);        \
  constexpr unsigned kNumResults = countRoles(DPC_KERNEL_UNPAREN Outs);        \
  constexpr uint32_t kOptionalOperands = roleBits(DPC_KERNEL_UNPAREN OptIns);  \
  constexpr uint32_t kOptionalResults = roleBits(DPC_KERNEL_UNPAREN OptOuts);  \
  }
#include "runtime/abi/Kernels.def"

} // namespace dpc::plan::roles

#endif // DPC_RUNTIME_ABI_KERNELROLES_H
