//===- LossLowering.cpp - the loss and its gradient to kernels ------------===//
//
// Cross entropy, its gradient and the count of correct rows, one kernel
// call each (fuse-exec-kernels later joins them where it can).
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/KernelLowering.h"
#include "ir/nn/NNOps.h"

using namespace mlir;
using namespace dpc;
using plan::Kernel;
namespace roles = plan::roles;

namespace dpc {

template <>
LogicalResult lowerToKernels(nn::CrossEntropyOp op, KernelBuilder &b) {
  using namespace roles::CrossEntropyForward;
  return b.call(op, Kernel::CrossEntropyForward,
                {{Logits, op.getLogits()}, {Labels, op.getLabels()}});
}

template <>
LogicalResult lowerToKernels(nn::CrossEntropyGradOp op, KernelBuilder &b) {
  using namespace roles::CrossEntropyBackward;
  return b.call(op, Kernel::CrossEntropyBackward,
                {{Logits, op.getLogits()},
                 {Labels, op.getLabels()},
                 {DLoss, op.getLossGrad()}});
}

template <>
LogicalResult lowerToKernels(nn::CorrectCountOp op, KernelBuilder &b) {
  using namespace roles::CorrectCount;
  return b.call(op, Kernel::CorrectCount,
                {{Logits, op.getLogits()}, {Labels, op.getLabels()}});
}

} // namespace dpc

void dpc::attachLossLowerings(MLIRContext &context) {
  attachKernelLowerings<nn::CrossEntropyOp, nn::CrossEntropyGradOp,
                        nn::CorrectCountOp>(context);
}
