//===- CudaNormalization.cpp - normalization on a CUDA stream -------------===//
//
// Batch norm through cuDNN (spatial mode) where cuDNN takes the shape, dpc's
// own kernels otherwise; synchronized batch norm (statistics and apply
// kernels around an all-reduce) and batch norm fused with a ReLU; layer
// norm.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/CudaKernelEntries.h"

#include <climits>

namespace dpc::cuda {

namespace {

/// x [n, c, h, w] and the per-channel [1, c, 1, 1] descriptor.
struct BatchNormDescs {
  cudnnTensorDescriptor_t x = nullptr, channel = nullptr;
  explicit BatchNormDescs(const kernels::BatchNormShape &s) {
    DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&x));
    DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&channel));
    DPC_CUDA_CHECK(cudnnSetTensor4dDescriptor(
        x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, toInt(s.n, "n"),
        toInt(s.c, "c"), toInt(s.h, "h"), toInt(s.w, "w")));
    DPC_CUDA_CHECK(
        cudnnDeriveBNTensorDescriptor(channel, x, CUDNN_BATCHNORM_SPATIAL));
  }
  ~BatchNormDescs() {
    DPC_CUDA_REPORT(cudnnDestroyTensorDescriptor(x));
    DPC_CUDA_REPORT(cudnnDestroyTensorDescriptor(channel));
  }
};

/// cuDNN's training batch norm keeps PyTorch's statistics (unbiased running
/// variance, momentum as the exponential average factor) except with one
/// value per channel, where the CPU falls back to the biased variance.
/// Outside the limits PyTorch also keeps (Normalization.cpp: cuDNN answers
/// NOT_SUPPORTED past 65535 rows in inference, 880801 in training, and
/// some of its kernels index with 32 bits) the own kernels run instead;
/// forward and backward decide alike, and their saved statistics agree.
bool useCudnnBatchNorm(const kernels::BatchNormShape &s,
                       const kernels::BatchNormParams &params, bool training) {
  int64_t rows = s.n * s.h * s.w;
  return rows > 1 && params.eps >= CUDNN_BN_MIN_EPSILON &&
         rows * s.c < int64_t(INT_MAX) && s.n <= (training ? 880801 : 65535);
}

void batchNormTrainingForward(StreamContext &ctx,
                              const kernels::BatchNormShape &s,
                              const kernels::BatchNormParams &params,
                              const float *x, const float *scale,
                              const float *shift, float *y, float *saveMean,
                              float *saveInvStd, float *runningMean,
                              float *runningVar) {
  if (!useCudnnBatchNorm(s, params, true) || !runningMean || !runningVar)
    return cuda::batchNormTrainingForward(ctx.getStream(), s, params, x, scale,
                                          shift, y, saveMean, saveInvStd,
                                          runningMean, runningVar);
  BatchNormDescs d(s);
  DPC_CUDA_CHECK(cudnnBatchNormalizationForwardTraining(
      ctx.getCudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, d.x, x, d.x, y,
      d.channel, scale, shift, params.momentum, runningMean, runningVar,
      params.eps, saveMean, saveInvStd));
}

void batchNormInferenceForward(StreamContext &ctx,
                               const kernels::BatchNormShape &s,
                               const kernels::BatchNormParams &params,
                               const float *x, const float *scale,
                               const float *shift, const float *runningMean,
                               const float *runningVar, float *y) {
  if (!useCudnnBatchNorm(s, params, false))
    return cuda::batchNormInferenceForward(ctx.getStream(), s, params, x, scale,
                                           shift, runningMean, runningVar, y);
  BatchNormDescs d(s);
  DPC_CUDA_CHECK(cudnnBatchNormalizationForwardInference(
      ctx.getCudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, d.x, x, d.x, y,
      d.channel, scale, shift, runningMean, runningVar, params.eps));
}

void batchNormBackward(StreamContext &ctx, const kernels::BatchNormShape &s,
                       const kernels::BatchNormParams &params, const float *x,
                       const float *dy, const float *scale,
                       const float *saveMean, const float *saveInvStd,
                       float *dx, float *dScale, float *dShift) {
  if (!useCudnnBatchNorm(s, params, true))
    return cuda::batchNormBackward(ctx.getStream(), s, x, dy, scale, saveMean,
                                   saveInvStd, dx, dScale, dShift);
  BatchNormDescs d(s);
  DPC_CUDA_CHECK(cudnnBatchNormalizationBackward(
      ctx.getCudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, &kOne, &kZero,
      d.x, x, d.x, dy, d.x, dx, d.channel, scale, dScale, dShift, params.eps,
      saveMean, saveInvStd));
}

} // namespace

} // namespace dpc::cuda

namespace dpc::cuda::entries {

void runBatchNormTrainingForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormTrainingForward;
  batchNormTrainingForward(ctx, plan::getBatchNormShape(call),
                           plan::getBatchNormParams(call), in(call, X),
                           in(call, Scale), in(call, Shift), out(call, Y),
                           out(call, SavedMean), out(call, SavedInvStd),
                           in(call, RunningMean), in(call, RunningVar));
}

void runBatchNormInferenceForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormInferenceForward;
  batchNormInferenceForward(ctx, plan::getBatchNormShape(call),
                            plan::getBatchNormParams(call), in(call, X),
                            in(call, Scale), in(call, Shift), in(call, Mean),
                            in(call, Var), out(call, Y));
}

void runBatchNormBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormBackward;
  batchNormBackward(ctx, plan::getBatchNormShape(call),
                    plan::getBatchNormParams(call), in(call, X), in(call, DY),
                    in(call, Scale), in(call, SavedMean), in(call, SavedInvStd),
                    out(call, DX), out(call, DScale), out(call, DShift));
}

//===----------------------------------------------------------------------===//
// Synchronized batch norm: per-replica sums, all-reduced between the kernels
//===----------------------------------------------------------------------===//

void runBatchNormStatistics(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormStatistics;
  batchNormStatistics(ctx.getStream(), plan::getBatchNormShape(call),
                      in(call, X), call.result(Sum).as<double>(),
                      call.result(SumSq).as<double>(),
                      call.result(Count).as<double>());
}

void runBatchNormApply(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormApply;
  batchNormApply(ctx.getStream(), plan::getBatchNormShape(call),
                 plan::getBatchNormParams(call), in(call, X), in(call, Scale),
                 in(call, Shift), in(call, RunningMean), in(call, RunningVar),
                 call.operand(Sum).as<double>(),
                 call.operand(SumSq).as<double>(),
                 call.operand(Count).as<double>(), out(call, Y),
                 out(call, SavedMean), out(call, SavedInvStd));
}

void runBatchNormGradStatistics(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormGradStatistics;
  batchNormGradStatistics(ctx.getStream(), plan::getBatchNormShape(call),
                          in(call, X), in(call, DY), in(call, SavedMean),
                          in(call, SavedInvStd), out(call, SumDY),
                          out(call, SumDYXhat));
}

void runBatchNormGradApply(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormGradApply;
  batchNormGradApply(ctx.getStream(), plan::getBatchNormShape(call),
                     in(call, X), in(call, DY), in(call, Scale),
                     in(call, SavedMean), in(call, SavedInvStd),
                     in(call, SumDY), in(call, SumDYXhat),
                     call.operand(Count).as<double>(), out(call, DX));
}

//===----------------------------------------------------------------------===//
// Batch norm fused with the ReLU that follows it
//===----------------------------------------------------------------------===//

/// Batch norm and ReLU as two calls, the ReLU in place.
void runBatchNormReluTrainingForward(StreamContext &ctx,
                                     const KernelCall &call) {
  using namespace plan::roles::BatchNormReluTrainingForward;
  batchNormTrainingForward(ctx, plan::getBatchNormShape(call),
                           plan::getBatchNormParams(call), in(call, X),
                           in(call, Scale), in(call, Shift), out(call, Y),
                           out(call, SavedMean), out(call, SavedInvStd),
                           in(call, RunningMean), in(call, RunningVar));
  activationForward(ctx.getStream(), Activation::Relu,
                    call.result(Y).getNumElements(), out(call, Y),
                    out(call, Y));
}

void runBatchNormReluInferenceForward(StreamContext &ctx,
                                      const KernelCall &call) {
  using namespace plan::roles::BatchNormReluInferenceForward;
  batchNormInferenceForward(ctx, plan::getBatchNormShape(call),
                            plan::getBatchNormParams(call), in(call, X),
                            in(call, Scale), in(call, Shift), in(call, Mean),
                            in(call, Var), out(call, Y));
  activationForward(ctx.getStream(), Activation::Relu,
                    call.result(Y).getNumElements(), out(call, Y),
                    out(call, Y));
}

/// The ReLU's gradient goes to DX, and the batch norm's own kernel (whose
/// dx[i] depends on dy[i] alone once the sums are taken) reads it there and
/// overwrites it in place.
void runBatchNormReluBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormReluBackward;
  activationBackward(ctx.getStream(), Activation::Relu,
                     call.result(DX).getNumElements(), in(call, Y),
                     in(call, DY), out(call, DX));
  cuda::batchNormBackward(ctx.getStream(), plan::getBatchNormShape(call),
                          in(call, X), out(call, DX), in(call, Scale),
                          in(call, SavedMean), in(call, SavedInvStd),
                          out(call, DX), out(call, DScale), out(call, DShift));
}

//===----------------------------------------------------------------------===//
// Layer norm (own kernels)
//===----------------------------------------------------------------------===//

void runLayerNormForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LayerNormForward;
  const plan::TensorArg &bias = call.operand(Bias);
  layerNormForward(ctx.getStream(), plan::getLayerNormShape(call), in(call, X),
                   in(call, Scale), bias.present ? bias.f32() : nullptr,
                   out(call, Y));
}

void runLayerNormBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LayerNormBackward;
  const plan::TensorArg &dBias = call.result(DBias);
  layerNormBackward(
      ctx.getStream(), plan::getLayerNormShape(call), in(call, X), in(call, DY),
      in(call, Scale), call.workspace.as<kernels::elements::RowStats>(),
      out(call, DX), out(call, DScale), dBias.present ? dBias.f32() : nullptr);
}

} // namespace dpc::cuda::entries
