//===- CpuElementwise.cpp - binary element-wise kernels on the CPU --------===//
//
// Add, Mul, Maximum and Minimum with b broadcast to a, the fused residual
// join relu(a + b), and dropout's product with its mask.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cpu/CpuKernelEntries.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/KernelMath.h"

namespace dpc::rt::cpu {

using namespace dpc::kernels;

void runAddForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AddForward;
  addForward(plan::getBroadcastShape(call), in(call, A), in(call, B),
             out(call, C));
}

void runAddReluForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AddReluForward;
  addReluForward(plan::getBroadcastShape(call), in(call, A), in(call, B),
                 out(call, C));
}

void runAddReluBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AddReluBackward;
  addReluBackward(plan::getElementwiseSize(call), in(call, Y), in(call, A),
                  in(call, B), out(call, DX));
}

void runAddBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AddBackward;
  addBackward(plan::getBroadcastShape(call), in(call, DC), out(call, DA),
              out(call, DB));
}

void runMulForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MulForward;
  mulForward(plan::getBroadcastShape(call), in(call, A), in(call, B),
             out(call, C));
}

void runMulBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MulBackward;
  mulBackward(plan::getBroadcastShape(call), in(call, A), in(call, B),
              in(call, DC), out(call, DA), out(call, DB));
}

void runMaximumForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MaximumForward;
  extremumForward(false, plan::getBroadcastShape(call), in(call, A),
                  in(call, B), out(call, C));
}

void runMinimumForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MinimumForward;
  extremumForward(true, plan::getBroadcastShape(call), in(call, A), in(call, B),
                  out(call, C));
}

void runMaximumBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MaximumBackward;
  extremumBackward(false, plan::getBroadcastShape(call), in(call, A),
                   in(call, B), in(call, DC), out(call, DA), out(call, DB));
}

void runMinimumBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MinimumBackward;
  extremumBackward(true, plan::getBroadcastShape(call), in(call, A),
                   in(call, B), in(call, DC), out(call, DA), out(call, DB));
}

/// Forward and backward are the same product: x (or dy) times the mask.
void runDropout(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::DropoutForward;
  plan::DropoutShape s = plan::getDropoutShape(call);
  dropout(math::makeDropoutMask(call.randomSeed, call.optimizerStep, s), s.rows,
          s.cols, call.firstRow, in(call, X), out(call, Y));
}

} // namespace dpc::rt::cpu
