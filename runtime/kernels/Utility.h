//===- Utility.h - Buffer utilities for the trainer -------------*- C++ -*-===//

#ifndef DPC_RUNTIME_KERNELS_UTILITY_H
#define DPC_RUNTIME_KERNELS_UTILITY_H

#include <cstdint>

namespace dpc::kernels {

/// y[i] = value.
void fill(int64_t size, float value, float *y);
/// y[i] = x[i].
void copy(int64_t size, const float *x, float *y);
/// y[i] *= alpha.
void scale(int64_t size, float alpha, float *y);
/// y[i] += alpha * x[i].
void axpy(int64_t size, float alpha, const float *x, float *y);
/// y[i] += x[i] (gradient accumulation).
void accumulate(int64_t size, const float *x, float *y);
/// out[0] = sum of x, accumulated in double in a fixed order.
void sumReduce(int64_t size, const float *x, float *out);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_UTILITY_H
