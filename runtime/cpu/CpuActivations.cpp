//===- CpuActivations.cpp - activation kernels on the CPU -----------------===//
//
// Functions of one tensor, element by element: those whose backward reads
// the forward's result (ReLU, sigmoid, tanh, reciprocal) and those whose
// backward reads its input (KernelMath.h's inputActivation*).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cpu/CpuKernelEntries.h"
#include "runtime/kernels/Elementwise.h"

namespace dpc::rt::cpu {

using namespace dpc::kernels;

void runReluForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ReluForward;
  reluForward(plan::getElementwiseSize(call), in(call, X), out(call, Y));
}

void runReluBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ReluBackward;
  reluBackward(plan::getElementwiseSize(call), in(call, Y), in(call, DY),
               out(call, DX));
}

void runSigmoidForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::SigmoidForward;
  sigmoidForward(plan::getElementwiseSize(call), in(call, X), out(call, Y));
}

void runSigmoidBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::SigmoidBackward;
  sigmoidBackward(plan::getElementwiseSize(call), in(call, Y), in(call, DY),
                  out(call, DX));
}

void runTanhForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::TanhForward;
  tanhForward(plan::getElementwiseSize(call), in(call, X), out(call, Y));
}

void runTanhBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::TanhBackward;
  tanhBackward(plan::getElementwiseSize(call), in(call, Y), in(call, DY),
               out(call, DX));
}

void runReciprocalForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ReciprocalForward;
  reciprocalForward(plan::getElementwiseSize(call), in(call, X), out(call, Y));
}

void runReciprocalBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ReciprocalBackward;
  reciprocalBackward(plan::getElementwiseSize(call), in(call, Y), in(call, DY),
                     out(call, DX));
}

/// Clip, HardSigmoid, HardSwish, Gelu and Erf share roles: (X) -> (Y)
/// forward, (X, DY) -> (DX) backward.
void runInputActivationForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ClipForward;
  plan::InputActivationShape s = plan::getInputActivationShape(call);
  inputActivationForward(s.kind, s.params, s.size, in(call, X), out(call, Y));
}

void runInputActivationBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ClipBackward;
  plan::InputActivationShape s = plan::getInputActivationShape(call);
  inputActivationBackward(s.kind, s.params, s.size, in(call, X), in(call, DY),
                          out(call, DX));
}

} // namespace dpc::rt::cpu
