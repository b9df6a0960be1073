//===- CudaKernelEntries.h - the CUDA kernel table's functions --*- C++ -*-===//
//
// Private to runtime/cuda: one function per kernel of Kernels.def, grouped
// by the file of its family that defines it, and the helpers those files
// share. CudaKernels.cpp builds the table from these names (run##Name), so a
// kernel without its function here does not compile. A new kernel goes into
// its family's file and group; dpc's own device code for it goes into the
// family's Own*.cu file (launchers declared in OwnKernels.h).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_CUDAKERNELENTRIES_H
#define DPC_RUNTIME_CUDA_CUDAKERNELENTRIES_H

#include "runtime/abi/KernelCall.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/OwnKernels.h"

#include <cstddef>
#include <cstdint>

namespace dpc::cuda {

/// Scaling factors for cuDNN and cuBLAS (alpha = 1, beta = 0).
inline const float kOne = 1.f, kZero = 0.f;

/// `value` as cuDNN's int, or an error naming `what` (a convolution's or a
/// batch norm's dimension).
int toInt(int64_t value, const char *what);

/// A scalar result's dtype as the own kernels store it.
ScalarType scalarTypeOf(const plan::TensorArg &arg);

} // namespace dpc::cuda

namespace dpc::cuda::entries {

using plan::KernelCall;

/// Operand or result `i` as f32, null when the call leaves it out.
inline float *in(const KernelCall &call, size_t i) {
  return call.operand(i).present ? call.operand(i).f32() : nullptr;
}
inline float *out(const KernelCall &call, size_t i) {
  return call.result(i).present ? call.result(i).f32() : nullptr;
}

// CudaActivations.cpp: functions of one tensor, element by element.
/// The activations whose backward reads the forward's result, by kind.
template <Activation Kind>
void runActivationForward(StreamContext &, const KernelCall &);
template <Activation Kind>
void runActivationBackward(StreamContext &, const KernelCall &);
constexpr auto runReluForward = &runActivationForward<Activation::Relu>;
constexpr auto runReluBackward = &runActivationBackward<Activation::Relu>;
constexpr auto runSigmoidForward = &runActivationForward<Activation::Sigmoid>;
constexpr auto runSigmoidBackward = &runActivationBackward<Activation::Sigmoid>;
constexpr auto runTanhForward = &runActivationForward<Activation::Tanh>;
constexpr auto runTanhBackward = &runActivationBackward<Activation::Tanh>;
constexpr auto runReciprocalForward =
    &runActivationForward<Activation::Reciprocal>;
constexpr auto runReciprocalBackward =
    &runActivationBackward<Activation::Reciprocal>;
/// Clip, HardSigmoid, HardSwish, Gelu and Erf: one pair for all.
void runInputActivationForward(StreamContext &, const KernelCall &);
void runInputActivationBackward(StreamContext &, const KernelCall &);
constexpr auto runClipForward = runInputActivationForward;
constexpr auto runClipBackward = runInputActivationBackward;
constexpr auto runHardSigmoidForward = runInputActivationForward;
constexpr auto runHardSigmoidBackward = runInputActivationBackward;
constexpr auto runHardSwishForward = runInputActivationForward;
constexpr auto runHardSwishBackward = runInputActivationBackward;
constexpr auto runGeluForward = runInputActivationForward;
constexpr auto runGeluBackward = runInputActivationBackward;
constexpr auto runErfForward = runInputActivationForward;
constexpr auto runErfBackward = runInputActivationBackward;

// CudaElementwise.cpp: broadcast binary ops and dropout's mask product.
void runAddForward(StreamContext &, const KernelCall &);
void runAddBackward(StreamContext &, const KernelCall &);
void runAddReluForward(StreamContext &, const KernelCall &);
void runAddReluBackward(StreamContext &, const KernelCall &);
void runMulForward(StreamContext &, const KernelCall &);
void runMulBackward(StreamContext &, const KernelCall &);
void runMaximumForward(StreamContext &, const KernelCall &);
void runMaximumBackward(StreamContext &, const KernelCall &);
void runMinimumForward(StreamContext &, const KernelCall &);
void runMinimumBackward(StreamContext &, const KernelCall &);
/// Forward and backward are the same product.
void runDropout(StreamContext &, const KernelCall &);
constexpr auto runDropoutForward = runDropout;
constexpr auto runDropoutBackward = runDropout;

// CudaNormalization.cpp: batch norm (cuDNN or own kernels; also synchronized
// and fused with ReLU) and layer norm.
void runBatchNormTrainingForward(StreamContext &, const KernelCall &);
void runBatchNormInferenceForward(StreamContext &, const KernelCall &);
void runBatchNormBackward(StreamContext &, const KernelCall &);
void runBatchNormStatistics(StreamContext &, const KernelCall &);
void runBatchNormApply(StreamContext &, const KernelCall &);
void runBatchNormGradStatistics(StreamContext &, const KernelCall &);
void runBatchNormGradApply(StreamContext &, const KernelCall &);
void runBatchNormReluTrainingForward(StreamContext &, const KernelCall &);
void runBatchNormReluInferenceForward(StreamContext &, const KernelCall &);
void runBatchNormReluBackward(StreamContext &, const KernelCall &);
void runLayerNormForward(StreamContext &, const KernelCall &);
void runLayerNormBackward(StreamContext &, const KernelCall &);

// CudaConvolution.cpp: 2-D convolutions (cuDNN) and their algorithm cache.
void runConv2dForward(StreamContext &, const KernelCall &);
void runConv2dBackwardData(StreamContext &, const KernelCall &);
void runConv2dBackwardWeights(StreamContext &, const KernelCall &);
void runConv2dReluForward(StreamContext &, const KernelCall &);

// CudaLinear.cpp: linear layers and matrix products (cuBLAS).
void runLinearForward(StreamContext &, const KernelCall &);
void runLinearBackwardData(StreamContext &, const KernelCall &);
void runLinearBackwardWeights(StreamContext &, const KernelCall &);
void runLinearReluForward(StreamContext &, const KernelCall &);
void runMatmulForward(StreamContext &, const KernelCall &);
void runMatmulBackward(StreamContext &, const KernelCall &);
void runMatmulTransposedA(StreamContext &, const KernelCall &);
void runBatchMatmul(StreamContext &, const KernelCall &);

// CudaPooling.cpp: pooling and spatial padding.
void runMaxPool2dForward(StreamContext &, const KernelCall &);
void runMaxPool2dBackward(StreamContext &, const KernelCall &);
void runAvgPool2dForward(StreamContext &, const KernelCall &);
void runAvgPool2dBackward(StreamContext &, const KernelCall &);
void runGlobalAvgPool2dForward(StreamContext &, const KernelCall &);
void runGlobalAvgPool2dBackward(StreamContext &, const KernelCall &);
void runPadForward(StreamContext &, const KernelCall &);
void runPadBackward(StreamContext &, const KernelCall &);

// CudaLoss.cpp: softmax over rows, the losses and the correct count.
void runSoftmaxForward(StreamContext &, const KernelCall &);
void runSoftmaxBackward(StreamContext &, const KernelCall &);
void runLogSoftmaxForward(StreamContext &, const KernelCall &);
void runLogSoftmaxBackward(StreamContext &, const KernelCall &);
void runCrossEntropyForward(StreamContext &, const KernelCall &);
void runCrossEntropyBackward(StreamContext &, const KernelCall &);
void runCrossEntropyForwardBackward(StreamContext &, const KernelCall &);
void runCorrectCount(StreamContext &, const KernelCall &);
void runLossForward(StreamContext &, const KernelCall &);
void runLossBackward(StreamContext &, const KernelCall &);
void runLossWeight(StreamContext &, const KernelCall &);
void runLossCorrectCount(StreamContext &, const KernelCall &);

// CudaOptimizers.cpp: parameter updates.
void runSgdUpdate(StreamContext &, const KernelCall &);
void runAdamWUpdate(StreamContext &, const KernelCall &);

// CudaTensorOps.cpp: copies, layouts, fills, transposes, joins, reductions
// and the embedding gather.
void runCopy(StreamContext &, const KernelCall &);
void runReorder(StreamContext &, const KernelCall &);
void runFill(StreamContext &, const KernelCall &);
void runAccumulate(StreamContext &, const KernelCall &);
void runTranspose2d(StreamContext &, const KernelCall &);
void runTranspose(StreamContext &, const KernelCall &);
void runConcatForward(StreamContext &, const KernelCall &);
void runSplitForward(StreamContext &, const KernelCall &);
void runReduceSum(StreamContext &, const KernelCall &);
void runReduceMax(StreamContext &, const KernelCall &);
void runReduceMin(StreamContext &, const KernelCall &);
void runReduceExtremumBackward(StreamContext &, const KernelCall &);
void runEmbeddingForward(StreamContext &, const KernelCall &);
void runEmbeddingBackward(StreamContext &, const KernelCall &);

// CudaCollectives.cpp: calls every replica joins (NCCL).
void runAllReduce(StreamContext &, const KernelCall &);
void runAllGather(StreamContext &, const KernelCall &);
void runReduceScatter(StreamContext &, const KernelCall &);

} // namespace dpc::cuda::entries

#endif // DPC_RUNTIME_CUDA_CUDAKERNELENTRIES_H
