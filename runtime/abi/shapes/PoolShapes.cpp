//===- PoolShapes.cpp - pooling and padding shapes ------------------------===//

#include "runtime/abi/shapes/PoolShapes.h"
#include "runtime/abi/KernelArgs.h"
#include "runtime/abi/KernelAttrs.h"

#include <string>
#include <vector>

namespace dpc::plan {
using namespace args;

Pool2dShape getPool2dShape(const KernelCall &call) {
  const TensorArg *in, *out;
  Name inName, outName;
  switch (call.kernel) {
  case Kernel::MaxPool2dBackward:
    in = &operand(call, 0), out = &operand(call, 1);
    inName = operandName(call.kernel, 0), outName = operandName(call.kernel, 1);
    expectResultCount(call, 0, in->getNumElements());
    break;
  case Kernel::AvgPool2dBackward:
    out = &operand(call, 0), in = &result(call, 0);
    outName = operandName(call.kernel, 0), inName = resultName(call.kernel, 0);
    break;
  default: // forward
    in = &operand(call, 0), out = &result(call, 0);
    inName = operandName(call.kernel, 0), outName = resultName(call.kernel, 0);
    break;
  }
  expectRank(*in, inName, 4, 4);
  const Pool2dAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_Pool2dAttrs() : nullptr;
  if (!attrs)
    fail("Pool2dAttrs are missing");
  Pool2dShape s{};
  s.n = in->dims[0], s.c = in->dims[1], s.h = in->dims[2], s.w = in->dims[3];
  std::vector<int64_t> kernel = attrList(attrs->kernel());
  if (kernel.size() != 2)
    fail("the pooling kernel must have 2 values");
  s.kernelH = kernel[0], s.kernelW = kernel[1];
  pairAttr(attrs->stride(), "stride", s.kernelH, s.kernelW, s.strideH,
           s.strideW);
  paddingAttr(attrs->padding(), s.padTop, s.padLeft, s.padBottom, s.padRight);
  pairAttr(attrs->dilation(), "dilation", 1, 1, s.dilationH, s.dilationW);
  s.ceilMode = attrs->ceil_mode();
  s.countIncludePad = attrs->count_include_pad();
  if (s.kernelH < 1 || s.kernelW < 1 || s.strideH < 1 || s.strideW < 1 ||
      s.dilationH < 1 || s.dilationW < 1)
    fail("pooling kernel, stride and dilation must be positive");
  bool isAvg = call.kernel == Kernel::AvgPool2dForward ||
               call.kernel == Kernel::AvgPool2dBackward;
  if (isAvg && (s.dilationH != 1 || s.dilationW != 1))
    fail("average pooling takes no dilation");
  if (s.outH() < 1 || s.outW() < 1)
    fail("the pooling's output would be empty");
  expectCount(*out, outName, countOf({s.n, s.c, s.outH(), s.outW()}));
  if (in->layout == Layout::NChw16c)
    s.channelBlock = kChannelBlock;
  return s;
}

Nchw getGlobalAvgPoolShape(const KernelCall &call) {
  bool forward = call.kernel == Kernel::GlobalAvgPool2dForward;
  const TensorArg &in = forward ? operand(call, 0) : result(call, 0);
  Nchw d = nchwOf(
      in, forward ? operandName(call.kernel, 0) : resultName(call.kernel, 0),
      4);
  if (forward)
    expectResultCount(call, 0, d.n * d.c);
  else
    expectOperandCount(call, 0, d.n * d.c);
  return d;
}

Pad2dShape getPad2dShape(const KernelCall &call) {
  bool forward = call.kernel == Kernel::PadForward;
  const TensorArg &in = forward ? operand(call, 0) : result(call, 0);
  expectRank(in,
             forward ? operandName(call.kernel, 0) : resultName(call.kernel, 0),
             4, 4);
  const PadAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_PadAttrs() : nullptr;
  if (!attrs)
    fail("PadAttrs are missing");
  std::vector<int64_t> low = attrList(attrs->low()),
                       high = attrList(attrs->high());
  if (low.size() != high.size() || (low.size() != 2 && low.size() != 4))
    fail("pad low and high must both have 2 or 4 values");
  if (low.size() == 4) {
    if (low[0] || low[1] || high[0] || high[1])
      fail("only the spatial dims can be padded");
    low.erase(low.begin(), low.begin() + 2);
    high.erase(high.begin(), high.begin() + 2);
  }
  Pad2dShape s{in.dims[0], in.dims[1], in.dims[2], in.dims[3],
               low[0],     low[1],     high[0],    high[1]};
  // Bounded so that outH/outW (sums) cannot overflow.
  constexpr int64_t kMaxPad = int64_t(1) << 32;
  for (int64_t pad : {s.padTop, s.padLeft, s.padBottom, s.padRight})
    if (pad < 0 || pad > kMaxPad)
      fail("padding " + std::to_string(pad) + " is outside [0, 2^32]");
  int64_t outCount = countOf({s.n, s.c, s.outH(), s.outW()});
  if (forward)
    expectResultCount(call, 0, outCount);
  else
    expectOperandCount(call, 0, outCount);
  return s;
}

} // namespace dpc::plan
