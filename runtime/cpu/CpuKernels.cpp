//===- CpuKernels.cpp - a KernelCall on the CPU kernel library ------------===//

#include "runtime/abi/KernelDispatch.h"
#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/comm/Communicator.h"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Kernels.h"
#include "runtime/kernels/Parallel.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dpc::exec {

using plan::Kernel;
using plan::KernelCall;
using namespace dpc::kernels;

namespace {

float *in(const KernelCall &call, size_t i) {
  return call.operand(i).present ? call.operand(i).f32() : nullptr;
}
float *out(const KernelCall &call, size_t i) {
  return call.result(i).present ? call.result(i).f32() : nullptr;
}

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

void fillTensor(const plan::TensorArg &y, int64_t size, double value) {
  switch (y.dtype) {
  case plan::DType::F32:
    kernels::fill(size, static_cast<float>(value), y.f32());
    break;
  case plan::DType::F64:
    std::fill_n(y.as<double>(), size, value);
    break;
  case plan::DType::I32:
    std::fill_n(y.as<int32_t>(), size, static_cast<int32_t>(value));
    break;
  default:
    std::fill_n(y.as<int64_t>(), size, static_cast<int64_t>(value));
    break;
  }
}

int64_t countCorrect(int64_t rows, int64_t classes, const float *logits,
                     const int32_t *labels) {
  int64_t correct = 0;
  for (int64_t i = 0; i < rows; ++i)
    correct += math::rowArgMax(logits + i * classes, classes) == labels[i];
  return correct;
}

void transpose2d(int64_t rows, int64_t cols, const uint32_t *x, uint32_t *y) {
#pragma omp parallel for if (isWorthThreads(rows * cols, 2))
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      y[j * rows + i] = x[i * cols + j];
}

/// Sums x over the reduced dims in double, each output in a fixed order:
/// the same per-output body as the CUDA kernel.
void reduceSum(const plan::ReduceShape &shape, const float *x, float *y) {
  int rank = static_cast<int>(shape.dims.size());
  if (rank > 8)
    throw std::invalid_argument("reduce_sum: rank above 8");
  bool reduced[8] = {};
  for (int d = 0; d < rank; ++d)
    reduced[d] = shape.reduced[d];
  kernels::elements::ReduceIndex r =
      kernels::elements::makeReduceIndex(rank, shape.dims.data(), reduced);
  if (r.redRank == 1 && r.keptRank == 1 && r.redStrides[0] == r.kept) {
    // Leading dims summed away (a bias gradient): the same per-output sums
    // in the same order, a row of a chunk of outputs at a time, so that the
    // loads are contiguous and the adds vectorise across outputs.
    constexpr int64_t kChunk = 512;
    int64_t chunks = (r.kept + kChunk - 1) / kChunk;
#pragma omp parallel for if (chunks > 1 && isWorthThreads(r.kept * r.reduced))
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      int64_t begin = chunk * kChunk;
      int64_t size = std::min(kChunk, r.kept - begin);
      double sums[kChunk] = {};
      for (int64_t row = 0; row < r.reduced; ++row) {
        const float *in = x + row * r.kept + begin;
#pragma omp simd
        for (int64_t o = 0; o < size; ++o)
          sums[o] += in[o];
      }
      for (int64_t o = 0; o < size; ++o)
        y[begin + o] = static_cast<float>(sums[o]);
    }
    return;
  }
#pragma omp parallel for if (isWorthThreads(r.kept * r.reduced))
  for (int64_t o = 0; o < r.kept; ++o)
    y[o] = kernels::elements::reduceSum(r, o, x);
}

/// A replica on 0 rows (see KernelCall.h): zeros for every non-empty
/// result. oneDNN rejects zero dims, so no kernel runs.
void zeroNonEmptyResults(KernelContext &, const KernelCall &call) {
  for (const plan::TensorArg &result : call.results)
    if (result.present && result.getNumElements() > 0)
      std::memset(result.data, 0, result.getNumBytes());
}

//===----------------------------------------------------------------------===//
// One function per kernel of Kernels.def
//===----------------------------------------------------------------------===//

