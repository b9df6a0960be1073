//===- CpuKernelEntries.h - the CPU kernel table's functions ----*- C++ -*-===//
//
// Private to runtime/cpu: one function per kernel of Kernels.def, grouped by
// the file of its family that defines it. CpuKernels.cpp builds the table
// from these names (run##Name), so a kernel without its function here does
// not compile. A new kernel goes into its family's file and group; each
// function reads its operands by role (KernelRoles.h) and calls the kernel
// library (runtime/kernels).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CPU_CPUKERNELENTRIES_H
#define DPC_RUNTIME_CPU_CPUKERNELENTRIES_H

#include "runtime/abi/KernelCall.h"
#include "runtime/kernels/KernelContext.h"

#include <cstddef>

namespace dpc::rt::cpu {

using Context = kernels::KernelContext;
using plan::KernelCall;

/// Operand or result `i` as f32, null when the call leaves it out.
inline float *in(const KernelCall &call, size_t i) {
  return call.operand(i).present ? call.operand(i).f32() : nullptr;
}
inline float *out(const KernelCall &call, size_t i) {
  return call.result(i).present ? call.result(i).f32() : nullptr;
}

// CpuActivations.cpp: functions of one tensor, element by element.
void runReluForward(Context &, const KernelCall &);
void runReluBackward(Context &, const KernelCall &);
void runSigmoidForward(Context &, const KernelCall &);
void runSigmoidBackward(Context &, const KernelCall &);
void runTanhForward(Context &, const KernelCall &);
void runTanhBackward(Context &, const KernelCall &);
void runReciprocalForward(Context &, const KernelCall &);
void runReciprocalBackward(Context &, const KernelCall &);
/// Clip, HardSigmoid, HardSwish, Gelu and Erf: one pair for all.
void runInputActivationForward(Context &, const KernelCall &);
void runInputActivationBackward(Context &, const KernelCall &);
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

// CpuElementwise.cpp: broadcast binary ops and dropout's mask product.
void runAddForward(Context &, const KernelCall &);
void runAddBackward(Context &, const KernelCall &);
void runAddReluForward(Context &, const KernelCall &);
void runAddReluBackward(Context &, const KernelCall &);
void runMulForward(Context &, const KernelCall &);
void runMulBackward(Context &, const KernelCall &);
void runMaximumForward(Context &, const KernelCall &);
void runMaximumBackward(Context &, const KernelCall &);
void runMinimumForward(Context &, const KernelCall &);
void runMinimumBackward(Context &, const KernelCall &);
/// Forward and backward are the same product.
void runDropout(Context &, const KernelCall &);
constexpr auto runDropoutForward = runDropout;
constexpr auto runDropoutBackward = runDropout;

// CpuNormalization.cpp: batch norm (also synchronized and fused with ReLU)
// and layer norm.
void runBatchNormTrainingForward(Context &, const KernelCall &);
void runBatchNormInferenceForward(Context &, const KernelCall &);
void runBatchNormBackward(Context &, const KernelCall &);
void runBatchNormStatistics(Context &, const KernelCall &);
void runBatchNormApply(Context &, const KernelCall &);
void runBatchNormGradStatistics(Context &, const KernelCall &);
void runBatchNormGradApply(Context &, const KernelCall &);
void runBatchNormReluTrainingForward(Context &, const KernelCall &);
void runBatchNormReluInferenceForward(Context &, const KernelCall &);
void runBatchNormReluBackward(Context &, const KernelCall &);
void runLayerNormForward(Context &, const KernelCall &);
void runLayerNormBackward(Context &, const KernelCall &);

// CpuConvolution.cpp: 2-D convolutions (oneDNN).
void runConv2dForward(Context &, const KernelCall &);
void runConv2dBackwardData(Context &, const KernelCall &);
void runConv2dBackwardWeights(Context &, const KernelCall &);
void runConv2dReluForward(Context &, const KernelCall &);

// CpuLinear.cpp: linear layers and matrix products.
void runLinearForward(Context &, const KernelCall &);
void runLinearBackwardData(Context &, const KernelCall &);
void runLinearBackwardWeights(Context &, const KernelCall &);
void runLinearReluForward(Context &, const KernelCall &);
void runMatmulForward(Context &, const KernelCall &);
void runMatmulBackward(Context &, const KernelCall &);
void runMatmulTransposedA(Context &, const KernelCall &);
void runBatchMatmul(Context &, const KernelCall &);

// CpuPooling.cpp: pooling and spatial padding.
void runMaxPool2dForward(Context &, const KernelCall &);
void runMaxPool2dBackward(Context &, const KernelCall &);
void runAvgPool2dForward(Context &, const KernelCall &);
void runAvgPool2dBackward(Context &, const KernelCall &);
void runGlobalAvgPool2dForward(Context &, const KernelCall &);
void runGlobalAvgPool2dBackward(Context &, const KernelCall &);
void runPadForward(Context &, const KernelCall &);
void runPadBackward(Context &, const KernelCall &);

// CpuLoss.cpp: softmax over rows, the losses and the correct count.
void runSoftmaxForward(Context &, const KernelCall &);
void runSoftmaxBackward(Context &, const KernelCall &);
void runLogSoftmaxForward(Context &, const KernelCall &);
void runLogSoftmaxBackward(Context &, const KernelCall &);
void runCrossEntropyForward(Context &, const KernelCall &);
void runCrossEntropyBackward(Context &, const KernelCall &);
void runCrossEntropyForwardBackward(Context &, const KernelCall &);
void runCorrectCount(Context &, const KernelCall &);
void runLossForward(Context &, const KernelCall &);
void runLossBackward(Context &, const KernelCall &);
void runLossWeight(Context &, const KernelCall &);
void runLossCorrectCount(Context &, const KernelCall &);

// CpuOptimizers.cpp: parameter updates.
void runSgdUpdate(Context &, const KernelCall &);
void runAdamWUpdate(Context &, const KernelCall &);

// CpuTensorOps.cpp: copies, layouts, fills, transposes, joins, reductions
// and the embedding gather.
void runCopy(Context &, const KernelCall &);
void runReorder(Context &, const KernelCall &);
void runFill(Context &, const KernelCall &);
void runAccumulate(Context &, const KernelCall &);
void runTranspose2d(Context &, const KernelCall &);
void runTranspose(Context &, const KernelCall &);
void runConcatForward(Context &, const KernelCall &);
void runSplitForward(Context &, const KernelCall &);
void runReduceSum(Context &, const KernelCall &);
void runReduceMax(Context &, const KernelCall &);
void runReduceMin(Context &, const KernelCall &);
void runReduceExtremumBackward(Context &, const KernelCall &);
void runEmbeddingForward(Context &, const KernelCall &);
void runEmbeddingBackward(Context &, const KernelCall &);

// CpuCollectives.cpp: calls every replica joins.
void runAllReduce(Context &, const KernelCall &);
void runAllGather(Context &, const KernelCall &);
void runReduceScatter(Context &, const KernelCall &);

} // namespace dpc::rt::cpu

#endif // DPC_RUNTIME_CPU_CPUKERNELENTRIES_H
