//===- Utility.cpp - Buffer utilities for the trainer ---------------------===//

#include "runtime/kernels/Utility.h"
#include "runtime/kernels/Parallel.h"

#include <algorithm>

namespace dpc::kernels {

void fill(int64_t size, float value, float *y) {
  std::fill(y, y + size, value);
}

void copy(int64_t size, const float *x, float *y) {
  if (x != y)
    std::copy(x, x + size, y);
}

void scale(int64_t size, float alpha, float *y) {
  forRange(size, 1, [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i)
      y[i] *= alpha;
  });
}

void axpy(int64_t size, float alpha, const float *x, float *y) {
  forRange(size, 1, [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i)
      y[i] += alpha * x[i];
  });
}

void accumulate(int64_t size, const float *x, float *y) {
  forRange(size, 1, [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i)
      y[i] += x[i];
  });
}

void sumReduce(int64_t size, const float *x, float *out) {
  // Fixed-size chunks summed in parallel, then combined in order: the result
  // does not depend on the number of threads.
  constexpr int64_t chunk = 4096;
  int64_t numChunks = (size + chunk - 1) / chunk;
  double total = 0.0;
#pragma omp parallel for ordered if (isWorthThreads(size))
  for (int64_t c = 0; c < numChunks; ++c) {
    double partial = 0.0;
    int64_t end = std::min(size, (c + 1) * chunk);
    for (int64_t i = c * chunk; i < end; ++i)
      partial += x[i];
#pragma omp ordered
    total += partial;
  }
  *out = static_cast<float>(total);
}

} // namespace dpc::kernels
