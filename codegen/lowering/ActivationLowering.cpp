//===- ActivationLowering.cpp - activations to kernels --------------------===//
//
// Element-wise activations and their gradients, dropout, and the row-wise
// softmax and log-softmax: one kernel call each. The gradients of ReLU,
// sigmoid, tanh and reciprocal read the forward's result, those of the
// input activations (clip, hard sigmoid, hard swish, GELU, erf, and the
// ones defined with their gradient op) its input.
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
SmallVector<NamedAttribute> clipAttrs(KernelBuilder &b, OpTy op) {
  return {b.attr("min", op.getMinAttr()), b.attr("max", op.getMaxAttr())};
}

template <typename OpTy>
SmallVector<NamedAttribute> hardSigmoidAttrs(KernelBuilder &b, OpTy op) {
  return {b.attr("alpha", op.getAlphaAttr()), b.attr("beta", op.getBetaAttr())};
}

template <typename OpTy>
SmallVector<NamedAttribute> geluAttrs(KernelBuilder &b, OpTy op) {
  return {b.attr("tanh_approximation", op.getTanhApproximationAttr())};
}

template <typename OpTy>
SmallVector<NamedAttribute> dropoutAttrs(KernelBuilder &b, OpTy op) {
  SmallVector<NamedAttribute> attrs = {b.attr("ratio", op.getRatioAttr()),
                                       b.attr("key", op.getKeyAttr())};
  if (op.getRowwise())
    attrs.push_back(b.attr("rowwise", b.getBuilder().getBoolAttr(true)));
  if (op.getSpan() != 1)
    attrs.push_back(b.attr("span", op.getSpanAttr()));
  if (op.getScaleAttr())
    attrs.push_back(b.attr("scale", op.getScaleAttr()));
  return attrs;
}

/// A call of an input activation of Kernels.def's DPC_INPUT_ACTIVATION
/// rows: (X) -> (Y) forward, (X, DY) -> (DX) for the gradient op, with the
/// op's parameters as the kernel's `alpha` and `beta` (null: 0).
template <typename OpTy>
LogicalResult callInputActivation(OpTy op, Kernel kernel, KernelBuilder &b,
                                  Attribute alpha, Attribute beta = {}) {
  // The rows' roles are at the clip kernels' positions (Kernels.def).
  SmallVector<RoleValue> ins = {{roles::ClipForward::X, op.getInput()}};
  if constexpr (OpTy::template hasTrait<OpTrait::NOperands<2>::Impl>())
    ins.push_back({roles::ClipBackward::DY, op.getResultGrad()});
  SmallVector<NamedAttribute> attrs;
  if (alpha)
    attrs.push_back(b.attr("alpha", alpha));
  if (beta)
    attrs.push_back(b.attr("beta", beta));
  return b.call(op, kernel, ins, attrs);
}

} // namespace

