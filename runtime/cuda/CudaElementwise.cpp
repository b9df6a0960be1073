//===- CudaElementwise.cpp - binary element-wise ops on CUDA --------------===//
//
// Add, Mul, Maximum and Minimum with b broadcast to a, the fused residual join
// relu(a + b), and dropout's product with its mask (own kernels).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/CudaKernelEntries.h"
#include "runtime/kernels/KernelMath.h"

namespace dpc::cuda::entries {

void runAddForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AddForward;
  addForward(ctx.getStream(), plan::getBroadcastShape(call), in(call, A),
             in(call, B), out(call, C));
}

// The fused joins, each one kernel (element by element, read before
// written). The compiler never gives AddReluBackward a DX on Y's bytes
// (codegen/FuseKernels.cpp).
void runAddReluForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AddReluForward;
  addReluForward(ctx.getStream(), plan::getBroadcastShape(call), in(call, A),
                 in(call, B), out(call, C));
}

void runAddReluBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AddReluBackward;
  addReluBackward(ctx.getStream(), plan::getElementwiseSize(call), in(call, A),
                  in(call, B), in(call, Y), out(call, DX));
}

void runAddBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AddBackward;
  addBackward(ctx.getStream(), plan::getBroadcastShape(call), in(call, DC),
              out(call, DA), out(call, DB));
}

void runMulForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MulForward;
  mulForward(ctx.getStream(), plan::getBroadcastShape(call), in(call, A),
             in(call, B), out(call, C));
}

void runMulBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MulBackward;
  mulBackward(ctx.getStream(), plan::getBroadcastShape(call), in(call, A),
              in(call, B), in(call, DC), out(call, DA), out(call, DB));
}

void runMaximumForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MaximumForward;
  extremumForward(ctx.getStream(), false, plan::getBroadcastShape(call),
                  in(call, A), in(call, B), out(call, C));
}

void runMinimumForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MinimumForward;
  extremumForward(ctx.getStream(), true, plan::getBroadcastShape(call),
                  in(call, A), in(call, B), out(call, C));
}

void runMaximumBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MaximumBackward;
  extremumBackward(ctx.getStream(), false, plan::getBroadcastShape(call),
                   in(call, A), in(call, B), in(call, DC), out(call, DA),
                   out(call, DB));
}

void runMinimumBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MinimumBackward;
  extremumBackward(ctx.getStream(), true, plan::getBroadcastShape(call),
                   in(call, A), in(call, B), in(call, DC), out(call, DA),
                   out(call, DB));
}

/// Forward and backward are the same product: x (or dy) times the mask.
void runDropout(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::DropoutForward;
  plan::DropoutShape s = plan::getDropoutShape(call);
  dropout(
      ctx.getStream(),
      kernels::math::makeDropoutMask(call.randomSeed, call.optimizerStep, s),
      s.rows, s.cols, call.firstRow, in(call, X), out(call, Y));
}

} // namespace dpc::cuda::entries
