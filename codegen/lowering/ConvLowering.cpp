//===- ConvLowering.cpp - convolutions to kernels -------------------------===//
//
// A 2-D convolution, its two gradients and a transposed convolution each
// become one kernel call.
// On a GPU the call gets cuDNN's workspace; the CPU's needs none.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/KernelLowering.h"
#include "ir/nn/NNOps.h"

#include <algorithm>

using namespace mlir;
using namespace dpc;
using plan::Kernel;
namespace roles = plan::roles;

namespace {

/// Bytes of a tensor at the compiled batch.
int64_t byteSize(RankedTensorType type) {
  int64_t elements = type.getNumElements();
  return elements * ((type.getElementTypeBitWidth() + 7) / 8);
}

/// The scratch a convolution kernel gets on a GPU: cuDNN's faster algorithms
/// (precomputed implicit GEMM, FFT and FFT tiling, Winograd) need
/// workspace, and the kernel picks the fastest that fits what the plan gives
/// it. Eight times the call's largest tensor, within [16 MiB, 1 GiB]: on an
/// H200 the deterministic FFT algorithms of ResNet-18's 3x3 convolutions at
/// 28x28 and 14x14 want 3.3x-6.5x (170-321 MB at batch 256) and run 1.7x-3x
/// faster than the implicit GEMMs that fit in 1x. The workspace is alive
/// during the call only, so the arena reuses it and the peak grows by the
/// largest one.
int64_t convWorkspaceBytes(Operation *op) {
  int64_t largest = 0;
  for (ValueRange values :
       {ValueRange(op->getOperands()), ValueRange(op->getResults())})
    for (Value value : values)
      largest =
          std::max(largest, byteSize(cast<RankedTensorType>(value.getType())));
  return std::clamp<int64_t>(8 * largest, int64_t(16) << 20, int64_t(1) << 30);
}

/// The attributes of a 2-D convolution, as the plan names them. The
/// algorithm: oneDNN's direct convolution on the CPU; on a GPU, the one
/// cuDNN's heuristics rank fastest within the planned workspace, which the
/// runtime chooses once per shape and records in its trace.
template <typename OpTy>
SmallVector<NamedAttribute> convAttrs(OpBuilder &b, OpTy op, bool onGpu) {
  return {b.getNamedAttr("stride", op.getStrideAttr()),
          b.getNamedAttr("padding", op.getPaddingAttr()),
          b.getNamedAttr("dilation", op.getDilationAttr()),
          b.getNamedAttr("groups", op.getGroupsAttr()),
          b.getNamedAttr("algorithm", b.getStringAttr(onGpu ? "cudnn_heuristic"
                                                            : "direct"))};
}

template <typename OpTy>
LogicalResult convolution(KernelBuilder &b, OpTy op, Kernel kernel,
                          ArrayRef<RoleValue> ins) {
  bool onGpu = b.onCudaDevice();
  return b.call(op, kernel, ins, convAttrs(b.getBuilder(), op, onGpu),
                onGpu ? convWorkspaceBytes(op) : 0);
}

} // namespace

namespace dpc {

template <> LogicalResult lowerToKernels(nn::Conv2dOp op, KernelBuilder &b) {
  using namespace roles::Conv2dForward;
  return convolution(
      b, op, Kernel::Conv2dForward,
      {{X, op.getInput()}, {W, op.getFilter()}, {Bias, op.getBias()}});
}

template <>
LogicalResult lowerToKernels(nn::Conv2dGradInputOp op, KernelBuilder &b) {
  using namespace roles::Conv2dBackwardData;
  return convolution(b, op, Kernel::Conv2dBackwardData,
                     {{DY, op.getResultGrad()}, {W, op.getFilter()}});
}

template <>
LogicalResult lowerToKernels(nn::Conv2dGradFilterOp op, KernelBuilder &b) {
  using namespace roles::Conv2dBackwardWeights;
  return convolution(b, op, Kernel::Conv2dBackwardWeights,
                     {{X, op.getInput()}, {DY, op.getResultGrad()}});
}

/// A transposed convolution is the input gradient of the convolution with
/// its filter and attributes: the same kernel, with its input as that
/// convolution's result gradient (its output padding is in its result's
/// dims).
template <>
LogicalResult lowerToKernels(nn::ConvTranspose2dOp op, KernelBuilder &b) {
  using namespace roles::Conv2dBackwardData;
  return convolution(b, op, Kernel::Conv2dBackwardData,
                     {{DY, op.getInput()}, {W, op.getFilter()}});
}

} // namespace dpc

void dpc::attachConvLowerings(MLIRContext &context) {
  attachKernelLowerings<nn::Conv2dOp, nn::Conv2dGradInputOp,
                        nn::Conv2dGradFilterOp, nn::ConvTranspose2dOp>(context);
}
