//===- CudaActivations.cpp - activations on a CUDA stream -----------------===//
//
// Functions of one tensor, element by element (own kernels): those whose
// backward reads the forward's result (ReLU, sigmoid, tanh, reciprocal: one
// template by Activation kind) and those whose backward reads its input
// (KernelMath.h's inputActivation*).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/CudaKernelEntries.h"

namespace dpc::cuda::entries {

/// An activation's forward (x -> y) or backward ((y, dy) -> dx): the same
/// roles for every activation kernel.
template <Activation Kind>
void runActivationForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ReluForward;
  activationForward(ctx.getStream(), Kind, plan::getElementwiseSize(call),
                    in(call, X), out(call, Y));
}
template <Activation Kind>
void runActivationBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ReluBackward;
  activationBackward(ctx.getStream(), Kind, plan::getElementwiseSize(call),
                     in(call, Y), in(call, DY), out(call, DX));
}

// The kinds the table takes (CudaKernelEntries.h).
template void runActivationForward<Activation::Relu>(StreamContext &,
                                                     const KernelCall &);
template void runActivationBackward<Activation::Relu>(StreamContext &,
                                                      const KernelCall &);
template void runActivationForward<Activation::Sigmoid>(StreamContext &,
                                                        const KernelCall &);
template void runActivationBackward<Activation::Sigmoid>(StreamContext &,
                                                         const KernelCall &);
template void runActivationForward<Activation::Tanh>(StreamContext &,
                                                     const KernelCall &);
template void runActivationBackward<Activation::Tanh>(StreamContext &,
                                                      const KernelCall &);
template void runActivationForward<Activation::Reciprocal>(StreamContext &,
                                                           const KernelCall &);
template void runActivationBackward<Activation::Reciprocal>(StreamContext &,
                                                            const KernelCall &);

/// Clip, HardSigmoid, HardSwish, Gelu and Erf share roles: (X) -> (Y)
/// forward, (X, DY) -> (DX) backward.
void runInputActivationForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ClipForward;
  plan::InputActivationShape s = plan::getInputActivationShape(call);
  inputActivationForward(ctx.getStream(), s.kind, s.params, s.size, in(call, X),
                         out(call, Y));
}
void runInputActivationBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ClipBackward;
  plan::InputActivationShape s = plan::getInputActivationShape(call);
  inputActivationBackward(ctx.getStream(), s.kind, s.params, s.size,
                          in(call, X), in(call, DY), out(call, DX));
}

} // namespace dpc::cuda::entries
