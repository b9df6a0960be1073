//===- Softmax.cpp - Softmax and log-softmax over the last axis -----------===//

#include "runtime/kernels/Softmax.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Parallel.h"

#include <cmath>

namespace dpc::kernels {

void softmaxForward(int64_t rows, int64_t cols, const float *x, float *y) {
#pragma omp parallel for if (isWorthThreads(rows * cols, 8))
  for (int64_t i = 0; i < rows; ++i) {
    const float *in = x + i * cols;
    auto lse = math::rowLogSumExp(in, cols);
    for (int64_t j = 0; j < cols; ++j)
      y[i * cols + j] = std::exp(math::logSoftmax(in[j], lse));
  }
}

void softmaxBackward(int64_t rows, int64_t cols, const float *y,
                     const float *dy, float *dx) {
#pragma omp parallel for if (isWorthThreads(rows * cols, 8))
  for (int64_t i = 0; i < rows; ++i) {
    const float *yr = y + i * cols, *dyr = dy + i * cols;
    double dot = 0.0;
    for (int64_t j = 0; j < cols; ++j)
      dot += static_cast<double>(dyr[j]) * yr[j];
    float dotF = static_cast<float>(dot);
    for (int64_t j = 0; j < cols; ++j)
      dx[i * cols + j] = math::softmaxBackward(yr[j], dyr[j], dotF);
  }
}

void logSoftmaxForward(int64_t rows, int64_t cols, const float *x, float *y) {
#pragma omp parallel for if (isWorthThreads(rows * cols, 8))
  for (int64_t i = 0; i < rows; ++i) {
    const float *in = x + i * cols;
    auto lse = math::rowLogSumExp(in, cols);
    for (int64_t j = 0; j < cols; ++j)
      y[i * cols + j] = math::logSoftmax(in[j], lse);
  }
}

void logSoftmaxBackward(int64_t rows, int64_t cols, const float *y,
                        const float *dy, float *dx) {
#pragma omp parallel for if (isWorthThreads(rows * cols, 8))
  for (int64_t i = 0; i < rows; ++i) {
    const float *yr = y + i * cols, *dyr = dy + i * cols;
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j)
      sum += dyr[j];
    float sumF = static_cast<float>(sum);
    for (int64_t j = 0; j < cols; ++j)
      dx[i * cols + j] = math::logSoftmaxBackward(yr[j], dyr[j], sumF);
  }
}

} // namespace dpc::kernels
