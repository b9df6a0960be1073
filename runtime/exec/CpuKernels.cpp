//===- CpuKernels.cpp - a KernelCall on the CPU kernel library ------------===//

#include "runtime/exec/CpuKernels.h"
#include "runtime/comm/Communicator.h"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Kernels.h"
#include "runtime/plan/KernelShapes.h"

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

/// The labels index rows of the logits: one outside the classes would read
/// out of bounds, so it is an error here (the trainer checks data sets, but
/// a plan may be driven by other callers).
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
#pragma omp parallel for
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
#pragma omp parallel for
  for (int64_t o = 0; o < r.kept; ++o)
    y[o] = kernels::elements::reduceSum(r, o, x);
}

/// A replica on 0 rows (see KernelCall.h): zeros for every non-empty
/// result. oneDNN rejects zero dims, so no kernel runs.
void zeroNonEmptyResults(const KernelCall &call) {
  for (const plan::TensorArg &result : call.results)
    if (result.present && result.getNumElements() > 0)
      std::memset(result.data, 0, result.getNumBytes());
}

void allReduce(const KernelCall &call) {
  plan::ReduceOp op = plan::getAllReduceOp(call);
  if (!call.communicator)
    throw std::runtime_error("AllReduce has no communicator");
  std::vector<comm::ReduceBuffer> buffers;
  for (const plan::TensorArg &arg : call.operands)
    buffers.push_back({arg.data, arg.getNumElements(), arg.dtype});
  call.communicator->allReduce(buffers, op);
}

} // namespace

