//===- ElementwiseLowering.cpp - constants, sums and products to kernels --===//
//
// Constants (a Fill, or a buffer holding the value), the broadcasting add
// and multiply, the rows broadcast of a batch-free tensor, and ReduceSum.
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

/// AddForward or MulForward of a batch-major operand pair: the kernels
/// broadcast B to A, so the larger goes first (+ and * commute).
LogicalResult broadcastingBinary(KernelBuilder &b, Operation *op, Kernel kernel,
                                 Value lhs, Value rhs) {
  static_assert(samePosition(roles::AddForward::A, roles::MulForward::A) &&
                samePosition(roles::AddForward::B, roles::MulForward::B));
  using namespace roles::AddForward;
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  if (lhsType.getNumElements() < rhsType.getNumElements())
    std::swap(lhs, rhs);
  return b.call(op, kernel, {{A, lhs}, {B, rhs}});
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

} // namespace dpc

void dpc::attachElementwiseLowerings(MLIRContext &context) {
  attachKernelLowerings<nn::ConstantOp, nn::ZerosLikeOp, nn::AddOp, nn::MulOp,
                        nn::BroadcastRowsOp, nn::ReduceSumOp>(context);
}
