//===- CudaLoss.cpp - softmax and losses on a CUDA stream -----------------===//
//
// Softmax and log-softmax over the last axis, cross-entropy (forward,
// backward and both in one call) and the count of rows whose argmax is the
// label (own kernels); nn.loss's kernels (any kind, any rank).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/CudaKernelEntries.h"

namespace dpc::cuda::entries {

void runSoftmaxForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::SoftmaxForward;
  plan::RowsShape s = plan::getRowsShape(call);
  softmaxForward(ctx.getStream(), s.rows, s.cols, in(call, X), out(call, Y));
}

void runSoftmaxBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::SoftmaxBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  softmaxBackward(ctx.getStream(), s.rows, s.cols, in(call, Y), in(call, DY),
                  out(call, DX));
}

void runLogSoftmaxForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LogSoftmaxForward;
  plan::RowsShape s = plan::getRowsShape(call);
  logSoftmaxForward(ctx.getStream(), s.rows, s.cols, in(call, X), out(call, Y));
}

void runLogSoftmaxBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LogSoftmaxBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  logSoftmaxBackward(ctx.getStream(), s.rows, s.cols, in(call, Y), in(call, DY),
                     out(call, DX));
}

void runCrossEntropyForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::CrossEntropyForward;
  plan::RowsShape s = plan::getRowsShape(call);
  const plan::TensorArg &correct = call.result(Correct);
  crossEntropyForward(
      ctx.getStream(), s.rows, s.cols, in(call, Logits),
      call.operand(Labels).as<int32_t>(), static_cast<float>(call.batch),
      out(call, Loss), correct.present ? correct.data : nullptr,
      correct.present ? scalarTypeOf(correct) : ScalarType::F32);
}

void runCrossEntropyForwardBackward(StreamContext &ctx,
                                    const KernelCall &call) {
  using namespace plan::roles::CrossEntropyForwardBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  const plan::TensorArg &correct = call.result(Correct);
  const auto *labels = call.operand(Labels).as<int32_t>();
  float divisor = static_cast<float>(call.batch);
  crossEntropyForward(
      ctx.getStream(), s.rows, s.cols, in(call, Logits), labels, divisor,
      out(call, Loss), correct.present ? correct.data : nullptr,
      correct.present ? scalarTypeOf(correct) : ScalarType::F32);
  crossEntropyBackward(ctx.getStream(), s.rows, s.cols, in(call, Logits),
                       labels, in(call, DLoss), divisor, out(call, DLogits));
}

void runCrossEntropyBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::CrossEntropyBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  crossEntropyBackward(ctx.getStream(), s.rows, s.cols, in(call, Logits),
                       call.operand(Labels).as<int32_t>(), in(call, DLoss),
                       static_cast<float>(call.batch), out(call, DLogits));
}

void runCorrectCount(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::CorrectCount;
  plan::RowsShape s = plan::getRowsShape(call);
  correctCount(ctx.getStream(), s.rows, s.cols, in(call, Logits),
               call.operand(Labels).as<int32_t>(), call.result(Count).data,
               scalarTypeOf(call.result(Count)));
}

//===----------------------------------------------------------------------===//
// nn.loss: LossForward, LossBackward, LossWeight, LossCorrectCount
//===----------------------------------------------------------------------===//

/// A scalar operand the call may leave out (a device pointer, or null).
static const float *optionalScalar(const KernelCall &call, size_t index) {
  return call.operands.size() > index && call.operand(index).present
             ? call.operand(index).f32()
             : nullptr;
}

void runLossForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LossForward;
  lossForward(ctx.getStream(), plan::getLossShape(call),
              call.operand(Output).f32(), call.operand(Target).data,
              optionalScalar(call, Divisor), call.result(Loss).f32());
}

void runLossBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LossBackward;
  lossBackward(ctx.getStream(), plan::getLossShape(call),
               call.operand(Output).f32(), call.operand(Target).data,
               optionalScalar(call, DLoss), optionalScalar(call, Divisor),
               call.result(DOutput).f32());
}

void runLossWeight(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LossWeight;
  lossWeight(ctx.getStream(), plan::getLossShape(call),
             call.operand(Target).as<int32_t>(), call.result(Weight).f32());
}

void runLossCorrectCount(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LossCorrectCount;
  lossCorrectCount(ctx.getStream(), plan::getLossShape(call),
                   call.operand(Output).f32(),
                   call.operand(Target).as<int32_t>(), call.result(Count).data,
                   scalarTypeOf(call.result(Count)));
}

} // namespace dpc::cuda::entries
