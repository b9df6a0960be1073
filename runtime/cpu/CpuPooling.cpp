//===- CpuPooling.cpp - pooling and padding kernels on the CPU ------------===//
//
// Max, average and global average pooling over NCHW planes, and the
// constant padding of those planes.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cpu/CpuKernelEntries.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Pool.h"

namespace dpc::rt::cpu {

using namespace dpc::kernels;

void runMaxPool2dForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MaxPool2dForward;
  maxPool2dForward(plan::getPool2dShape(call), in(call, X), out(call, Y));
}

void runMaxPool2dBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MaxPool2dBackward;
  maxPool2dBackward(plan::getPool2dShape(call), in(call, X), in(call, DY),
                    out(call, DX));
}

void runAvgPool2dForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AvgPool2dForward;
  avgPool2dForward(plan::getPool2dShape(call), in(call, X), out(call, Y));
}

void runAvgPool2dBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AvgPool2dBackward;
  avgPool2dBackward(plan::getPool2dShape(call), in(call, DY), out(call, DX));
}

void runGlobalAvgPool2dForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::GlobalAvgPool2dForward;
  plan::Nchw s = plan::getGlobalAvgPoolShape(call);
  globalAvgPool2dForward(s.n, s.c, s.h, s.w, in(call, X), out(call, Y),
                         call.operand(X).layout == plan::Layout::NChw16c);
}

void runGlobalAvgPool2dBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::GlobalAvgPool2dBackward;
  plan::Nchw s = plan::getGlobalAvgPoolShape(call);
  globalAvgPool2dBackward(s.n, s.c, s.h, s.w, in(call, DY), out(call, DX),
                          call.result(DX).layout == plan::Layout::NChw16c);
}

void runPadForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::PadForward;
  pad2dForward(plan::getPad2dShape(call), plan::getPadValue(call), in(call, X),
               out(call, Y));
}

void runPadBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::PadBackward;
  pad2dBackward(plan::getPad2dShape(call), in(call, DY), out(call, DX));
}

} // namespace dpc::rt::cpu
