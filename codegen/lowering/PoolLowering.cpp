//===- PoolLowering.cpp - pooling and padding to kernels ------------------===//
//
// Max, average and global average pooling and constant padding, each with
// its gradient, one kernel call apiece.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/KernelLowering.h"
#include "ir/nn/NNOps.h"

using namespace mlir;
using namespace dpc;
using plan::Kernel;
namespace roles = plan::roles;

namespace {

/// The Pool2dAttrs of a pooling op; average pooling has no dilation and
/// max pooling no count_include_pad, which the plan then states.
template <typename OpTy>
SmallVector<NamedAttribute> poolAttrs(KernelBuilder &b, OpTy op,
                                      DenseI64ArrayAttr dilation,
                                      BoolAttr countIncludePad) {
  return {b.attr("kernel_size", op.getKernelSizeAttr()),
          b.attr("stride", op.getStrideAttr()),
          b.attr("padding", op.getPaddingAttr()),
          b.attr("dilation", dilation),
          b.attr("ceil_mode", op.getCeilModeAttr()),
          b.attr("count_include_pad", countIncludePad)};
}

template <typename OpTy>
SmallVector<NamedAttribute> maxPoolAttrs(KernelBuilder &b, OpTy op) {
  return poolAttrs(b, op, op.getDilationAttr(),
                   b.getBuilder().getBoolAttr(false));
}

template <typename OpTy>
SmallVector<NamedAttribute> avgPoolAttrs(KernelBuilder &b, OpTy op) {
  return poolAttrs(b, op, b.getBuilder().getDenseI64ArrayAttr({1, 1}),
                   op.getCountIncludePadAttr());
}

} // namespace

namespace dpc {

template <> LogicalResult lowerToKernels(nn::MaxPool2dOp op, KernelBuilder &b) {
  using namespace roles::MaxPool2dForward;
  return b.call(op, Kernel::MaxPool2dForward, {{X, op.getInput()}},
                maxPoolAttrs(b, op));
}

template <>
LogicalResult lowerToKernels(nn::MaxPool2dGradOp op, KernelBuilder &b) {
  using namespace roles::MaxPool2dBackward;
  return b.call(op, Kernel::MaxPool2dBackward,
                {{X, op.getInput()}, {DY, op.getResultGrad()}},
                maxPoolAttrs(b, op));
}

template <> LogicalResult lowerToKernels(nn::AvgPool2dOp op, KernelBuilder &b) {
  using namespace roles::AvgPool2dForward;
  return b.call(op, Kernel::AvgPool2dForward, {{X, op.getInput()}},
                avgPoolAttrs(b, op));
}

template <>
LogicalResult lowerToKernels(nn::AvgPool2dGradOp op, KernelBuilder &b) {
  using namespace roles::AvgPool2dBackward;
  return b.call(op, Kernel::AvgPool2dBackward, {{DY, op.getResultGrad()}},
                avgPoolAttrs(b, op));
}

template <>
LogicalResult lowerToKernels(nn::GlobalAvgPool2dOp op, KernelBuilder &b) {
  using namespace roles::GlobalAvgPool2dForward;
  return b.call(op, Kernel::GlobalAvgPool2dForward, {{X, op.getInput()}});
}

template <>
LogicalResult lowerToKernels(nn::GlobalAvgPool2dGradOp op, KernelBuilder &b) {
  using namespace roles::GlobalAvgPool2dBackward;
  return b.call(op, Kernel::GlobalAvgPool2dBackward,
                {{DY, op.getResultGrad()}});
}

template <> LogicalResult lowerToKernels(nn::PadOp op, KernelBuilder &b) {
  using namespace roles::PadForward;
  return b.call(op, Kernel::PadForward, {{X, op.getInput()}},
                {b.attr("low", op.getLowAttr()),
                 b.attr("high", op.getHighAttr()),
                 b.attr("value", op.getValueAttr())});
}

template <> LogicalResult lowerToKernels(nn::PadGradOp op, KernelBuilder &b) {
  using namespace roles::PadBackward;
  return b.call(
      op, Kernel::PadBackward, {{DY, op.getResultGrad()}},
      {b.attr("low", op.getLowAttr()), b.attr("high", op.getHighAttr())});
}

} // namespace dpc

void dpc::attachPoolLowerings(MLIRContext &context) {
  attachKernelLowerings<nn::MaxPool2dOp, nn::MaxPool2dGradOp, nn::AvgPool2dOp,
                        nn::AvgPool2dGradOp, nn::GlobalAvgPool2dOp,
                        nn::GlobalAvgPool2dGradOp, nn::PadOp, nn::PadGradOp>(
      context);
}
