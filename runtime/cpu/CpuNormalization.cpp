//===- CpuNormalization.cpp - normalization kernels on the CPU ------------===//
//
// Batch norm (in one call, synchronized across replicas as statistics and
// apply kernels, and fused with a following ReLU) and layer norm.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cpu/CpuKernelEntries.h"
#include "runtime/kernels/BatchNorm.h"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/LayerNorm.h"

namespace dpc::rt::cpu {

using namespace dpc::kernels;

void runBatchNormTrainingForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::BatchNormTrainingForward;
  batchNormTrainingForward(plan::getBatchNormShape(call),
                           plan::getBatchNormParams(call), in(call, X),
                           in(call, Scale), in(call, Shift), out(call, Y),
                           out(call, SavedMean), out(call, SavedInvStd),
                           in(call, RunningMean), in(call, RunningVar));
}

void runBatchNormInferenceForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::BatchNormInferenceForward;
  batchNormInferenceForward(plan::getBatchNormShape(call),
                            plan::getBatchNormParams(call), in(call, X),
                            in(call, Scale), in(call, Shift), in(call, Mean),
                            in(call, Var), out(call, Y));
}

void runBatchNormBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::BatchNormBackward;
  batchNormBackward(plan::getBatchNormShape(call), in(call, X), in(call, DY),
                    in(call, Scale), in(call, SavedMean), in(call, SavedInvStd),
                    out(call, DX), out(call, DScale), out(call, DShift));
}

//===----------------------------------------------------------------------===//
// Synchronized batch norm: per-replica sums, all-reduced between the kernels
//===----------------------------------------------------------------------===//

void runBatchNormStatistics(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::BatchNormStatistics;
  batchNormStatistics(
      plan::getBatchNormShape(call), in(call, X), call.result(Sum).as<double>(),
      call.result(SumSq).as<double>(), call.result(Count).as<double>());
}

void runBatchNormApply(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::BatchNormApply;
  batchNormApply(
      plan::getBatchNormShape(call), plan::getBatchNormParams(call),
      in(call, X), in(call, Scale), in(call, Shift), in(call, RunningMean),
      in(call, RunningVar), call.operand(Sum).as<double>(),
      call.operand(SumSq).as<double>(), call.operand(Count).as<double>(),
      out(call, Y), out(call, SavedMean), out(call, SavedInvStd));
}

void runBatchNormGradStatistics(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::BatchNormGradStatistics;
  batchNormGradStatistics(plan::getBatchNormShape(call), in(call, X),
                          in(call, DY), in(call, SavedMean),
                          in(call, SavedInvStd), out(call, SumDY),
                          out(call, SumDYXhat));
}

void runBatchNormGradApply(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::BatchNormGradApply;
  batchNormGradApply(
      plan::getBatchNormShape(call), in(call, X), in(call, DY), in(call, Scale),
      in(call, SavedMean), in(call, SavedInvStd), in(call, SumDY),
      in(call, SumDYXhat), call.operand(Count).as<double>(), out(call, DX));
}

//===----------------------------------------------------------------------===//
// Batch norm fused with the ReLU that follows it
//===----------------------------------------------------------------------===//

void runBatchNormReluTrainingForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::BatchNormReluTrainingForward;
  batchNormTrainingForward(
      plan::getBatchNormShape(call), plan::getBatchNormParams(call),
      in(call, X), in(call, Scale), in(call, Shift), out(call, Y),
      out(call, SavedMean), out(call, SavedInvStd), in(call, RunningMean),
      in(call, RunningVar), /*relu=*/true);
}

void runBatchNormReluInferenceForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::BatchNormReluInferenceForward;
  batchNormInferenceForward(plan::getBatchNormShape(call),
                            plan::getBatchNormParams(call), in(call, X),
                            in(call, Scale), in(call, Shift), in(call, Mean),
                            in(call, Var), out(call, Y), /*relu=*/true);
}

void runBatchNormReluBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::BatchNormReluBackward;
  batchNormBackward(plan::getBatchNormShape(call), in(call, X), in(call, DY),
                    in(call, Scale), in(call, SavedMean), in(call, SavedInvStd),
                    out(call, DX), out(call, DScale), out(call, DShift),
                    in(call, Y));
}

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

void runLayerNormForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::LayerNormForward;
  const plan::TensorArg &bias = call.operand(Bias);
  layerNormForward(plan::getLayerNormShape(call), in(call, X), in(call, Scale),
                   bias.present ? bias.f32() : nullptr, out(call, Y));
}

void runLayerNormBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::LayerNormBackward;
  const plan::TensorArg &dBias = call.result(DBias);
  layerNormBackward(plan::getLayerNormShape(call), in(call, X), in(call, DY),
                    in(call, Scale), call.workspace.as<elements::RowStats>(),
                    out(call, DX), out(call, DScale),
                    dBias.present ? dBias.f32() : nullptr);
}

} // namespace dpc::rt::cpu
