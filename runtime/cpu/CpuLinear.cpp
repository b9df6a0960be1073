//===- CpuLinear.cpp - linear layers and matrix products on the CPU -------===//
//
// Linear layers (also fused with the ReLU that follows), matmul and its
// gradients, and batched matmul.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cpu/CpuKernelEntries.h"
#include "runtime/kernels/BatchMatmul.h"
#include "runtime/kernels/Linear.h"

namespace dpc::rt::cpu {

using namespace dpc::kernels;

void runLinearForward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::LinearForward;
  linearForward(context, plan::getLinearShape(call), in(call, X), in(call, W),
                in(call, Bias), out(call, Y));
}

void runLinearBackwardData(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::LinearBackwardData;
  linearBackwardData(context, plan::getLinearShape(call), in(call, DY),
                     in(call, W), out(call, DX));
}

void runLinearBackwardWeights(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::LinearBackwardWeights;
  linearBackwardWeights(context, plan::getLinearShape(call), in(call, X),
                        in(call, DY), out(call, DW), out(call, DB));
}

void runLinearReluForward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::LinearReluForward;
  linearForward(context, plan::getLinearShape(call), in(call, X), in(call, W),
                in(call, Bias), out(call, Y), /*relu=*/true);
}

void runMatmulForward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::MatmulForward;
  matmulForward(context, plan::getMatmulShape(call), in(call, A), in(call, B),
                out(call, C));
}

void runMatmulBackward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::MatmulBackward;
  matmulBackward(context, plan::getMatmulShape(call), in(call, A), in(call, B),
                 in(call, DC), out(call, DA), out(call, DB));
}

void runMatmulTransposedA(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::MatmulTransposedA;
  // c = a^T b is matmul's weight gradient with b as dc.
  matmulBackward(context, plan::getMatmulShape(call), in(call, A), nullptr,
                 in(call, B), nullptr, out(call, C));
}

void runBatchMatmul(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::BatchMatmul;
  batchMatmul(context, plan::getBatchMatmulShape(call), in(call, A),
              in(call, B), out(call, C));
}

} // namespace dpc::rt::cpu
