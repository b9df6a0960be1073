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

static_assert(static_cast<int>(nn::LossKind::bce_with_logits) ==
                  static_cast<int>(plan::LossKind::BceWithLogits),
              "nn.loss's kinds are LossAttrs' in the same order");

/// LossAttrs of a loss op: its kind and options.
template <typename OpT>
SmallVector<NamedAttribute> lossAttrs(OpT op, KernelBuilder &b) {
  OpBuilder &builder = b.getBuilder();
  SmallVector<NamedAttribute> attrs = {b.attr(
      "kind", builder.getI64IntegerAttr(static_cast<int64_t>(op.getKind())))};
  if (op.getKind() == nn::LossKind::cross_entropy) {
    attrs.push_back(b.attr("class_axis", op.getClassAxisAttr()));
    if (auto ignore = op.getIgnoreIndexAttr())
      attrs.push_back(b.attr("ignore_index", ignore));
    attrs.push_back(b.attr("label_smoothing", op.getLabelSmoothingAttr()));
    if (auto weights = op.getClassWeightsAttr())
      attrs.push_back(b.attr("weights", weights));
  } else {
    attrs.push_back(b.attr("delta", op.getDeltaAttr()));
    if (auto weights = op.getPosWeightAttr())
      attrs.push_back(b.attr("weights", weights));
  }
  return attrs;
}

} // namespace

template <> LogicalResult lowerToKernels(nn::LossOp op, KernelBuilder &b) {
  if (isRowCrossEntropy(op)) {
    using namespace roles::CrossEntropyForward;
    return b.call(op, Kernel::CrossEntropyForward,
                  {{Logits, op.getOutput()}, {Labels, op.getTarget()}});
  }
  using namespace roles::LossForward;
  return b.call(op, Kernel::LossForward,
                {{Output, op.getOutput()},
                 {Target, op.getTarget()},
                 {Divisor, op.getDivisor()}},
                lossAttrs(op, b));
}

template <> LogicalResult lowerToKernels(nn::LossGradOp op, KernelBuilder &b) {
  if (isRowCrossEntropy(op)) {
    using namespace roles::CrossEntropyBackward;
    return b.call(op, Kernel::CrossEntropyBackward,
                  {{Logits, op.getOutput()},
                   {Labels, op.getTarget()},
                   {DLoss, op.getLossGrad()}});
  }
  using namespace roles::LossBackward;
  return b.call(op, Kernel::LossBackward,
                {{Output, op.getOutput()},
                 {Target, op.getTarget()},
                 {DLoss, op.getLossGrad()},
                 {Divisor, op.getDivisor()}},
                lossAttrs(op, b));
}

template <>
LogicalResult lowerToKernels(nn::LossWeightOp op, KernelBuilder &b) {
  using namespace roles::LossWeight;
  return b.call(op, Kernel::LossWeight,
                {{Output, op.getOutput()}, {Target, op.getTarget()}},
                lossAttrs(op, b));
}

template <>
LogicalResult lowerToKernels(nn::CorrectCountOp op, KernelBuilder &b) {
  auto logits = cast<RankedTensorType>(op.getLogits().getType());
  if (logits.getRank() == 2 && !op.getIgnoreIndex()) {
    using namespace roles::CorrectCount;
    return b.call(op, Kernel::CorrectCount,
                  {{Logits, op.getLogits()}, {Labels, op.getLabels()}});
  }
  using namespace roles::LossCorrectCount;
  SmallVector<NamedAttribute> attrs = {
      b.attr("kind", b.getBuilder().getI64IntegerAttr(0)),
      b.attr("class_axis", op.getClassAxisAttr())};
  if (auto ignore = op.getIgnoreIndexAttr())
    attrs.push_back(b.attr("ignore_index", ignore));
  return b.call(op, Kernel::LossCorrectCount,
                {{Output, op.getLogits()}, {Target, op.getLabels()}}, attrs);
}

} // namespace dpc

void dpc::attachLossLowerings(MLIRContext &context) {
  attachKernelLowerings<nn::LossOp, nn::LossGradOp, nn::LossWeightOp,
                        nn::CorrectCountOp>(context);
}
