//===- OwnLoss.cu - softmax and losses as own CUDA kernels ----------------===//
//
// Softmax and log-softmax (a thread per row), cross-entropy and the count
// of correct rows. The loss sums the rows in order on one thread, as the CPU
// does, so that it does not vary from run to run.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/OwnKernelLaunch.cuh"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/LossMath.h"

#include <cmath>

namespace dpc::cuda {

namespace elements = kernels::elements;
namespace math = kernels::math;

namespace {

__device__ void storeScalar(void *y, ScalarType type, double value) {
  switch (type) {
  case ScalarType::F32:
    *static_cast<float *>(y) = static_cast<float>(value);
    break;
  case ScalarType::F64:
    *static_cast<double *>(y) = value;
    break;
  case ScalarType::I32:
    *static_cast<int32_t *>(y) = static_cast<int32_t>(value);
    break;
  case ScalarType::I64:
    *static_cast<int64_t *>(y) = static_cast<int64_t>(value);
    break;
  }
}

__global__ void softmaxForwardKernel(bool log, int64_t rows, int64_t cols,
                                     const float *x, float *y) {
  DPC_GRID_STRIDE(i, rows) {
    elements::softmaxRowForward(log, x + i * cols, cols, y + i * cols);
  }
}

__global__ void softmaxBackwardKernel(bool log, int64_t rows, int64_t cols,
                                      const float *y, const float *dy,
                                      float *dx) {
  DPC_GRID_STRIDE(i, rows) {
    elements::softmaxRowBackward(log, y + i * cols, dy + i * cols, cols,
                                 dx + i * cols);
  }
}

/// One block: each thread a row's loss term and hit at a time, and thread
/// 0 adding the terms in row order, as the CPU sums them (the same double
/// sum, bit for bit), a block's worth of rows at a time.
__global__ void crossEntropyForwardKernel(int64_t rows, int64_t classes,
                                          const float *logits,
                                          const int32_t *labels, float divisor,
                                          float *loss, void *correct,
                                          ScalarType correctType) {
  __shared__ float terms[kReduceBlock];
  __shared__ int hits[kReduceBlock];
  double sum = 0.0;
  int64_t total = 0;
  for (int64_t first = 0; first < rows; first += blockDim.x) {
    int64_t i = first + threadIdx.x;
    float term = 0.f;
    int hit = 0;
    if (i < rows) {
      const float *row = logits + i * classes;
      int32_t label = labels[i];
      if (label < 0 || label >= classes) {
        term = NAN;
      } else {
        if (loss)
          term =
              -math::logSoftmax(row[label], math::rowLogSumExp(row, classes));
        hit = math::rowArgMax(row, classes) == label;
      }
    }
    terms[threadIdx.x] = term;
    hits[threadIdx.x] = hit;
    __syncthreads();
    if (threadIdx.x == 0)
      for (int64_t k = 0; k < blockDim.x && first + k < rows; ++k) {
        sum += terms[k];
        total += hits[k];
      }
    __syncthreads();
  }
  if (threadIdx.x != 0)
    return;
  if (loss)
    *loss = static_cast<float>(sum / divisor);
  if (correct)
    storeScalar(correct, correctType, static_cast<double>(total));
}

__global__ void crossEntropyBackwardKernel(int64_t rows, int64_t classes,
                                           const float *logits,
                                           const int32_t *labels,
                                           const float *dLoss, float divisor,
                                           float *dLogits) {
  float g = (dLoss ? *dLoss : 1.f) / divisor;
  DPC_GRID_STRIDE(i, rows) {
    const float *row = logits + i * classes;
    float *dRow = dLogits + i * classes;
    int32_t label = labels[i];
    if (label >= 0 && label < classes) {
      math::crossEntropyRowGrad(row, classes, label, g, dRow);
    } else {
      for (int64_t j = 0; j < classes; ++j)
        dRow[j] = NAN;
    }
  }
}

} // namespace

void softmaxForward(cudaStream_t stream, int64_t rows, int64_t cols,
                    const float *x, float *y) {
  launch(stream, rows, softmaxForwardKernel, false, rows, cols, x, y);
}

void softmaxBackward(cudaStream_t stream, int64_t rows, int64_t cols,
                     const float *y, const float *dy, float *dx) {
  launch(stream, rows, softmaxBackwardKernel, false, rows, cols, y, dy, dx);
}

void logSoftmaxForward(cudaStream_t stream, int64_t rows, int64_t cols,
                       const float *x, float *y) {
  launch(stream, rows, softmaxForwardKernel, true, rows, cols, x, y);
}

void logSoftmaxBackward(cudaStream_t stream, int64_t rows, int64_t cols,
                        const float *y, const float *dy, float *dx) {
  launch(stream, rows, softmaxBackwardKernel, true, rows, cols, y, dy, dx);
}

void crossEntropyForward(cudaStream_t stream, int64_t rows, int64_t classes,
                         const float *logits, const int32_t *labels,
                         float divisor, float *loss, void *correct,
                         ScalarType correctType) {
  launchBlocks(stream, 1, crossEntropyForwardKernel, rows, classes, logits,
               labels, divisor, loss, correct, correctType);
}

void crossEntropyBackward(cudaStream_t stream, int64_t rows, int64_t classes,
                          const float *logits, const int32_t *labels,
                          const float *dLoss, float divisor, float *dLogits) {
  launch(stream, rows, crossEntropyBackwardKernel, rows, classes, logits,
         labels, dLoss, divisor, dLogits);
}

void correctCount(cudaStream_t stream, int64_t rows, int64_t classes,
                  const float *logits, const int32_t *labels, void *count,
                  ScalarType countType) {
  launchBlocks(stream, 1, crossEntropyForwardKernel, rows, classes, logits,
               labels, 1.f, static_cast<float *>(nullptr), count, countType);
}

//===----------------------------------------------------------------------===//
// nn.loss's kernels
//===----------------------------------------------------------------------===//

using plan::LossShape;
namespace loss = kernels::loss;

namespace {

__device__ double divisorOf(const LossShape &s, const float *divisor) {
  return divisor ? static_cast<double>(*divisor) : s.countDivisor;
}

/// One thread: the targets in order, as the CPU sums them.
__global__ void lossForwardKernel(LossShape s, const float *output,
                                  const void *target, const float *divisor,
                                  float *result) {
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  double sum = 0.0;
  if (s.isCrossEntropy()) {
    const auto *classes = static_cast<const int32_t *>(target);
    for (int64_t i = 0; i < s.targets(); ++i)
      sum +=
          loss::crossEntropy(s, output + loss::logitsOffset(s, i), classes[i]);
  } else {
    const auto *values = static_cast<const float *>(target);
    for (int64_t j = 0; j < s.elements; ++j)
      sum += loss::pointLoss(s, output[j], values[j], j);
  }
  *result = static_cast<float>(sum / divisorOf(s, divisor));
}

__global__ void lossBackwardKernel(LossShape s, const float *output,
                                   const void *target, const float *dLoss,
                                   const float *divisor, float *dOutput) {
  double scale = (dLoss ? *dLoss : 1.0) / divisorOf(s, divisor);
  if (s.isCrossEntropy()) {
    const auto *classes = static_cast<const int32_t *>(target);
    DPC_GRID_STRIDE(i, s.targets()) {
      int64_t at = loss::logitsOffset(s, i);
      loss::crossEntropyGrad(s, output + at, classes[i], scale, dOutput + at);
    }
    return;
  }
  const auto *values = static_cast<const float *>(target);
  DPC_GRID_STRIDE(j, s.elements) {
    dOutput[j] =
        static_cast<float>(scale * loss::pointGrad(s, output[j], values[j], j));
  }
}

__global__ void lossWeightKernel(LossShape s, const int32_t *targets,
                                 float *weight) {
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  double sum = 0.0;
  for (int64_t i = 0; i < s.targets(); ++i)
    sum += loss::targetWeight(s, targets[i]);
  *weight = static_cast<float>(sum);
}

__global__ void lossCorrectCountKernel(LossShape s, const float *logits,
                                       const int32_t *targets, void *count,
                                       ScalarType countType) {
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  int64_t correct = 0;
  for (int64_t i = 0; i < s.targets(); ++i)
    if (loss::isValidClass(s, targets[i]))
      correct +=
          loss::predicts(s, logits + loss::logitsOffset(s, i), targets[i]);
  storeScalar(count, countType, static_cast<double>(correct));
}

void launchOne(cudaStream_t stream,
               void (*kernel)(LossShape, const float *, const void *,
                              const float *, float *),
               const LossShape &s, const float *output, const void *target,
               const float *divisor, float *result) {
  kernel<<<1, 1, 0, stream>>>(s, output, target, divisor, result);
  DPC_CUDA_CHECK(cudaGetLastError());
}

} // namespace

void lossForward(cudaStream_t stream, const LossShape &s, const float *output,
                 const void *target, const float *divisor, float *loss) {
  launchOne(stream, lossForwardKernel, s, output, target, divisor, loss);
}

void lossBackward(cudaStream_t stream, const LossShape &s, const float *output,
                  const void *target, const float *dLoss, const float *divisor,
                  float *dOutput) {
  int64_t threads = s.targets();
  if (threads <= 0)
    return;
  int64_t blocks = std::min<int64_t>((threads + kBlock - 1) / kBlock, 1 << 20);
  lossBackwardKernel<<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(
      s, output, target, dLoss, divisor, dOutput);
  DPC_CUDA_CHECK(cudaGetLastError());
}

void lossWeight(cudaStream_t stream, const LossShape &s, const int32_t *targets,
                float *weight) {
  lossWeightKernel<<<1, 1, 0, stream>>>(s, targets, weight);
  DPC_CUDA_CHECK(cudaGetLastError());
}

void lossCorrectCount(cudaStream_t stream, const LossShape &s,
                      const float *logits, const int32_t *targets, void *count,
                      ScalarType countType) {
  lossCorrectCountKernel<<<1, 1, 0, stream>>>(s, logits, targets, count,
                                              countType);
  DPC_CUDA_CHECK(cudaGetLastError());
}

} // namespace dpc::cuda
