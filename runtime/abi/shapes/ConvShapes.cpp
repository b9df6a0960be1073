//===- ConvShapes.cpp - a convolution call's shape ------------------------===//

#include "runtime/abi/shapes/ConvShapes.h"
#include "runtime/abi/KernelArgs.h"
#include "runtime/abi/KernelAttrs.h"

#include <string>
#include <vector>

namespace dpc::plan {
using namespace args;

Conv2dShape getConv2dShape(const KernelCall &call) {
  // Which tensor holds the input, the weights and the output.
  const TensorArg *in, *weights, *out;
  Name inName, weightsName, outName;
  switch (call.kernel) {
  case Kernel::Conv2dForward:
  case Kernel::Conv2dReluForward:
    in = &operand(call, 0), weights = &operand(call, 1), out = &result(call, 0);
    inName = operandName(call.kernel, 0),
    weightsName = operandName(call.kernel, 1),
    outName = resultName(call.kernel, 0);
    break;
  case Kernel::Conv2dBackwardData:
    out = &operand(call, 0), weights = &operand(call, 1), in = &result(call, 0);
    outName = operandName(call.kernel, 0),
    weightsName = operandName(call.kernel, 1),
    inName = resultName(call.kernel, 0);
    break;
  default: // Conv2dBackwardWeights
    in = &operand(call, 0), out = &operand(call, 1), weights = &result(call, 0);
    inName = operandName(call.kernel, 0), outName = operandName(call.kernel, 1),
    weightsName = resultName(call.kernel, 0);
    break;
  }
  expectRank(*in, inName, 4, 5);
  expectRank(*weights, weightsName, in->dims.size(), in->dims.size());
  Conv2dShape s{};
  s.spatialDims = static_cast<int>(in->dims.size()) - 2;
  // The dims from the height on; a 3-D call's depth before them.
  size_t hw = in->dims.size() - 2;
  s.n = in->dims[0], s.c = in->dims[1], s.h = in->dims[hw],
  s.w = in->dims[hw + 1];
  s.k = weights->dims[0], s.r = weights->dims[hw], s.s = weights->dims[hw + 1];
  if (s.spatialDims == 3)
    s.d = in->dims[2], s.t = weights->dims[2];
  const Conv2dAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_Conv2dAttrs() : nullptr;
  if (attrs) {
    size_t axes = s.spatialDims;
    std::vector<int64_t> stride =
        axesAttr(attrs->stride(), "stride", std::vector<int64_t>(axes, 1));
    std::vector<int64_t> dilation =
        axesAttr(attrs->dilation(), "dilation", std::vector<int64_t>(axes, 1));
    std::vector<int64_t> padding = paddingAxesAttr(attrs->padding(), axes);
    // [.., h, w] and [.., top, left, .., bottom, right]: the last two axes.
    size_t h = axes - 2;
    s.strideH = stride[h], s.strideW = stride[h + 1];
    s.dilationH = dilation[h], s.dilationW = dilation[h + 1];
    s.padTop = padding[h], s.padLeft = padding[h + 1];
    s.padBottom = padding[axes + h], s.padRight = padding[axes + h + 1];
    if (axes == 3) {
      s.strideD = stride[0], s.dilationD = dilation[0];
      s.padFront = padding[0], s.padBack = padding[3];
    }
    s.groups = attrs->groups();
  }
  if (s.strideH < 1 || s.strideW < 1 || s.dilationH < 1 || s.dilationW < 1 ||
      s.strideD < 1 || s.dilationD < 1)
    fail("stride and dilation must be positive");
  if (s.groups < 1 || s.c % s.groups != 0 || s.k % s.groups != 0)
    fail("groups " + std::to_string(s.groups) + " must divide the " +
         std::to_string(s.c) + " input and " + std::to_string(s.k) +
         " output channels");
  if (weights->dims[1] * s.groups != s.c)
    fail(weightsName + " " + formatDims(weights->dims) + " does not match " +
         std::to_string(s.c) + " input channels in " +
         std::to_string(s.groups) + " groups");
  if (s.outD() < 1 || s.outH() < 1 || s.outW() < 1)
    fail("the convolution's output would be empty");
  expectCount(*out, outName, countOf({s.n, s.k, s.outD(), s.outH(), s.outW()}));
  if ((call.kernel == Kernel::Conv2dForward ||
       call.kernel == Kernel::Conv2dReluForward) &&
      hasOperand(call, 2))
    expectOperandCount(call, 2, s.k);
  if (call.kernel == Kernel::Conv2dBackwardWeights && hasResult(call, 1))
    expectResultCount(call, 1, s.k);
  s.blockedX = in->layout == Layout::NChw16c;
  s.blockedY = out->layout == Layout::NChw16c;
  s.precision = getPrecision(call);
  s.algorithm = getConvAlgorithm(call);
  s.dyCast = getCastSlot(call);
  if (s.algorithm == ConvAlgorithm::Winograd && s.precision != Precision::F32)
    fail("a Winograd convolution computes in F32 only");
  return s;
}

std::array<int64_t, 24> getConvGeometryKey(const Conv2dShape &s) {
  return {s.n,
          s.c,
          s.h,
          s.w,
          s.k,
          s.r,
          s.s,
          s.strideH,
          s.strideW,
          s.padTop,
          s.padLeft,
          s.padBottom,
          s.padRight,
          s.dilationH,
          s.dilationW,
          s.groups,
          static_cast<int64_t>(s.precision),
          s.spatialDims,
          s.d,
          s.t,
          s.strideD,
          s.padFront,
          s.padBack,
          s.dilationD};
}

} // namespace dpc::plan