void runAllReduce(KernelContext &, const KernelCall &call) {
  plan::ReduceOp op = plan::getAllReduceOp(call);
  if (!call.communicator)
    throw std::runtime_error("AllReduce has no communicator");
  std::vector<comm::ReduceBuffer> buffers;
  for (const plan::TensorArg &arg : call.operands)
    buffers.push_back({arg.data, arg.getNumElements(), arg.dtype});
  call.communicator->allReduce(buffers, op);
}

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

void runConv2dForward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::Conv2dForward;
  conv2dForward(context, plan::getConv2dShape(call), in(call, X), in(call, W),
                in(call, Bias), out(call, Y));
}

void runConv2dBackwardData(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::Conv2dBackwardData;
  conv2dBackwardData(context, plan::getConv2dShape(call), in(call, DY),
                     in(call, W), out(call, DX));
}

void runConv2dBackwardWeights(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::Conv2dBackwardWeights;
  conv2dBackwardWeights(context, plan::getConv2dShape(call), in(call, X),
                        in(call, DY), out(call, DW), out(call, DB));
}

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

void runMaxPool2dForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MaxPool2dForward;
  maxPool2dForward(plan::getPool2dShape(call), in(call, X), out(call, Y));
}

void runMaxPool2dBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MaxPool2dBackward;
  maxPool2dBackward(plan::getPool2dShape(call), in(call, X), in(call, DY),
                    out(call, DX));
}

void runAvgPool2dForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AvgPool2dForward;
  avgPool2dForward(plan::getPool2dShape(call), in(call, X), out(call, Y));
}

void runAvgPool2dBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AvgPool2dBackward;
  avgPool2dBackward(plan::getPool2dShape(call), in(call, DY), out(call, DX));
}

void runGlobalAvgPool2dForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::GlobalAvgPool2dForward;
  plan::Nchw s = plan::getGlobalAvgPoolShape(call);
  globalAvgPool2dForward(s.n, s.c, s.h, s.w, in(call, X), out(call, Y),
                         call.operand(X).layout == plan::Layout::NChw16c);
}

void runGlobalAvgPool2dBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::GlobalAvgPool2dBackward;
  plan::Nchw s = plan::getGlobalAvgPoolShape(call);
  globalAvgPool2dBackward(s.n, s.c, s.h, s.w, in(call, DY), out(call, DX),
                          call.result(DX).layout == plan::Layout::NChw16c);
}

void runPadForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::PadForward;
  pad2dForward(plan::getPad2dShape(call), plan::getPadValue(call), in(call, X),
               out(call, Y));
}

void runPadBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::PadBackward;
  pad2dBackward(plan::getPad2dShape(call), in(call, DY), out(call, DX));
}

void runLinearForward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::LinearForward;
  linearForward(context, plan::getLinearShape(call), in(call, X), in(call, W),
                in(call, Bias), out(call, Y));
}

void runLinearBackwardData(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::LinearBackwardData;
  linearBackwardData(context, plan::getLinearShape(call), in(call, DY),
                     in(call, W), out(call, DX));
}

void runLinearBackwardWeights(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::LinearBackwardWeights;
  linearBackwardWeights(context, plan::getLinearShape(call), in(call, X),
                        in(call, DY), out(call, DW), out(call, DB));
}

void runMatmulForward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::MatmulForward;
  matmulForward(context, plan::getMatmulShape(call), in(call, A), in(call, B),
                out(call, C));
}

void runMatmulBackward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::MatmulBackward;
  matmulBackward(context, plan::getMatmulShape(call), in(call, A), in(call, B),
                 in(call, DC), out(call, DA), out(call, DB));
}

void runMatmulTransposedA(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::MatmulTransposedA;
  // c = a^T b is matmul's weight gradient with b as dc.
  matmulBackward(context, plan::getMatmulShape(call), in(call, A), nullptr,
                 in(call, B), nullptr, out(call, C));
}

void runBatchMatmul(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::BatchMatmul;
  batchMatmul(context, plan::getBatchMatmulShape(call), in(call, A),
              in(call, B), out(call, C));
}

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

void runReciprocalForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ReciprocalForward;
  reciprocalForward(plan::getElementwiseSize(call), in(call, X), out(call, Y));
}

void runReciprocalBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ReciprocalBackward;
  reciprocalBackward(plan::getElementwiseSize(call), in(call, Y), in(call, DY),
                     out(call, DX));
}

void runTanhBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::TanhBackward;
  tanhBackward(plan::getElementwiseSize(call), in(call, Y), in(call, DY),
               out(call, DX));
}

void runAddForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AddForward;
  addForward(plan::getBroadcastShape(call), in(call, A), in(call, B),
             out(call, C));
}

void runAddReluForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AddReluForward;
  addReluForward(plan::getBroadcastShape(call), in(call, A), in(call, B),
                 out(call, C));
}

void runAddReluBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AddReluBackward;
  addReluBackward(plan::getElementwiseSize(call), in(call, Y), in(call, A),
                  in(call, B), out(call, DX));
}

void runAddBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AddBackward;
  addBackward(plan::getBroadcastShape(call), in(call, DC), out(call, DA),
              out(call, DB));
}

void runMulForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MulForward;
  mulForward(plan::getBroadcastShape(call), in(call, A), in(call, B),
             out(call, C));
}

void runMulBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::MulBackward;
  mulBackward(plan::getBroadcastShape(call), in(call, A), in(call, B),
              in(call, DC), out(call, DA), out(call, DB));
}

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

/// An update that wrote NaN or infinity says so where the call asks.
void reportNonFinite(const KernelCall &call, bool nonFinite) {
  if (nonFinite && call.nonFinite)
    call.nonFinite->store(1, std::memory_order_relaxed);
}

void runSgdUpdate(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::SgdUpdate;
  // SGD has no step operand: its first-step rule (buffer = grad) uses the
  // executor's count.
  reportNonFinite(call, sgdUpdate(plan::getOptimizerSize(call),
                                  plan::getSgdParams(call), *in(call, Lr),
                                  call.optimizerStep, in(call, Param),
                                  in(call, Grad), in(call, MomentumBuffer)));
}

void runAdamWUpdate(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AdamWUpdate;
  reportNonFinite(call, adamwUpdate(plan::getOptimizerSize(call),
                                    plan::getAdamWParams(call), *in(call, Lr),
                                    *call.operand(Step).as<int64_t>(),
                                    in(call, Param), in(call, Grad),
                                    in(call, ExpAvg), in(call, ExpAvgSq)));
}

void runCopy(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::Copy;
  int64_t size = plan::getElementwiseSize(call);
  std::memmove(call.result(Y).data, call.operand(X).data,
               size * plan::getDTypeSize(call.operand(X).dtype));
}

void runReorder(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::Reorder;
  const plan::TensorArg &x = call.operand(X), &y = call.result(Y);
  if (x.layout == y.layout)
    return runCopy(context, call);
  // Plain <-> nChw16c; the loader took no other pair (KernelLayouts.h).
  plan::getElementwiseSize(call);
  reorderChannels(x.dims[0], x.dims[1], x.dims[2] * x.dims[3], x.f32(), y.f32(),
                  y.layout == plan::Layout::NChw16c);
}

void runFill(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::Fill;
  fillTensor(call.result(Y), plan::getElementwiseSize(call),
             plan::getFillValue(call));
}

void runAccumulate(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::Accumulate;
  accumulate(plan::getElementwiseSize(call), in(call, X), out(call, Y));
}

void runTranspose2d(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::Transpose2d;
  plan::RowsShape s = plan::getTransposeShape(call);
  transpose2d(s.rows, s.cols, call.operand(X).as<uint32_t>(),
              call.result(Y).as<uint32_t>());
}

void runTranspose(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::Transpose;
  plan::PermuteShape s = plan::getPermuteShape(call);
  elements::PermuteIndex index = elements::makePermuteIndex(
      static_cast<int>(s.dims.size()), s.dims.data(), s.permutation.data());
  const auto *x = call.operand(X).as<uint32_t>();
  auto *y = call.result(Y).as<uint32_t>();
  int64_t size = call.result(Y).getNumElements();
#pragma omp parallel for
  for (int64_t o = 0; o < size; ++o)
    y[o] = x[elements::permuteSource(index, o)];
}