void runCpuKernel(KernelContext &context, const KernelCall &call) {
  if (call.kernel == Kernel::AllReduce)
    return allReduce(call);
  // Synchronized batch norm runs on a replica's empty share too: its sums
  // are zeros, and it must update the running statistics like the others.
  switch (call.kernel) {
  case Kernel::BatchNormStatistics:
    batchNormStatistics(
        plan::getBatchNormShape(call), in(call, 0), call.result(0).as<double>(),
        call.result(1).as<double>(), call.result(2).as<double>());
    return;
  case Kernel::BatchNormApply:
    batchNormApply(
        plan::getBatchNormShape(call), plan::getBatchNormParams(call),
        in(call, 0), in(call, 1), in(call, 2), in(call, 3), in(call, 4),
        call.operand(5).as<double>(), call.operand(6).as<double>(),
        call.operand(7).as<double>(), out(call, 0), out(call, 1), out(call, 2));
    return;
  case Kernel::BatchNormGradStatistics:
    batchNormGradStatistics(plan::getBatchNormShape(call), in(call, 0),
                            in(call, 1), in(call, 2), in(call, 3), out(call, 0),
                            out(call, 1));
    return;
  case Kernel::BatchNormGradApply:
    batchNormGradApply(plan::getBatchNormShape(call), in(call, 0), in(call, 1),
                       in(call, 2), in(call, 3), in(call, 4), in(call, 5),
                       in(call, 6), call.operand(7).as<double>(), out(call, 0));
    return;
  default:
    break;
  }
  if (call.hasEmptyTensor())
    return zeroNonEmptyResults(call);
  switch (call.kernel) {
  case Kernel::Conv2dForward:
    conv2dForward(context, plan::getConv2dShape(call), in(call, 0), in(call, 1),
                  in(call, 2), out(call, 0));
    return;
  case Kernel::Conv2dBackwardData:
    conv2dBackwardData(context, plan::getConv2dShape(call), in(call, 0),
                       in(call, 1), out(call, 0));
    return;
  case Kernel::Conv2dBackwardWeights:
    conv2dBackwardWeights(context, plan::getConv2dShape(call), in(call, 0),
                          in(call, 1), out(call, 0), out(call, 1));
    return;
  case Kernel::BatchNormTrainingForward:
    batchNormTrainingForward(
        plan::getBatchNormShape(call), plan::getBatchNormParams(call),
        in(call, 0), in(call, 1), in(call, 2), out(call, 0), out(call, 1),
        out(call, 2), in(call, 3), in(call, 4));
    return;
  case Kernel::BatchNormInferenceForward:
    batchNormInferenceForward(plan::getBatchNormShape(call),
                              plan::getBatchNormParams(call), in(call, 0),
                              in(call, 1), in(call, 2), in(call, 3),
                              in(call, 4), out(call, 0));
    return;
  case Kernel::BatchNormBackward:
    batchNormBackward(plan::getBatchNormShape(call), in(call, 0), in(call, 1),
                      in(call, 2), in(call, 3), in(call, 4), out(call, 0),
                      out(call, 1), out(call, 2));
    return;
  case Kernel::MaxPool2dForward:
    maxPool2dForward(plan::getPool2dShape(call), in(call, 0), out(call, 0));
    return;
  case Kernel::MaxPool2dBackward:
    maxPool2dBackward(plan::getPool2dShape(call), in(call, 0), in(call, 1),
                      out(call, 0));
    return;
  case Kernel::AvgPool2dForward:
    avgPool2dForward(plan::getPool2dShape(call), in(call, 0), out(call, 0));
    return;
  case Kernel::AvgPool2dBackward:
    avgPool2dBackward(plan::getPool2dShape(call), in(call, 0), out(call, 0));
    return;
  case Kernel::GlobalAvgPool2dForward: {
    plan::Nchw s = plan::getGlobalAvgPoolShape(call);
    globalAvgPool2dForward(s.n, s.c, s.h, s.w, in(call, 0), out(call, 0));
    return;
  }
  case Kernel::GlobalAvgPool2dBackward: {
    plan::Nchw s = plan::getGlobalAvgPoolShape(call);
    globalAvgPool2dBackward(s.n, s.c, s.h, s.w, in(call, 0), out(call, 0));
    return;
  }
  case Kernel::PadForward:
    pad2dForward(plan::getPad2dShape(call), plan::getPadValue(call),
                 in(call, 0), out(call, 0));
    return;
  case Kernel::PadBackward:
    pad2dBackward(plan::getPad2dShape(call), in(call, 0), out(call, 0));
    return;
  case Kernel::LinearForward:
    linearForward(context, plan::getLinearShape(call), in(call, 0), in(call, 1),
                  in(call, 2), out(call, 0));
    return;
  case Kernel::LinearBackwardData:
    linearBackwardData(context, plan::getLinearShape(call), in(call, 0),
                       in(call, 1), out(call, 0));
    return;
  case Kernel::LinearBackwardWeights:
    linearBackwardWeights(context, plan::getLinearShape(call), in(call, 0),
                          in(call, 1), out(call, 0), out(call, 1));
    return;
  case Kernel::MatmulForward:
    matmulForward(context, plan::getMatmulShape(call), in(call, 0), in(call, 1),
                  out(call, 0));
    return;
  case Kernel::MatmulBackward:
    matmulBackward(context, plan::getMatmulShape(call), in(call, 0),
                   in(call, 1), in(call, 2), out(call, 0), out(call, 1));
    return;
  case Kernel::MatmulTransposedA:
    // c = a^T b is matmul's weight gradient with b as dc.
    matmulBackward(context, plan::getMatmulShape(call), in(call, 0), nullptr,
                   in(call, 1), nullptr, out(call, 0));
    return;
  case Kernel::ReluForward:
    reluForward(plan::getElementwiseSize(call), in(call, 0), out(call, 0));
    return;
  case Kernel::ReluBackward:
    reluBackward(plan::getElementwiseSize(call), in(call, 0), in(call, 1),
                 out(call, 0));
    return;
  case Kernel::SigmoidForward:
    sigmoidForward(plan::getElementwiseSize(call), in(call, 0), out(call, 0));
    return;
  case Kernel::SigmoidBackward:
    sigmoidBackward(plan::getElementwiseSize(call), in(call, 0), in(call, 1),
                    out(call, 0));
    return;
  case Kernel::TanhForward:
    tanhForward(plan::getElementwiseSize(call), in(call, 0), out(call, 0));
    return;
  case Kernel::TanhBackward:
    tanhBackward(plan::getElementwiseSize(call), in(call, 0), in(call, 1),
                 out(call, 0));
    return;
  case Kernel::AddForward:
    addForward(plan::getBroadcastShape(call), in(call, 0), in(call, 1),
               out(call, 0));
    return;
  case Kernel::AddBackward:
    addBackward(plan::getBroadcastShape(call), in(call, 0), out(call, 0),
                out(call, 1));
    return;
  case Kernel::MulForward:
    mulForward(plan::getBroadcastShape(call), in(call, 0), in(call, 1),
               out(call, 0));
    return;
  case Kernel::MulBackward:
    mulBackward(plan::getBroadcastShape(call), in(call, 0), in(call, 1),
                in(call, 2), out(call, 0), out(call, 1));
    return;
  case Kernel::SoftmaxForward: {
    plan::RowsShape s = plan::getRowsShape(call);
    softmaxForward(s.rows, s.cols, in(call, 0), out(call, 0));
    return;
  }
  case Kernel::SoftmaxBackward: {
    plan::RowsShape s = plan::getRowsShape(call);
    softmaxBackward(s.rows, s.cols, in(call, 0), in(call, 1), out(call, 0));
    return;
  }
  case Kernel::LogSoftmaxForward: {
    plan::RowsShape s = plan::getRowsShape(call);
    logSoftmaxForward(s.rows, s.cols, in(call, 0), out(call, 0));
    return;
  }
  case Kernel::LogSoftmaxBackward: {
    plan::RowsShape s = plan::getRowsShape(call);
    logSoftmaxBackward(s.rows, s.cols, in(call, 0), in(call, 1), out(call, 0));
    return;
  }
  case Kernel::CrossEntropyForward: {
    plan::RowsShape s = plan::getRowsShape(call);
    const auto *labels = call.operand(1).as<int32_t>();
    checkLabels(labels, s.rows, s.cols);
    int64_t correct = 0;
    crossEntropyForward(s.rows, s.cols, in(call, 0), labels,
                        static_cast<float>(call.batch), out(call, 0), &correct);
    if (call.result(1).present)
      storeScalar(call.result(1), static_cast<double>(correct));
    return;
  }
  case Kernel::CrossEntropyBackward: {
    plan::RowsShape s = plan::getRowsShape(call);
    const auto *labels = call.operand(1).as<int32_t>();
    checkLabels(labels, s.rows, s.cols);
    float one = 1.f;
    const float *dLoss = call.operand(2).present ? in(call, 2) : &one;
    crossEntropyBackward(s.rows, s.cols, in(call, 0), labels, dLoss,
                         static_cast<float>(call.batch), out(call, 0));
    return;
  }
  case Kernel::CorrectCount: {
    plan::RowsShape s = plan::getRowsShape(call);
    const auto *labels = call.operand(1).as<int32_t>();
    checkLabels(labels, s.rows, s.cols);
    storeScalar(call.result(0), static_cast<double>(countCorrect(
                                    s.rows, s.cols, in(call, 0), labels)));
    return;
  }
  case Kernel::SgdUpdate:
    // SGD has no step operand: its first-step rule (buffer = grad) uses the
    // executor's count.
    sgdUpdate(plan::getOptimizerSize(call), plan::getSgdParams(call),
              *in(call, 2), call.optimizerStep, in(call, 0), in(call, 1),
              in(call, 3));
    return;
  case Kernel::AdamWUpdate: {
    int64_t size = plan::getOptimizerSize(call);
    int64_t step = *call.operand(5).as<int64_t>();
    if (step < 1)
      throw std::runtime_error("AdamW step " + std::to_string(step) +
                               " is not a 1-based update count");
    adamwUpdate(size, plan::getAdamWParams(call), *in(call, 4), step,
                in(call, 0), in(call, 1), in(call, 2), in(call, 3));
    return;
  }
  case Kernel::Copy: {
    int64_t size = plan::getElementwiseSize(call);
    std::memmove(call.result(0).data, call.operand(0).data,
                 size * plan::getDTypeSize(call.operand(0).dtype));
    return;
  }
  case Kernel::Fill:
    fillTensor(call.result(0), plan::getElementwiseSize(call),
               plan::getFillValue(call));
    return;
  case Kernel::Accumulate:
    accumulate(plan::getElementwiseSize(call), in(call, 0), out(call, 0));
    return;
  case Kernel::Transpose2d: {
    plan::RowsShape s = plan::getTransposeShape(call);
    transpose2d(s.rows, s.cols, call.operand(0).as<uint32_t>(),
                call.result(0).as<uint32_t>());
    return;
  }
  case Kernel::ReduceSum:
    reduceSum(plan::getReduceShape(call), in(call, 0), out(call, 0));
    return;
  case Kernel::AllReduce:
  case Kernel::BatchNormStatistics:
  case Kernel::BatchNormApply:
  case Kernel::BatchNormGradStatistics:
  case Kernel::BatchNormGradApply:
    break; // handled above
  }
  throw std::runtime_error(std::string("kernel ") +
                           plan::EnumNameKernel(call.kernel) +
                           " is not supported on the CPU");
}

} // namespace dpc::exec