namespace dpc {

//===----------------------------------------------------------------------===//
// Gradients from the result
//===----------------------------------------------------------------------===//

template <> LogicalResult lowerToKernels(nn::ReluOp op, KernelBuilder &b) {
  using namespace roles::ReluForward;
  return b.call(op, Kernel::ReluForward, {{X, op.getInput()}});
}

// relu' needs only the sign, which input and result share.
template <> LogicalResult lowerToKernels(nn::ReluGradOp op, KernelBuilder &b) {
  using namespace roles::ReluBackward;
  return b.call(op, Kernel::ReluBackward,
                {{Y, op.getInput()}, {DY, op.getResultGrad()}});
}

template <> LogicalResult lowerToKernels(nn::SigmoidOp op, KernelBuilder &b) {
  using namespace roles::SigmoidForward;
  return b.call(op, Kernel::SigmoidForward, {{X, op.getInput()}});
}

template <>
LogicalResult lowerToKernels(nn::SigmoidGradOp op, KernelBuilder &b) {
  using namespace roles::SigmoidBackward;
  return b.call(op, Kernel::SigmoidBackward,
                {{Y, op.getResult()}, {DY, op.getResultGrad()}});
}

template <> LogicalResult lowerToKernels(nn::TanhOp op, KernelBuilder &b) {
  using namespace roles::TanhForward;
  return b.call(op, Kernel::TanhForward, {{X, op.getInput()}});
}

template <> LogicalResult lowerToKernels(nn::TanhGradOp op, KernelBuilder &b) {
  using namespace roles::TanhBackward;
  return b.call(op, Kernel::TanhBackward,
                {{Y, op.getResult()}, {DY, op.getResultGrad()}});
}

template <>
LogicalResult lowerToKernels(nn::ReciprocalOp op, KernelBuilder &b) {
  using namespace roles::ReciprocalForward;
  return b.call(op, Kernel::ReciprocalForward, {{X, op.getInput()}});
}

template <>
LogicalResult lowerToKernels(nn::ReciprocalGradOp op, KernelBuilder &b) {
  using namespace roles::ReciprocalBackward;
  return b.call(op, Kernel::ReciprocalBackward,
                {{Y, op.getResult()}, {DY, op.getResultGrad()}});
}

//===----------------------------------------------------------------------===//
// Gradients from the input
//===----------------------------------------------------------------------===//

template <> LogicalResult lowerToKernels(nn::ClipOp op, KernelBuilder &b) {
  using namespace roles::ClipForward;
  return b.call(op, Kernel::ClipForward, {{X, op.getInput()}},
                clipAttrs(b, op));
}

template <> LogicalResult lowerToKernels(nn::ClipGradOp op, KernelBuilder &b) {
  using namespace roles::ClipBackward;
  return b.call(op, Kernel::ClipBackward,
                {{X, op.getInput()}, {DY, op.getResultGrad()}},
                clipAttrs(b, op));
}

template <>
LogicalResult lowerToKernels(nn::HardSigmoidOp op, KernelBuilder &b) {
  using namespace roles::HardSigmoidForward;
  return b.call(op, Kernel::HardSigmoidForward, {{X, op.getInput()}},
                hardSigmoidAttrs(b, op));
}

template <>
LogicalResult lowerToKernels(nn::HardSigmoidGradOp op, KernelBuilder &b) {
  using namespace roles::HardSigmoidBackward;
  return b.call(op, Kernel::HardSigmoidBackward,
                {{X, op.getInput()}, {DY, op.getResultGrad()}},
                hardSigmoidAttrs(b, op));
}

template <> LogicalResult lowerToKernels(nn::HardSwishOp op, KernelBuilder &b) {
  using namespace roles::HardSwishForward;
  return b.call(op, Kernel::HardSwishForward, {{X, op.getInput()}});
}

template <>
LogicalResult lowerToKernels(nn::HardSwishGradOp op, KernelBuilder &b) {
  using namespace roles::HardSwishBackward;
  return b.call(op, Kernel::HardSwishBackward,
                {{X, op.getInput()}, {DY, op.getResultGrad()}});
}

template <> LogicalResult lowerToKernels(nn::GeluOp op, KernelBuilder &b) {
  using namespace roles::GeluForward;
  return b.call(op, Kernel::GeluForward, {{X, op.getInput()}},
                geluAttrs(b, op));
}

template <> LogicalResult lowerToKernels(nn::GeluGradOp op, KernelBuilder &b) {
  using namespace roles::GeluBackward;
  return b.call(op, Kernel::GeluBackward,
                {{X, op.getInput()}, {DY, op.getResultGrad()}},
                geluAttrs(b, op));
}

template <> LogicalResult lowerToKernels(nn::ErfOp op, KernelBuilder &b) {
  using namespace roles::ErfForward;
  return b.call(op, Kernel::ErfForward, {{X, op.getInput()}});
}

template <> LogicalResult lowerToKernels(nn::ErfGradOp op, KernelBuilder &b) {
  using namespace roles::ErfBackward;
  return b.call(op, Kernel::ErfBackward,
                {{X, op.getInput()}, {DY, op.getResultGrad()}});
}

template <> LogicalResult lowerToKernels(nn::LeakyReluOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::LeakyReluForward, b,
                             op.getAlphaAttr());
}

template <>
LogicalResult lowerToKernels(nn::LeakyReluGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::LeakyReluBackward, b,
                             op.getAlphaAttr());
}

template <> LogicalResult lowerToKernels(nn::EluOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::EluForward, b, op.getAlphaAttr());
}

template <> LogicalResult lowerToKernels(nn::EluGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::EluBackward, b, op.getAlphaAttr());
}

template <> LogicalResult lowerToKernels(nn::SeluOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::SeluForward, b, op.getAlphaAttr(),
                             op.getGammaAttr());
}

template <> LogicalResult lowerToKernels(nn::SeluGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::SeluBackward, b, op.getAlphaAttr(),
                             op.getGammaAttr());
}

template <> LogicalResult lowerToKernels(nn::CeluOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::CeluForward, b, op.getAlphaAttr());
}

