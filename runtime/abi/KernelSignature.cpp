//===- KernelSignature.cpp - what each kernel takes, from Kernels.def -----===//

#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/KernelRoles.h"

#include <array>

namespace dpc::plan {
namespace {

/// The count an instruction may stop at: the roles before the optional
/// ones that end the list.
constexpr uint8_t requiredPrefix(unsigned count, uint32_t optional) {
  while (count > 0 && (optional >> (count - 1) & 1))
    --count;
  return static_cast<uint8_t>(count);
}

constexpr KernelSignature
makeSignature(const char *name, unsigned operands, uint32_t optionalOperands,
              unsigned results, uint32_t optionalResults, KernelAttrs attrs,
              uint32_t flags, const char *operandRoles,
              const char *resultRoles) {
  bool variadic = flags & kVariadic;
  return {name,
          requiredPrefix(operands, optionalOperands),
          static_cast<uint8_t>(variadic ? 255 : operands),
          requiredPrefix(results, optionalResults),
          static_cast<uint8_t>(flags & kVariadicResults ? 255 : results),
          optionalOperands,
          optionalResults,
          attrs,
          flags,
          operandRoles,
          resultRoles};
}

constexpr KernelSignature kSignatures[] = {
#define DPC_KERNEL(Name, Shape, Attrs, Flags, Layout, ...)                     \
  makeSignature(#Name, roles::Name::kNumOperands,                              \
                roles::Name::kOptionalOperands, roles::Name::kNumResults,      \
                roles::Name::kOptionalResults, KernelAttrs::Attrs, Flags,      \
                DPC_KERNEL_ROLES(__VA_ARGS__)),
#define DPC_KERNEL_ROLES(Ins, OptIns, Outs, OptOuts) #Ins, #Outs
#include "runtime/abi/Kernels.def"
#undef DPC_KERNEL_ROLES
};
constexpr Kernel kListOrder[] = {
#define DPC_KERNEL(Name, ...) Kernel::Name,
#include "runtime/abi/Kernels.def"
};

/// Role `i` of a list written "(A, B, C)".
std::string_view roleAt(std::string_view list, size_t i) {
  list.remove_prefix(1);
  list.remove_suffix(1);
  for (size_t k = 0; !list.empty(); ++k) {
    size_t comma = list.find(',');
    std::string_view role = list.substr(0, comma);
    if (k == i)
      return role;
    if (comma == std::string_view::npos)
      break;
    list.remove_prefix(comma + 1);
    while (!list.empty() && list.front() == ' ')
      list.remove_prefix(1);
  }
  return {};
}

std::string describe(const char *what, size_t i, std::string_view role) {
  std::string text = std::string(what) + " " + std::to_string(i);
  if (!role.empty())
    text += " (" + std::string(role) + ")";
  return text;
}

} // namespace

std::string_view KernelSignature::getOperandRole(size_t i) const {
  return roleAt(operandRoles, has(kVariadic) ? 0 : i);
}

std::string_view KernelSignature::getResultRole(size_t i) const {
  return roleAt(resultRoles, has(kVariadicResults) ? 0 : i);
}

int KernelSignature::findOperand(std::string_view role) const {
  for (size_t i = 0; i < maxOperands && !has(kVariadic); ++i)
    if (getOperandRole(i) == role)
      return static_cast<int>(i);
  return -1;
}

const KernelSignature *getKernelSignature(Kernel kernel) {
  auto index = static_cast<size_t>(kernel);
  return index < std::size(kSignatures) ? &kSignatures[index] : nullptr;
}

const Kernel *findKernel(std::string_view name) {
  for (const Kernel &kernel : kListOrder)
    if (name == kSignatures[static_cast<size_t>(kernel)].name)
      return &kernel;
  return nullptr;
}

std::string describeOperand(Kernel kernel, size_t i) {
  const KernelSignature *signature = getKernelSignature(kernel);
  return describe("operand", i,
                  signature ? signature->getOperandRole(i)
                            : std::string_view());
}

std::string describeResult(Kernel kernel, size_t i) {
  const KernelSignature *signature = getKernelSignature(kernel);
  return describe("result", i,
                  signature ? signature->getResultRole(i) : std::string_view());
}

bool isOptimizerKernel(Kernel kernel) {
  const KernelSignature *signature = getKernelSignature(kernel);
  return signature && signature->has(kOptimizer);
}

bool isCollectiveKernel(Kernel kernel) {
  const KernelSignature *signature = getKernelSignature(kernel);
  return signature && signature->has(kCollective);
}

} // namespace dpc::plan
