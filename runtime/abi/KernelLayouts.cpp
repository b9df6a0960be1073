//===- KernelLayouts.cpp - which kernel tensors may be blocked ------------===//

#include "runtime/abi/KernelLayouts.h"
#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelSignature.h"

#include <algorithm>
#include <initializer_list>

namespace dpc::plan {

namespace {

/// Bit i set: operand (result) i has that use.
struct LayoutRule {
  uint32_t freeOperands = 0, freeResults = 0;
  uint32_t tiedOperands = 0, tiedResults = 0;
};

uint32_t bits(std::initializer_list<unsigned> positions) {
  uint32_t mask = 0;
  for (unsigned p : positions)
    mask |= 1u << p;
  return mask;
}

LayoutRule getRule(Kernel kernel) {
  namespace r = roles;
  switch (kernel) {
  case Kernel::Conv2dForward:
  case Kernel::Conv2dReluForward:
    return {bits({r::Conv2dForward::X}), bits({r::Conv2dForward::Y})};
  case Kernel::Conv2dBackwardData:
    return {bits({r::Conv2dBackwardData::DY}),
            bits({r::Conv2dBackwardData::DX})};
  case Kernel::Conv2dBackwardWeights:
    return {bits({r::Conv2dBackwardWeights::X, r::Conv2dBackwardWeights::DY}),
            0};
  // The per-channel parameters and statistics stay plain.
  case Kernel::BatchNormTrainingForward:
  case Kernel::BatchNormReluTrainingForward:
    return {0, 0, bits({r::BatchNormTrainingForward::X}),
            bits({r::BatchNormTrainingForward::Y})};
  case Kernel::BatchNormInferenceForward:
  case Kernel::BatchNormReluInferenceForward:
    return {0, 0, bits({r::BatchNormInferenceForward::X}),
            bits({r::BatchNormInferenceForward::Y})};
  case Kernel::BatchNormBackward:
    return {0, 0, bits({r::BatchNormBackward::X, r::BatchNormBackward::DY}),
            bits({r::BatchNormBackward::DX})};
  case Kernel::BatchNormReluBackward:
    return {0, 0,
            bits({r::BatchNormReluBackward::X, r::BatchNormReluBackward::Y,
                  r::BatchNormReluBackward::DY}),
            bits({r::BatchNormReluBackward::DX})};
  case Kernel::BatchNormStatistics:
    return {0, 0, bits({r::BatchNormStatistics::X}), 0};
  case Kernel::BatchNormApply:
    return {0, 0, bits({r::BatchNormApply::X}), bits({r::BatchNormApply::Y})};
  case Kernel::BatchNormGradStatistics:
    return {
        0, 0,
        bits({r::BatchNormGradStatistics::X, r::BatchNormGradStatistics::DY}),
        0};
  case Kernel::BatchNormGradApply:
    return {0, 0, bits({r::BatchNormGradApply::X, r::BatchNormGradApply::DY}),
            bits({r::BatchNormGradApply::DX})};
  // Pooling keeps the layout; the global average's [n, c] side is plain.
  case Kernel::MaxPool2dForward:
  case Kernel::AvgPool2dForward:
  case Kernel::MaxPool2dBackward:
  case Kernel::AvgPool2dBackward:
  case Kernel::ReluForward:
  case Kernel::ReluBackward:
  case Kernel::AddForward:
  case Kernel::AddBackward:
  case Kernel::AddReluForward:
  case Kernel::AddReluBackward:
  case Kernel::Copy:
  case Kernel::Accumulate:
    return {0, 0, ~0u, ~0u};
  case Kernel::GlobalAvgPool2dForward:
    return {bits({r::GlobalAvgPool2dForward::X}), 0};
  case Kernel::GlobalAvgPool2dBackward:
    return {0, bits({r::GlobalAvgPool2dBackward::DX})};
  case Kernel::Fill:
  case Kernel::Reorder:
    return {~0u, ~0u};
  default:
    return {};
  }
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

bool isElementwiseLayout(Kernel kernel) {
  switch (kernel) {
  case Kernel::ReluForward:
  case Kernel::ReluBackward:
  case Kernel::AddForward:
  case Kernel::AddBackward:
  case Kernel::AddReluForward:
  case Kernel::AddReluBackward:
  case Kernel::Copy:
  case Kernel::Accumulate:
    return true;
  default:
    return false;
  }
}

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
