//===- ElementwiseLowering.cpp - constants, sums and products to kernels --===//
//
// Constants (a Fill, or a buffer holding the value), the broadcasting add,
// multiply, maximum and minimum, the rows broadcast of a batch-free tensor,
// and the reductions (sum, max, min).
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/KernelLowering.h"
#include "ir/nn/NNOps.h"

using namespace mlir;
using namespace dpc;
using plan::Kernel;
namespace roles = plan::roles;

namespace {

NamedAttribute fillValue(KernelBuilder &b, double value) {
  return b.attr("value", b.getBuilder().getF64FloatAttr(value));
}

/// AddForward, MulForward, MaximumForward or MinimumForward of a
/// batch-major operand pair: the kernels broadcast B to A, so the larger
/// goes first (all four commute).
LogicalResult broadcastingBinary(KernelBuilder &b, Operation *op, Kernel kernel,
                                 Value lhs, Value rhs) {
  static_assert(samePosition(roles::AddForward::A, roles::MulForward::A) &&
                samePosition(roles::AddForward::B, roles::MulForward::B) &&
                samePosition(roles::AddForward::A, roles::MaximumForward::A) &&
                samePosition(roles::AddForward::B, roles::MaximumForward::B) &&
                samePosition(roles::AddForward::A, roles::MinimumForward::A) &&
                samePosition(roles::AddForward::B, roles::MinimumForward::B));
  using namespace roles::AddForward;
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  if (lhsType.getNumElements() < rhsType.getNumElements())
    std::swap(lhs, rhs);
  return b.call(op, kernel, {{A, lhs}, {B, rhs}});
}

/// MaximumBackward or MinimumBackward: (A, B, DC) -> (DA, DB) with B
/// broadcast to A, so the larger operand is A (the tie rule is symmetric)
/// and the results follow it.
template <typename GradOpT>
LogicalResult extremumGrad(GradOpT op, Kernel kernel, KernelBuilder &b) {
  using namespace roles::MaximumBackward;
  static_assert(samePosition(A, roles::MinimumBackward::A) &&
                samePosition(B, roles::MinimumBackward::B) &&
                samePosition(DC, roles::MinimumBackward::DC) &&
                samePosition(DA, roles::MinimumBackward::DA) &&
                samePosition(DB, roles::MinimumBackward::DB));
  Value lhs = op.getLhs(), rhs = op.getRhs();
  Value lhsGrad = op.getLhsGrad(), rhsGrad = op.getRhsGrad();
  if (cast<RankedTensorType>(lhs.getType()).getNumElements() <
      cast<RankedTensorType>(rhs.getType()).getNumElements()) {
    std::swap(lhs, rhs);
    std::swap(lhsGrad, rhsGrad);
  }
  SmallVector<Value> outs = b.allocateAll({lhsGrad, rhsGrad});
  b.kernel(kernel,
           b.buffersByRole({{A, lhs}, {B, rhs}, {DC, op.getResultGrad()}}),
           outs);
  return success();
}

} // namespace

namespace dpc {

template <> LogicalResult lowerToKernels(nn::ConstantOp op, KernelBuilder &b) {
  if (!isa<FloatType>(op.getValue().getElementType()))
    return op.emitError() << "only floating-point constants can be "
                             "lowered";
  auto value = dyn_cast<SplatElementsAttr>(op.getValue());
  if (!value)
    return b.constantBuffer(op.getResult(),
                            cast<DenseElementsAttr>(op.getValue()));
  return b.call(
      op, Kernel::Fill, {},
      {fillValue(b, value.getSplatValue<APFloat>().convertToDouble())});
}

template <> LogicalResult lowerToKernels(nn::ZerosLikeOp op, KernelBuilder &b) {
  return b.call(op, Kernel::Fill, {}, {fillValue(b, 0)});
}

template <> LogicalResult lowerToKernels(nn::AddOp op, KernelBuilder &b) {
  return broadcastingBinary(b, op, Kernel::AddForward, op.getLhs(),
                            op.getRhs());
}

template <> LogicalResult lowerToKernels(nn::MulOp op, KernelBuilder &b) {
  return broadcastingBinary(b, op, Kernel::MulForward, op.getLhs(),
                            op.getRhs());
}

template <> LogicalResult lowerToKernels(nn::MaximumOp op, KernelBuilder &b) {
  return broadcastingBinary(b, op, Kernel::MaximumForward, op.getLhs(),
                            op.getRhs());
}

template <> LogicalResult lowerToKernels(nn::MinimumOp op, KernelBuilder &b) {
  return broadcastingBinary(b, op, Kernel::MinimumForward, op.getLhs(),
                            op.getRhs());
}

template <>
LogicalResult lowerToKernels(nn::MaximumGradOp op, KernelBuilder &b) {
  return extremumGrad(op, Kernel::MaximumBackward, b);
}

template <>
LogicalResult lowerToKernels(nn::MinimumGradOp op, KernelBuilder &b) {
  return extremumGrad(op, Kernel::MinimumBackward, b);
}

template <>
LogicalResult lowerToKernels(nn::BroadcastRowsOp op, KernelBuilder &b) {
  using namespace roles::AddForward;
  // Zeros of the result's shape plus the broadcast input; `rows` only
  // sized the result.
  Value zeros = b.allocate(op.getResult());
  b.kernel(Kernel::Fill, {}, {zeros}, {fillValue(b, 0)});
  Value sum = b.allocate(op.getResult());
  b.kernel(
      Kernel::AddForward,
      KernelBuilder::orderByRole({{A, zeros}, {B, b.buffer(op.getInput())}}),
      {sum});
  return success();
}

template <> LogicalResult lowerToKernels(nn::ReduceSumOp op, KernelBuilder &b) {
  using namespace roles::ReduceSum;
  return b.call(op, Kernel::ReduceSum, {{X, op.getInput()}},
                {b.attr("dims", op.getDimsAttr())});
}

template <> LogicalResult lowerToKernels(nn::ReduceMaxOp op, KernelBuilder &b) {
  using namespace roles::ReduceMax;
  return b.call(op, Kernel::ReduceMax, {{X, op.getInput()}},
                {b.attr("dims", op.getDimsAttr())});
}

template <> LogicalResult lowerToKernels(nn::ReduceMinOp op, KernelBuilder &b) {
  using namespace roles::ReduceMin;
  return b.call(op, Kernel::ReduceMin, {{X, op.getInput()}},
                {b.attr("dims", op.getDimsAttr())});
}

template <>
LogicalResult lowerToKernels(nn::ReduceExtremumGradOp op, KernelBuilder &b) {
  using namespace roles::ReduceExtremumBackward;
  return b.call(
      op, Kernel::ReduceExtremumBackward,
      {{X, op.getInput()}, {Y, op.getResult()}, {DY, op.getResultGrad()}},
      {b.attr("dims", op.getDimsAttr())});
}

} // namespace dpc

void dpc::attachElementwiseLowerings(MLIRContext &context) {
  attachKernelLowerings<nn::ConstantOp, nn::ZerosLikeOp, nn::AddOp, nn::MulOp,
                        nn::MaximumOp, nn::MinimumOp, nn::MaximumGradOp,
                        nn::MinimumGradOp, nn::BroadcastRowsOp, nn::ReduceSumOp,
                        nn::ReduceMaxOp, nn::ReduceMinOp,
                        nn::ReduceExtremumGradOp>(context);
}
