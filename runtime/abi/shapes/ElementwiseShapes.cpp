//===- ElementwiseShapes.cpp - element-wise and broadcast shapes ----------===//

#include "runtime/abi/shapes/ElementwiseShapes.h"
#include "runtime/abi/KernelArgs.h"
#include "runtime/abi/KernelAttrs.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace dpc::plan {
using namespace args;

int64_t getElementwiseSize(const KernelCall &call) {
  switch (call.kernel) {
  case Kernel::Fill: {
    const TensorArg &y = call.result(0);
    if (!y.present)
      fail(resultName(call.kernel, 0) + " is missing");
    if (y.dtype != DType::F32 && y.dtype != DType::F64 &&
        y.dtype != DType::I32 && y.dtype != DType::I64)
      fail(std::string("cannot fill a ") + EnumNameDType(y.dtype) + " tensor");
    return y.getNumElements();
  }
  case Kernel::Copy: {
    const TensorArg &x = call.operand(0), &y = call.result(0);
    if (!x.present || !y.present)
      fail("copy needs an operand and a result");
    if (x.dtype != y.dtype)
      fail("copy from " + std::string(EnumNameDType(x.dtype)) + " to " +
           EnumNameDType(y.dtype));
    int64_t size = x.getNumElements();
    expectCount(y, resultName(call.kernel, 0), size);
    return size;
  }
  default: {
    int64_t size = operand(call, 0).getNumElements();
    for (size_t i = 1; i < call.operands.size(); ++i)
      expectOperandCount(call, i, size);
    expectResultCount(call, 0, size);
    return size;
  }
  }
}

/// ActivationAttrs' alpha and beta (0 where the table is missing), finite.
static ActivationParams getActivationParams(const Instruction *instruction) {
  const ActivationAttrs *attrs =
      instruction ? instruction->attrs_as_ActivationAttrs() : nullptr;
  double alpha = attrs ? attrs->alpha() : 0.0,
         beta = attrs ? attrs->beta() : 0.0;
  if (!std::isfinite(static_cast<float>(alpha)) ||
      !std::isfinite(static_cast<float>(beta)))
    fail("activation parameters alpha " + std::to_string(alpha) + " and beta " +
         std::to_string(beta) + " must be finite floats");
  return {static_cast<float>(alpha), static_cast<float>(beta)};
}

InputActivationShape getInputActivationShape(const KernelCall &call) {
  InputActivationShape s{InputActivation::HardSwish, {}, 0};
  const Instruction *instruction = call.instruction;
  switch (call.kernel) {
  case Kernel::ClipForward:
  case Kernel::ClipBackward: {
    const ClipAttrs *attrs =
        instruction ? instruction->attrs_as_ClipAttrs() : nullptr;
    if (!attrs)
      fail("ClipAttrs are missing");
    if (!std::isfinite(attrs->min()) || !std::isfinite(attrs->max()) ||
        attrs->min() > attrs->max())
      fail("clip bounds [" + std::to_string(attrs->min()) + ", " +
           std::to_string(attrs->max()) + "] are not an interval");
    s.kind = InputActivation::Clip;
    s.params = {static_cast<float>(attrs->min()),
                static_cast<float>(attrs->max())};
    break;
  }
  case Kernel::HardSigmoidForward:
  case Kernel::HardSigmoidBackward: {
    const HardSigmoidAttrs *attrs =
        instruction ? instruction->attrs_as_HardSigmoidAttrs() : nullptr;
    double alpha = attrs ? attrs->alpha() : 0.2,
           beta = attrs ? attrs->beta() : 0.5;
    if (!std::isfinite(alpha) || !std::isfinite(beta))
      fail("hard sigmoid alpha and beta must be finite");
    s.kind = InputActivation::HardSigmoid;
    s.params = {static_cast<float>(alpha), static_cast<float>(beta)};
    break;
  }
  case Kernel::GeluForward:
  case Kernel::GeluBackward: {
    const GeluAttrs *attrs =
        instruction ? instruction->attrs_as_GeluAttrs() : nullptr;
    s.kind = attrs && attrs->tanh_approximation() ? InputActivation::GeluTanh
                                                  : InputActivation::Gelu;
    break;
  }
  case Kernel::ErfForward:
  case Kernel::ErfBackward:
    s.kind = InputActivation::Erf;
    break;
  case Kernel::HardSwishForward:
  case Kernel::HardSwishBackward:
    break;
#define DPC_KERNEL(...)
#define DPC_INPUT_ACTIVATION(Name)                                             \
  case Kernel::Name##Forward:                                                  \
  case Kernel::Name##Backward:                                                 \
    s.kind = InputActivation::Name;                                            \
    s.params = getActivationParams(instruction);                               \
    break;
#include "runtime/abi/Kernels.def"
  default:
    fail(std::string(EnumNameKernel(call.kernel)) +
         " is not an input activation");
  }
  s.size = getElementwiseSize(call);
  return s;
}

