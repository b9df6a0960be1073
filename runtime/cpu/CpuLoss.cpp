//===- CpuLoss.cpp - softmax and loss kernels on the CPU ------------------===//
//
// Softmax and log-softmax over the last axis, cross-entropy (forward,
// backward and both in one pass) and the count of rows whose argmax is the
// label; nn.loss's kernels (any kind, any rank: runtime/kernels/Loss.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cpu/CpuKernelEntries.h"
#include "runtime/kernels/CrossEntropy.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Loss.h"
#include "runtime/kernels/Softmax.h"

#include <stdexcept>
#include <string>

namespace dpc::rt::cpu {

using namespace dpc::kernels;

namespace {

/// The labels index rows of the logits. The executor checks them when they
/// are bound (for every backend); this guard keeps a direct caller of the
/// CPU kernels from reading out of bounds.
void checkLabels(const int32_t *labels, int64_t rows, int64_t classes) {
  for (int64_t i = 0; i < rows; ++i)
    if (labels[i] < 0 || labels[i] >= classes)
      throw std::runtime_error("label " + std::to_string(labels[i]) +
                               " is outside the " + std::to_string(classes) +
                               " classes");
}

/// Writes `value` as the scalar `arg`'s dtype.
void storeScalar(const plan::TensorArg &arg, double value) {
  switch (arg.dtype) {
  case plan::DType::F32:
    *arg.as<float>() = static_cast<float>(value);
    break;
  case plan::DType::F64:
    *arg.as<double>() = value;
    break;
  case plan::DType::I32:
    *arg.as<int32_t>() = static_cast<int32_t>(value);
    break;
  case plan::DType::I64:
    *arg.as<int64_t>() = static_cast<int64_t>(value);
    break;
  default:
    throw std::runtime_error("cannot store a scalar as this dtype");
  }
}

int64_t countCorrect(int64_t rows, int64_t classes, const float *logits,
                     const int32_t *labels) {
  int64_t correct = 0;
  for (int64_t i = 0; i < rows; ++i)
    correct += math::rowArgMax(logits + i * classes, classes) == labels[i];
  return correct;
}

} // namespace

void runSoftmaxForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::SoftmaxForward;
  plan::RowsShape s = plan::getRowsShape(call);
  softmaxForward(s.rows, s.cols, in(call, X), out(call, Y));
}

void runSoftmaxBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::SoftmaxBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  softmaxBackward(s.rows, s.cols, in(call, Y), in(call, DY), out(call, DX));
}

void runLogSoftmaxForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::LogSoftmaxForward;
  plan::RowsShape s = plan::getRowsShape(call);
  logSoftmaxForward(s.rows, s.cols, in(call, X), out(call, Y));
}

void runLogSoftmaxBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::LogSoftmaxBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  logSoftmaxBackward(s.rows, s.cols, in(call, Y), in(call, DY), out(call, DX));
}

void runCrossEntropyForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::CrossEntropyForward;
  plan::RowsShape s = plan::getRowsShape(call);
  const auto *labels = call.operand(Labels).as<int32_t>();
  checkLabels(labels, s.rows, s.cols);
  int64_t correct = 0;
  crossEntropyForward(s.rows, s.cols, in(call, Logits), labels,
                      static_cast<float>(call.batch), out(call, Loss),
                      &correct);
  if (call.result(Correct).present)
    storeScalar(call.result(Correct), static_cast<double>(correct));
}

void runCrossEntropyBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::CrossEntropyBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  const auto *labels = call.operand(Labels).as<int32_t>();
  checkLabels(labels, s.rows, s.cols);
  float one = 1.f;
  const float *dLoss = call.operand(DLoss).present ? in(call, DLoss) : &one;
  crossEntropyBackward(s.rows, s.cols, in(call, Logits), labels, dLoss,
                       static_cast<float>(call.batch), out(call, DLogits));
}

void runCrossEntropyForwardBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::CrossEntropyForwardBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  const auto *labels = call.operand(Labels).as<int32_t>();
  checkLabels(labels, s.rows, s.cols);
  float one = 1.f;
  const float *dLoss = call.operand(DLoss).present ? in(call, DLoss) : &one;
  int64_t correct = 0;
  crossEntropyForwardBackward(s.rows, s.cols, in(call, Logits), labels, dLoss,
                              static_cast<float>(call.batch), out(call, Loss),
                              &correct, out(call, DLogits));
  if (call.result(Correct).present)
    storeScalar(call.result(Correct), static_cast<double>(correct));
}

void runCorrectCount(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::CorrectCount;
  plan::RowsShape s = plan::getRowsShape(call);
  const auto *labels = call.operand(Labels).as<int32_t>();
  checkLabels(labels, s.rows, s.cols);
  storeScalar(call.result(Count),
              static_cast<double>(
                  countCorrect(s.rows, s.cols, in(call, Logits), labels)));
}

//===----------------------------------------------------------------------===//
// nn.loss: LossForward, LossBackward, LossWeight, LossCorrectCount
//===----------------------------------------------------------------------===//

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

} // namespace dpc::rt::cpu
