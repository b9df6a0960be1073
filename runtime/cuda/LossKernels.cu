//===- LossKernels.cu - nn.loss's CUDA kernels ----------------------------===//

#include "runtime/cuda/CudaCheck.h"
#include "runtime/cuda/LossKernels.h"
#include "runtime/kernels/LossMath.h"

#include <algorithm>

namespace dpc::cuda {

using plan::LossShape;
namespace loss = kernels::loss;

namespace {

constexpr int kBlock = 256;

#define DPC_LOSS_GRID_STRIDE(i, n)                                             \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);    \
       i += int64_t(gridDim.x) * blockDim.x)

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
    DPC_LOSS_GRID_STRIDE(i, s.targets()) {
      int64_t at = loss::logitsOffset(s, i);
      loss::crossEntropyGrad(s, output + at, classes[i], scale, dOutput + at);
    }
    return;
  }
  const auto *values = static_cast<const float *>(target);
  DPC_LOSS_GRID_STRIDE(j, s.elements) {
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
  switch (countType) {
  case ScalarType::F32:
    *static_cast<float *>(count) = static_cast<float>(correct);
    break;
  case ScalarType::F64:
    *static_cast<double *>(count) = static_cast<double>(correct);
    break;
  case ScalarType::I32:
    *static_cast<int32_t *>(count) = static_cast<int32_t>(correct);
    break;
  case ScalarType::I64:
    *static_cast<int64_t *>(count) = correct;
    break;
  }
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
