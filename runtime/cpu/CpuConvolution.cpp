//===- CpuConvolution.cpp - convolution kernels on the CPU ----------------===//
//
// 2-D convolutions through the kernel library (oneDNN primitives bound to
// the call site), and the convolution fused with the ReLU that follows it.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cpu/CpuKernelEntries.h"
#include "runtime/kernels/Conv.h"

namespace dpc::rt::cpu {

using namespace dpc::kernels;

void runConv2dForward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::Conv2dForward;
  conv2dForward(context, plan::getConv2dShape(call), in(call, X), in(call, W),
                in(call, Bias), out(call, Y));
}

void runConv2dBackwardData(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::Conv2dBackwardData;
  conv2dBackwardData(context, plan::getConv2dShape(call), in(call, DY),
                     in(call, W), out(call, DX));
}

void runConv2dBackwardWeights(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::Conv2dBackwardWeights;
  conv2dBackwardWeights(context, plan::getConv2dShape(call), in(call, X),
                        in(call, DY), out(call, DW), out(call, DB));
}

void runConv2dReluForward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::Conv2dReluForward;
  conv2dForward(context, plan::getConv2dShape(call), in(call, X), in(call, W),
                in(call, Bias), out(call, Y), /*relu=*/true);
}

} // namespace dpc::rt::cpu