DropoutShape getDropoutShape(const KernelCall &call) {
  const DropoutAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_DropoutAttrs() : nullptr;
  if (!attrs)
    fail("DropoutAttrs are missing");
  if (!(attrs->ratio() >= 0 && attrs->ratio() <= 1))
    fail("dropout ratio " + std::to_string(attrs->ratio()) +
         " is not in [0, 1]");
  if (attrs->key() < 0 || attrs->key() > UINT32_MAX)
    fail("dropout key " + std::to_string(attrs->key()) +
         " is not a 32-bit site number");
  int64_t size = getElementwiseSize(call);
  const TensorArg &x = operand(call, 0);
  if (x.dims.empty())
    fail("dropout needs a batch dimension");
  DropoutShape s{attrs->ratio(), attrs->key(), x.dims[0], 0, attrs->rowwise()};
  s.cols = s.rows > 0 ? size / s.rows : 0;
  s.span = attrs->span();
  s.scale = attrs->scale();
  s.shift = attrs->shift();
  s.fill = attrs->fill();
  s.uniform = attrs->uniform();
  if (s.span < 1 || (s.cols > 0 && s.cols % s.span != 0))
    fail("dropout rows of " + std::to_string(s.cols) +
         " elements are not whole draws of " + std::to_string(s.span));
  // The mask counts rows and groups of four elements in 32 bits.
  if (s.cols > (int64_t(1) << 34))
    fail("dropout rows of " + std::to_string(s.cols) +
         " elements exceed the mask's 2^34");
  return s;
}

BroadcastShape getBroadcastShape(const KernelCall &call) {
  std::vector<int64_t> lhs, rhs;
  int64_t lhsCount = 0;
  switch (call.kernel) {
  case Kernel::AddForward:
  case Kernel::AddReluForward:
  case Kernel::MulForward:
  case Kernel::MaximumForward:
  case Kernel::MinimumForward:
    lhs = operand(call, 0).dims, rhs = operand(call, 1).dims;
    lhsCount = operand(call, 0).getNumElements();
    expectResultCount(call, 0, lhsCount);
    break;
  case Kernel::AddBackward:
    lhs = operand(call, 0).dims;
    lhsCount = operand(call, 0).getNumElements();
    if (hasResult(call, 0))
      expectResultCount(call, 0, lhsCount);
    rhs = hasResult(call, 1) ? result(call, 1).dims : std::vector<int64_t>{};
    break;
  default: // MulBackward, MaximumBackward, MinimumBackward (a, b, dc) ->
           // (da, db)
    lhs = operand(call, 0).dims, rhs = operand(call, 1).dims;
    lhsCount = operand(call, 0).getNumElements();
    expectOperandCount(call, 2, lhsCount);
    if (hasResult(call, 0))
      expectResultCount(call, 0, lhsCount);
    if (hasResult(call, 1))
      expectResultCount(call, 1, operand(call, 1).getNumElements());
    break;
  }
  try {
    return makeBroadcastShape(lhs, rhs);
  } catch (const std::invalid_argument &) {
    fail(formatDims(rhs) + " does not broadcast to " + formatDims(lhs));
  }
}

} // namespace dpc::plan