/// Concat and Split: each row of the whole holds every part's row in order.
void copyParts(const KernelCall &call, bool concat) {
  plan::JoinShape s = plan::getJoinShape(call);
  const std::vector<plan::TensorArg> &parts =
      concat ? call.operands : call.results;
  auto *whole = static_cast<uint8_t *>(concat ? call.result(0).data
                                              : call.operand(0).data);
#pragma omp parallel for
  for (int64_t row = 0; row < s.outer; ++row) {
    int64_t offset = row * s.rowBytes;
    for (size_t p = 0; p < parts.size(); ++p) {
      auto *part = static_cast<uint8_t *>(parts[p].data) + row * s.partBytes[p];
      if (concat)
        std::memcpy(whole + offset, part, s.partBytes[p]);
      else
        std::memcpy(part, whole + offset, s.partBytes[p]);
      offset += s.partBytes[p];
    }
  }
}

void runConcatForward(KernelContext &, const KernelCall &call) {
  copyParts(call, /*concat=*/true);
}

void runSplitForward(KernelContext &, const KernelCall &call) {
  copyParts(call, /*concat=*/false);
}

void runReduceSum(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ReduceSum;
  reduceSum(plan::getReduceShape(call), in(call, X), out(call, Y));
}

/// Every input activation (Clip, HardSigmoid, HardSwish, Gelu, Erf and
/// Kernels.def's DPC_INPUT_ACTIVATION rows) has the same roles: (X) -> (Y)
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
void runLinearReluForward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::LinearReluForward;
  linearForward(context, plan::getLinearShape(call), in(call, X), in(call, W),
                in(call, Bias), out(call, Y), /*relu=*/true);
}

void runConv2dReluForward(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::Conv2dReluForward;
  conv2dForward(context, plan::getConv2dShape(call), in(call, X), in(call, W),
                in(call, Bias), out(call, Y), /*relu=*/true);
}

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

/// Forward and backward are the same product: x (or dy) times the mask.
void runDropout(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::DropoutForward;
  plan::DropoutShape s = plan::getDropoutShape(call);
  dropout(math::makeDropoutMask(call.randomSeed, call.optimizerStep, s.site,
                                s.ratio, s.rowwise),
          s.rows, s.cols, call.firstRow, in(call, X), out(call, Y));
}
constexpr auto runDropoutForward = runDropout;
constexpr auto runDropoutBackward = runDropout;

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

void runEmbeddingForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::EmbeddingForward;
  embeddingForward(plan::getEmbeddingShape(call), in(call, Table),
                   call.operand(Indices).as<int32_t>(), out(call, Y));
}

void runEmbeddingBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::EmbeddingBackward;
  embeddingBackward(plan::getEmbeddingShape(call),
                    call.operand(Indices).as<int32_t>(), in(call, DY),
                    out(call, DTable));
}

const plan::KernelTable<KernelContext> kCpuKernels = {"the CPU",
                                                      {
#define DPC_KERNEL(Name, ...) run##Name,
#define DPC_INPUT_ACTIVATION(Name)                                             \
  runInputActivationForward, runInputActivationBackward,
#include "runtime/abi/Kernels.def"
                                                      },
                                                      &zeroNonEmptyResults,
                                                      /*blockedLayouts=*/true};

} // namespace

const plan::KernelTable<KernelContext> &getCpuKernelTable() {
  return kCpuKernels;
}

namespace {
/// The CPU's KernelState: the instruction's bound oneDNN primitives.
struct CpuKernelState : plan::KernelState {
  CallSite site;
};

/// Points `context` at the call's site for the duration of one call.
class CallSiteScope {
public:
  CallSiteScope(KernelContext &context, const KernelCall &call)
      : context(context) {
    if (!call.state)
      return;
    if (!*call.state)
      *call.state = std::make_unique<CpuKernelState>();
    context.setCallSite(&static_cast<CpuKernelState &>(**call.state).site);
  }
  ~CallSiteScope() { context.setCallSite(nullptr); }

private:
  KernelContext &context;
};
} // namespace

void runCpuKernel(KernelContext &context, const KernelCall &call) {
  CallSiteScope site(context, call);
  plan::dispatchKernel(kCpuKernels, context, call);
}

} // namespace dpc::exec