template <> LogicalResult lowerToKernels(nn::CeluGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::CeluBackward, b, op.getAlphaAttr());
}

template <> LogicalResult lowerToKernels(nn::SoftplusOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::SoftplusForward, b, op.getBetaAttr(),
                             op.getThresholdAttr());
}

template <>
LogicalResult lowerToKernels(nn::SoftplusGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::SoftplusBackward, b, op.getBetaAttr(),
                             op.getThresholdAttr());
}

template <> LogicalResult lowerToKernels(nn::MishOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::MishForward, b, {});
}

template <> LogicalResult lowerToKernels(nn::MishGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::MishBackward, b, {});
}

template <> LogicalResult lowerToKernels(nn::AbsOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::AbsForward, b, {});
}

template <> LogicalResult lowerToKernels(nn::AbsGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::AbsBackward, b, {});
}

template <> LogicalResult lowerToKernels(nn::LogOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::LogForward, b, {});
}

template <> LogicalResult lowerToKernels(nn::LogGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::LogBackward, b, {});
}

template <>
LogicalResult lowerToKernels(nn::LogSigmoidOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::LogSigmoidForward, b, {});
}

template <>
LogicalResult lowerToKernels(nn::LogSigmoidGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::LogSigmoidBackward, b, {});
}

template <> LogicalResult lowerToKernels(nn::ShrinkOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::ShrinkForward, b, op.getLambdAttr(),
                             op.getBiasAttr());
}

template <>
LogicalResult lowerToKernels(nn::ShrinkGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::ShrinkBackward, b, op.getLambdAttr(),
                             op.getBiasAttr());
}

template <> LogicalResult lowerToKernels(nn::ThresholdOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::ThresholdForward, b,
                             op.getThresholdAttr(), op.getValueAttr());
}

template <>
LogicalResult lowerToKernels(nn::ThresholdGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::ThresholdBackward, b,
                             op.getThresholdAttr(), op.getValueAttr());
}

template <> LogicalResult lowerToKernels(nn::ExpOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::ExpForward, b, {});
}

template <> LogicalResult lowerToKernels(nn::ExpGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::ExpBackward, b, {});
}

template <> LogicalResult lowerToKernels(nn::SqrtOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::SqrtForward, b, {});
}

template <> LogicalResult lowerToKernels(nn::SqrtGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::SqrtBackward, b, {});
}

template <> LogicalResult lowerToKernels(nn::PowOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::PowForward, b, op.getExponentAttr());
}

template <> LogicalResult lowerToKernels(nn::PowGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::PowBackward, b, op.getExponentAttr());
}

template <> LogicalResult lowerToKernels(nn::SinOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::SinForward, b, {});
}

template <> LogicalResult lowerToKernels(nn::SinGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::SinBackward, b, {});
}

template <> LogicalResult lowerToKernels(nn::CosOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::CosForward, b, {});
}

template <> LogicalResult lowerToKernels(nn::CosGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::CosBackward, b, {});
}

template <> LogicalResult lowerToKernels(nn::SignOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::SignForward, b, {});
}

template <> LogicalResult lowerToKernels(nn::SignGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::SignBackward, b, {});
}

template <> LogicalResult lowerToKernels(nn::FloorOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::FloorForward, b, {});
}

template <> LogicalResult lowerToKernels(nn::FloorGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::FloorBackward, b, {});
}

template <> LogicalResult lowerToKernels(nn::CeilOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::CeilForward, b, {});
}

template <> LogicalResult lowerToKernels(nn::CeilGradOp op, KernelBuilder &b) {
  return callInputActivation(op, Kernel::CeilBackward, b, {});
}

//===----------------------------------------------------------------------===//
// Dropout and the row-wise activations
//===----------------------------------------------------------------------===//

template <> LogicalResult lowerToKernels(nn::DropoutOp op, KernelBuilder &b) {
  using namespace roles::DropoutForward;
  SmallVector<NamedAttribute> attrs = dropoutAttrs(b, op);
  if (!op.getShift().isZero())
    attrs.push_back(b.attr("shift", op.getShiftAttr()));
  if (!op.getFill().isZero())
    attrs.push_back(b.attr("fill", op.getFillAttr()));
  return b.call(op, Kernel::DropoutForward, {{X, op.getInput()}}, attrs);
}

