//===- NormLowering.cpp - batch and layer norm to kernels -----------------===//
//
// Batch norm in evaluation, in training (one replica's statistics, or the
// synchronized statistics of sync-bn: sums, all-reduced, then applied) and
// their gradients; layer norm and its gradient. The training kernels update
// the running statistics in place.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/KernelLowering.h"
#include "ir/nn/NNOps.h"

using namespace mlir;
using namespace dpc;
using plan::Kernel;
namespace roles = plan::roles;

namespace {

template <typename OpTy>
SmallVector<NamedAttribute> batchNormAttrs(KernelBuilder &b, OpTy op) {
  return {b.attr("epsilon", op.getEpsilonAttr()),
          b.attr("momentum", op.getMomentumAttr())};
}

/// A training-mode batch norm kernel: writes the result and the saved
/// statistics, and the running statistics in place.
template <typename OpTy>
LogicalResult trainingBatchNorm(KernelBuilder &b, OpTy op, Kernel kernel,
                                ArrayRef<RoleValue> ins) {
  Value outs[] = {b.allocate(op.getResult()), b.allocate(op.getBatchMean()),
                  b.allocate(op.getBatchInvstd())};
  b.kernel(kernel, b.buffersByRole(ins), outs, batchNormAttrs(b, op));
  if (failed(b.inPlace(op.getNewRunningMean(), op.getRunningMean())) ||
      failed(b.inPlace(op.getNewRunningVar(), op.getRunningVar())))
    return failure();
  return success();
}

} // namespace

namespace dpc {

template <> LogicalResult lowerToKernels(nn::BatchNormOp op, KernelBuilder &b) {
  using namespace roles::BatchNormInferenceForward;
  return b.call(op, Kernel::BatchNormInferenceForward,
                {{X, op.getInput()},
                 {Scale, op.getScale()},
                 {Shift, op.getShift()},
                 {Mean, op.getRunningMean()},
                 {Var, op.getRunningVar()}},
                batchNormAttrs(b, op));
}

template <>
LogicalResult lowerToKernels(nn::BatchNormTrainOp op, KernelBuilder &b) {
  using namespace roles::BatchNormTrainingForward;
  return trainingBatchNorm(b, op, Kernel::BatchNormTrainingForward,
                           {{X, op.getInput()},
                            {Scale, op.getScale()},
                            {Shift, op.getShift()},
                            {RunningMean, op.getRunningMean()},
                            {RunningVar, op.getRunningVar()}});
}

template <>
LogicalResult lowerToKernels(nn::BatchNormGradOp op, KernelBuilder &b) {
  using namespace roles::BatchNormBackward;
  return b.call(op, Kernel::BatchNormBackward,
                {{X, op.getInput()},
                 {DY, op.getResultGrad()},
                 {Scale, op.getScale()},
                 {SavedMean, op.getBatchMean()},
                 {SavedInvStd, op.getBatchInvstd()}});
}

template <>
LogicalResult lowerToKernels(nn::BatchNormStatsOp op, KernelBuilder &b) {
  using namespace roles::BatchNormStatistics;
  return b.call(op, Kernel::BatchNormStatistics, {{X, op.getInput()}});
}

template <>
LogicalResult lowerToKernels(nn::BatchNormApplyOp op, KernelBuilder &b) {
  using namespace roles::BatchNormApply;
  return trainingBatchNorm(b, op, Kernel::BatchNormApply,
                           {{X, op.getInput()},
                            {Scale, op.getScale()},
                            {Shift, op.getShift()},
                            {RunningMean, op.getRunningMean()},
                            {RunningVar, op.getRunningVar()},
                            {Sum, op.getSum()},
                            {SumSq, op.getSumSq()},
                            {Count, op.getCount()}});
}

template <>
LogicalResult lowerToKernels(nn::BatchNormGradStatsOp op, KernelBuilder &b) {
  using namespace roles::BatchNormGradStatistics;
  return b.call(op, Kernel::BatchNormGradStatistics,
                {{X, op.getInput()},
                 {DY, op.getResultGrad()},
                 {SavedMean, op.getBatchMean()},
                 {SavedInvStd, op.getBatchInvstd()}});
}

template <>
LogicalResult lowerToKernels(nn::BatchNormGradApplyOp op, KernelBuilder &b) {
  using namespace roles::BatchNormGradApply;
  return b.call(op, Kernel::BatchNormGradApply,
                {{X, op.getInput()},
                 {DY, op.getResultGrad()},
                 {Scale, op.getScale()},
                 {SavedMean, op.getBatchMean()},
                 {SavedInvStd, op.getBatchInvstd()},
                 {SumDY, op.getSumDy()},
                 {SumDYXhat, op.getSumDyXhat()},
                 {Count, op.getCount()}});
}

template <> LogicalResult lowerToKernels(nn::LayerNormOp op, KernelBuilder &b) {
  using namespace roles::LayerNormForward;
  return b.call(
      op, Kernel::LayerNormForward,
      {{X, op.getInput()}, {Scale, op.getScale()}, {Bias, op.getBias()}},
      {b.attr("axis", op.getAxisAttr()),
       b.attr("epsilon", op.getEpsilonAttr())});
}

template <>
LogicalResult lowerToKernels(nn::LayerNormGradOp op, KernelBuilder &b) {
  using namespace roles::LayerNormBackward;
  // The workspace: a mean and an inverse standard deviation (two floats)
  // per row at the compiled batch.
  auto type = cast<RankedTensorType>(op.getInput().getType());
  int64_t rows = 1;
  for (int64_t d : type.getShape().take_front(op.getAxis()))
    rows *= d;
  return b.call(
      op, Kernel::LayerNormBackward,
      {{X, op.getInput()}, {DY, op.getResultGrad()}, {Scale, op.getScale()}},
      {b.attr("axis", op.getAxisAttr()),
       b.attr("epsilon", op.getEpsilonAttr())},
      rows * 2 * int64_t(sizeof(float)));
}

} // namespace dpc

void dpc::attachNormLowerings(MLIRContext &context) {
  attachKernelLowerings<
      nn::BatchNormOp, nn::BatchNormTrainOp, nn::BatchNormGradOp,
      nn::BatchNormStatsOp, nn::BatchNormApplyOp, nn::BatchNormGradStatsOp,
      nn::BatchNormGradApplyOp, nn::LayerNormOp, nn::LayerNormGradOp>(context);
}
