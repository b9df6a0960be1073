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

namespace {

/// Whether `loss` is the cross-entropy of logits [N, C] against one class
/// per sample, with none of its options: the row kernels' loss, which
/// fuse-exec-kernels joins with its gradient and the count of correct rows.
template <typename OpT> bool isRowCrossEntropy(OpT loss) {
  return loss.getKind() == nn::LossKind::cross_entropy &&
         cast<RankedTensorType>(loss.getOutput().getType()).getRank() == 2 &&
         !loss.getIgnoreIndex() && !loss.getClassWeights() &&
         loss.getLabelSmoothing().isZero();
}

} // namespace

template <> LogicalResult lowerToKernels(nn::LossOp op, KernelBuilder &b) {
  using namespace roles::CrossEntropyForward;
  if (!isRowCrossEntropy(op))
    return op.emitOpError() << "has no kernel yet";
  return b.call(op, Kernel::CrossEntropyForward,
                {{Logits, op.getOutput()}, {Labels, op.getTarget()}});
}

template <> LogicalResult lowerToKernels(nn::LossGradOp op, KernelBuilder &b) {
  using namespace roles::CrossEntropyBackward;
  if (!isRowCrossEntropy(op))
    return op.emitOpError() << "has no kernel yet";
  return b.call(op, Kernel::CrossEntropyBackward,
                {{Logits, op.getOutput()},
                 {Labels, op.getTarget()},
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
  attachKernelLowerings<nn::LossOp, nn::LossGradOp, nn::CorrectCountOp>(
      context);
}
