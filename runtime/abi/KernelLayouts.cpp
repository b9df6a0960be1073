//===- KernelLayouts.cpp - which kernel tensors may be blocked ------------===//

#include "runtime/abi/KernelLayouts.h"
#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelSignature.h"

#include <algorithm>
#include <iterator>

namespace dpc::plan {

namespace {

using roles::LayoutRule;

/// Kernels.def's Layout column, in the list's order.
constexpr LayoutRule kLayoutRules[] = {
#define DPC_KERNEL(Name, ...) roles::Name::kLayout,
#include "runtime/abi/Kernels.def"
};

LayoutRule getRule(Kernel kernel) {
  auto index = static_cast<size_t>(kernel);
  return index < std::size(kLayoutRules) ? kLayoutRules[index] : LayoutRule{};
}

} // namespace

LayoutUse getLayoutUse(Kernel kernel, bool result, size_t index) {
  if (index >= 32)
    return LayoutUse::Plain;
  LayoutRule rule = getRule(kernel);
  uint32_t bit = 1u << index;
  if ((result ? rule.freeResults : rule.freeOperands) & bit)
    return LayoutUse::Free;
  if ((result ? rule.tiedResults : rule.tiedOperands) & bit)
    return LayoutUse::Tied;
  return LayoutUse::Plain;
}

bool isElementwiseLayout(Kernel kernel) { return getRule(kernel).elementwise; }

bool canHaveLayout(Layout layout, DType dtype,
                   const std::vector<int64_t> &dims) {
  switch (layout) {
  case Layout::Plain:
    return true;
  case Layout::NChw16c:
    // n may be 0: a replica given no rows.
    return dtype == DType::F32 && dims.size() == 4 && dims[0] >= 0 &&
           std::all_of(dims.begin() + 1, dims.end(),
                       [](int64_t dim) { return dim > 0; }) &&
           dims[1] % 16 == 0;
  }
  return false;
}

std::string checkCallLayouts(const KernelCall &call) {
  if (call.kernel == Kernel::Reorder && call.operands.size() == 1 &&
      call.results.size() == 1 && call.operands[0].dims != call.results[0].dims)
    return "a reorder's operand and result differ in dims";
  const TensorArg *tied = nullptr;
  std::string tiedName;
  for (bool result : {false, true}) {
    const auto &args = result ? call.results : call.operands;
    for (size_t i = 0; i < args.size(); ++i) {
      const TensorArg &arg = args[i];
      if (!arg.present)
        continue;
      std::string name = result ? describeResult(call.kernel, i)
                                : describeOperand(call.kernel, i);
      LayoutUse use = getLayoutUse(call.kernel, result, i);
      if (arg.layout != Layout::Plain && use == LayoutUse::Plain)
        return name + " is " + getLayoutName(arg.layout) +
               ", but the kernel takes it plain only";
      if (use != LayoutUse::Tied)
        continue;
      if (!tied) {
        tied = &arg;
        tiedName = name;
        continue;
      }
      if (arg.layout != tied->layout)
        return name + " is " + getLayoutName(arg.layout) + ", but " + tiedName +
               " is " + getLayoutName(tied->layout);
      if (arg.layout != Layout::Plain && isElementwiseLayout(call.kernel) &&
          arg.dims != tied->dims)
        return name + " is " + getLayoutName(arg.layout) +
               " and broadcast: element-wise kernels take blocked tensors of "
               "equal dims only";
    }
  }
  return "";
}

std::string getLayoutName(Layout layout) {
  switch (layout) {
  case Layout::Plain:
    return "plain";
  case Layout::NChw16c:
    return "nChw16c";
  }
  return "layout " + std::to_string(static_cast<int>(layout));
}

} // namespace dpc::plan
