//===- CudaPooling.cpp - pooling and padding on a CUDA stream -------------===//
//
// Max, average and global average pooling over NCHW planes, and the
// constant padding of those planes (own kernels).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/CudaKernelEntries.h"

namespace dpc::cuda::entries {

void runMaxPool2dForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MaxPool2dForward;
  maxPool2dForward(ctx.getStream(), plan::getPool2dShape(call), in(call, X),
                   out(call, Y));
}

void runMaxPool2dBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MaxPool2dBackward;
  maxPool2dBackward(ctx.getStream(), plan::getPool2dShape(call), in(call, X),
                    in(call, DY), out(call, DX));
}

void runAvgPool2dForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AvgPool2dForward;
  avgPool2dForward(ctx.getStream(), plan::getPool2dShape(call), in(call, X),
                   out(call, Y));
}

void runAvgPool2dBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AvgPool2dBackward;
  avgPool2dBackward(ctx.getStream(), plan::getPool2dShape(call), in(call, DY),
                    out(call, DX));
}

void runGlobalAvgPool2dForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::GlobalAvgPool2dForward;
  plan::Nchw s = plan::getGlobalAvgPoolShape(call);
  globalAvgPool2dForward(ctx.getStream(), s.n * s.c, s.h * s.w, in(call, X),
                         out(call, Y));
}

void runGlobalAvgPool2dBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::GlobalAvgPool2dBackward;
  plan::Nchw s = plan::getGlobalAvgPoolShape(call);
  globalAvgPool2dBackward(ctx.getStream(), s.n * s.c, s.h * s.w, in(call, DY),
                          out(call, DX));
}

void runPadForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::PadForward;
  pad2dForward(ctx.getStream(), plan::getPad2dShape(call),
               plan::getPadValue(call), in(call, X), out(call, Y));
}

void runPadBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::PadBackward;
  pad2dBackward(ctx.getStream(), plan::getPad2dShape(call), in(call, DY),
                out(call, DX));
}

} // namespace dpc::cuda::entries