// The dropout kernel's uniform form: x (low + (high - low) u).
template <>
LogicalResult lowerToKernels(nn::RandomScaleOp op, KernelBuilder &b) {
  using namespace roles::DropoutForward;
  Builder &builder = b.getBuilder();
  double low = op.getLow().convertToDouble();
  double high = op.getHigh().convertToDouble();
  return b.call(op, Kernel::DropoutForward, {{X, op.getInput()}},
                {b.attr("ratio", builder.getF64FloatAttr(0.0)),
                 b.attr("key", op.getKeyAttr()),
                 b.attr("uniform", builder.getBoolAttr(true)),
                 b.attr("scale", builder.getF64FloatAttr(high - low)),
                 b.attr("shift", builder.getF64FloatAttr(low))});
}

template <>
LogicalResult lowerToKernels(nn::DropoutGradOp op, KernelBuilder &b) {
  using namespace roles::DropoutBackward;
  return b.call(op, Kernel::DropoutBackward, {{DY, op.getResultGrad()}},
                dropoutAttrs(b, op));
}

/// The softmax kernels take rows of the last dim (the importer swaps
/// another axis there).
template <typename OpTy> LogicalResult checkLastAxis(OpTy op) {
  int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
  if (static_cast<int64_t>(op.getAxis()) == rank - 1)
    return success();
  return op.emitOpError() << "is lowered only along the last dim (" << rank - 1
                          << "), not " << op.getAxis();
}

template <> LogicalResult lowerToKernels(nn::SoftmaxOp op, KernelBuilder &b) {
  using namespace roles::SoftmaxForward;
  if (failed(checkLastAxis(op)))
    return failure();
  return b.call(op, Kernel::SoftmaxForward, {{X, op.getInput()}});
}

template <>
LogicalResult lowerToKernels(nn::SoftmaxGradOp op, KernelBuilder &b) {
  using namespace roles::SoftmaxBackward;
  if (failed(checkLastAxis(op)))
    return failure();
  return b.call(op, Kernel::SoftmaxBackward,
                {{Y, op.getResult()}, {DY, op.getResultGrad()}});
}

template <>
LogicalResult lowerToKernels(nn::LogSoftmaxOp op, KernelBuilder &b) {
  using namespace roles::LogSoftmaxForward;
  if (failed(checkLastAxis(op)))
    return failure();
  return b.call(op, Kernel::LogSoftmaxForward, {{X, op.getInput()}});
}

template <>
LogicalResult lowerToKernels(nn::LogSoftmaxGradOp op, KernelBuilder &b) {
  using namespace roles::LogSoftmaxBackward;
  if (failed(checkLastAxis(op)))
    return failure();
  return b.call(op, Kernel::LogSoftmaxBackward,
                {{Y, op.getResult()}, {DY, op.getResultGrad()}});
}

} // namespace dpc

void dpc::attachActivationLowerings(MLIRContext &context) {
  attachKernelLowerings<
      nn::ReluOp, nn::ReluGradOp, nn::SigmoidOp, nn::SigmoidGradOp, nn::TanhOp,
      nn::TanhGradOp, nn::ReciprocalOp, nn::ReciprocalGradOp, nn::ClipOp,
      nn::ClipGradOp, nn::HardSigmoidOp, nn::HardSigmoidGradOp, nn::HardSwishOp,
      nn::HardSwishGradOp, nn::GeluOp, nn::GeluGradOp, nn::ErfOp, nn::ErfGradOp,
      nn::LeakyReluOp, nn::LeakyReluGradOp, nn::EluOp, nn::EluGradOp,
      nn::SeluOp, nn::SeluGradOp, nn::CeluOp, nn::CeluGradOp, nn::SoftplusOp,
      nn::SoftplusGradOp, nn::MishOp, nn::MishGradOp, nn::AbsOp, nn::AbsGradOp,
      nn::LogOp, nn::LogGradOp, nn::LogSigmoidOp, nn::LogSigmoidGradOp,
      nn::ShrinkOp, nn::ShrinkGradOp, nn::ThresholdOp, nn::ThresholdGradOp,
      nn::DropoutOp, nn::DropoutGradOp, nn::RandomScaleOp, nn::SoftmaxOp,
      nn::SoftmaxGradOp, nn::LogSoftmaxOp, nn::LogSoftmaxGradOp, nn::ExpOp,
      nn::ExpGradOp, nn::SqrtOp, nn::SqrtGradOp, nn::PowOp, nn::PowGradOp,
      nn::SinOp, nn::SinGradOp, nn::CosOp, nn::CosGradOp, nn::SignOp,
      nn::SignGradOp, nn::FloorOp, nn::FloorGradOp, nn::CeilOp, nn::CeilGradOp>(
      context);
}
