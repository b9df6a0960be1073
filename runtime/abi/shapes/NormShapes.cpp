//===- NormShapes.cpp - batch and layer normalization shapes --------------===//

#include "runtime/abi/shapes/NormShapes.h"
#include "runtime/abi/KernelArgs.h"
#include "runtime/abi/KernelAttrs.h"

#include <cmath>
#include <string>
#include <vector>

namespace dpc::plan {
using namespace args;

BatchNormShape getBatchNormShape(const KernelCall &call) {
  const TensorArg &x = operand(call, 0);
  Nchw d = nchwOf(x, operandName(call.kernel, 0), 2);
  int64_t count = x.getNumElements();
  int64_t c = d.c;
  switch (call.kernel) {
  case Kernel::BatchNormTrainingForward:
  case Kernel::BatchNormReluTrainingForward:
    expectOperandCount(call, 1, c);
    expectOperandCount(call, 2, c);
    if (hasOperand(call, 3) != hasOperand(call, 4))
      fail("the running mean and variance are left out only together");
    if (hasOperand(call, 3)) {
      expectOperandCount(call, 3, c);
      expectOperandCount(call, 4, c);
    }
    expectResultCount(call, 0, count);
    expectResultCount(call, 1, c);
    expectResultCount(call, 2, c);
    break;
  case Kernel::BatchNormInferenceForward:
  case Kernel::BatchNormReluInferenceForward:
    for (size_t i = 1; i < 5; ++i)
      expectOperandCount(call, i, c);
    expectResultCount(call, 0, count);
    break;
  // Synchronized batch norm's statistics sums and count are f64.
  case Kernel::BatchNormStatistics:
    expectResultCount(call, 0, c, DType::F64);
    expectResultCount(call, 1, c, DType::F64);
    expectResultCount(call, 2, 1, DType::F64);
    break;
  case Kernel::BatchNormApply:
    for (size_t i = 1; i < 5; ++i)
      expectOperandCount(call, i, c);
    expectOperandCount(call, 5, c, DType::F64);
    expectOperandCount(call, 6, c, DType::F64);
    expectOperandCount(call, 7, 1, DType::F64);
    expectResultCount(call, 0, count);
    expectResultCount(call, 1, c);
    expectResultCount(call, 2, c);
    break;
  case Kernel::BatchNormGradStatistics:
    expectOperandCount(call, 1, count);
    expectOperandCount(call, 2, c);
    expectOperandCount(call, 3, c);
    expectResultCount(call, 0, c);
    expectResultCount(call, 1, c);
    break;
  case Kernel::BatchNormGradApply:
    expectOperandCount(call, 1, count);
    for (size_t i = 2; i < 7; ++i)
      expectOperandCount(call, i, c);
    expectOperandCount(call, 7, 1, DType::F64);
    expectResultCount(call, 0, count);
    break;
  case Kernel::BatchNormReluBackward:
    expectOperandCount(call, 1, count);
    expectOperandCount(call, 2, count);
    for (size_t i = 3; i < 6; ++i)
      expectOperandCount(call, i, c);
    expectResultCount(call, 0, count);
    expectResultCount(call, 1, c);
    expectResultCount(call, 2, c);
    break;
  default: // BatchNormBackward
    expectOperandCount(call, 1, count);
    for (size_t i = 2; i < 5; ++i)
      expectOperandCount(call, i, c);
    expectResultCount(call, 0, count);
    expectResultCount(call, 1, c);
    expectResultCount(call, 2, c);
    break;
  }
  return {d.n, d.c, d.h, d.w, x.layout == Layout::NChw16c ? kChannelBlock : 1};
}

LayerNormShape getLayerNormShape(const KernelCall &call) {
  const LayerNormAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_LayerNormAttrs() : nullptr;
  if (!attrs)
    fail("LayerNormAttrs are missing");
  const TensorArg &x = operand(call, 0);
  int64_t rank = static_cast<int64_t>(x.dims.size());
  if (attrs->axis() < 1 || attrs->axis() >= rank)
    fail("layer norm axis " + std::to_string(attrs->axis()) +
         " is not in [1, " + std::to_string(rank) + ")");
  if (!(attrs->epsilon() > 0) || !std::isfinite(attrs->epsilon()))
    fail("layer norm epsilon must be finite and > 0");
  LayerNormShape s;
  auto split = x.dims.begin() + attrs->axis();
  s.rows = countOf(std::vector<int64_t>(x.dims.begin(), split));
  s.cols = countOf(std::vector<int64_t>(split, x.dims.end()));
  s.epsilon = attrs->epsilon();
  int64_t count = countOf({s.rows, s.cols});
  expectResultCount(call, 0, count);             // Y or DX
  if (call.kernel == Kernel::LayerNormForward) { // (X, Scale, Bias) -> Y
    expectOperandCount(call, 1, s.cols);
    if (hasOperand(call, 2))
      expectOperandCount(call, 2, s.cols);
    return s;
  }
  // (X, DY, Scale) -> (DX, DScale, DBias)
  expectOperandCount(call, 1, count);
  expectOperandCount(call, 2, s.cols);
  expectResultCount(call, 1, s.cols);
  if (hasResult(call, 2))
    expectResultCount(call, 2, s.cols);
  const TensorArg &workspace = call.workspace;
  int64_t needed = countOf({s.rows, int64_t(sizeof(RowStats))});
  if (!workspace.present || workspace.getNumBytes() < needed)
    fail("layer norm's backward needs a workspace of " +
         std::to_string(needed) +
         " bytes (a mean and an inverse standard "
         "deviation per row)");
  return s;
}

} // namespace dpc::plan
