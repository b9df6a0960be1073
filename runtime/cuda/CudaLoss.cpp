//===- CudaLoss.cpp - softmax and losses on a CUDA stream -----------------===//
//
// Softmax and log-softmax over the last axis, cross-entropy (forward,
// backward and both in one call) and the count of rows whose argmax is the
// label (own kernels).
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

} // namespace dpc::cuda::entries
