//===- Softmax.h - Softmax and log-softmax over the last axis ---*- C++ -*-===//
//
// x, y [rows, cols]; the reduction runs along cols. Backward takes the
// forward output y.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_SOFTMAX_H
#define DPC_RUNTIME_KERNELS_SOFTMAX_H

#include <cstdint>

namespace dpc::kernels {

void softmaxForward(int64_t rows, int64_t cols, const float *x, float *y);
/// dx = y * (dy - sum(dy * y)).
void softmaxBackward(int64_t rows, int64_t cols, const float *y,
                     const float *dy, float *dx);
void logSoftmaxForward(int64_t rows, int64_t cols, const float *x, float *y);
/// dx = dy - exp(y) * sum(dy).
void logSoftmaxBackward(int64_t rows, int64_t cols, const float *y,
                        const float *dy, float *dx);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_SOFTMAX_H
