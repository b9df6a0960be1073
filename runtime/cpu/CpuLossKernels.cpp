//===- CpuLossKernels.cpp - nn.loss's kernels on the CPU ------------------===//

#include "runtime/cpu/CpuLossKernels.h"
#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/kernels/Loss.h"

namespace dpc::exec {

using plan::KernelCall;
using plan::LossShape;

namespace {

/// The shape of a Loss* call; a cross-entropy's targets checked.
LossShape checkedShape(const KernelCall &call) {
  LossShape s = plan::getLossShape(call);
  if (s.isCrossEntropy())
    kernels::checkClassTargets(s, call.operand(1).as<int32_t>());
  return s;
}

/// The mean's divisor: the Divisor operand (operand `index`), else the
/// global count of targets.
double divisorOf(const KernelCall &call, size_t index, const LossShape &s) {
  if (call.operands.size() > index && call.operand(index).present)
    return *call.operand(index).f32();
  return s.countDivisor;
}

} // namespace

void runLossForward(kernels::KernelContext &, const KernelCall &call) {
  using namespace plan::roles::LossForward;
  LossShape s = checkedShape(call);
  double sum = kernels::lossSum(s, call.operand(Output).f32(),
                                call.operand(Target).data);
  *call.result(Loss).f32() =
      static_cast<float>(sum / divisorOf(call, Divisor, s));
}

void runLossBackward(kernels::KernelContext &, const KernelCall &call) {
  using namespace plan::roles::LossBackward;
  LossShape s = checkedShape(call);
  double dLoss = call.operand(DLoss).present ? *call.operand(DLoss).f32() : 1.0;
  kernels::lossGradient(
      s, call.operand(Output).f32(), call.operand(Target).data,
      dLoss / divisorOf(call, Divisor, s), call.result(DOutput).f32());
}

void runLossWeight(kernels::KernelContext &, const KernelCall &call) {
  using namespace plan::roles::LossWeight;
  LossShape s = checkedShape(call);
  *call.result(Weight).f32() = static_cast<float>(
      kernels::lossWeight(s, call.operand(Target).as<int32_t>()));
}

void runLossCorrectCount(kernels::KernelContext &, const KernelCall &call) {
  using namespace plan::roles::LossCorrectCount;
  LossShape s = checkedShape(call);
  int64_t correct = kernels::lossCorrectCount(
      s, call.operand(Output).f32(), call.operand(Target).as<int32_t>());
  const plan::TensorArg &count = call.result(Count);
  switch (count.dtype) {
  case plan::DType::I64:
    *count.as<int64_t>() = correct;
    break;
  case plan::DType::I32:
    *count.as<int32_t>() = static_cast<int32_t>(correct);
    break;
  case plan::DType::F64:
    *count.as<double>() = static_cast<double>(correct);
    break;
  default:
    *count.f32() = static_cast<float>(correct);
    break;
  }
}

} // namespace dpc::exec
