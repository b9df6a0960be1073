//===- WindowMath.h - the extent of a sliding window's output ---*- C++ -*-===//
//
// How many outputs a convolution or pooling window gives along one axis:
// the compiler's shape inference (ir/nn), the plan's shape checks
// (shapes/ConvShapes.h, shapes/PoolShapes.h) and the kernels all compute
// it here, so that they agree. Host and device code (HostDevice.h).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_WINDOWMATH_H
#define DPC_RUNTIME_ABI_WINDOWMATH_H

#include "runtime/abi/HostDevice.h"

#include <cstdint>

namespace dpc::plan {

/// Floor division for a possibly negative numerator and positive divisor.
DPC_HOST_DEVICE inline int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/// The largest extent, kernel, stride, padding or dilation a sliding
/// window takes: the sums and products below stay far from overflow.
constexpr int64_t kMaxWindowArgument = int64_t(1) << 31;

/// Whether a window's arguments along one axis are in range: a
/// non-negative extent and padding, a positive kernel, stride and dilation,
/// none above kMaxWindowArgument.
DPC_HOST_DEVICE inline bool
windowArgumentsInRange(int64_t in, int64_t kernel, int64_t stride,
                       int64_t padBegin, int64_t padEnd, int64_t dilation) {
  auto inRange = [](int64_t value, int64_t lowest) {
    return value >= lowest && value <= kMaxWindowArgument;
  };
  return inRange(in, 0) && inRange(kernel, 1) && inRange(stride, 1) &&
         inRange(padBegin, 0) && inRange(padEnd, 0) && inRange(dilation, 1);
}

/// Output extent of a convolution along one axis (dilation 1 = dense); -1
/// when the arguments are out of range (windowArgumentsInRange).
DPC_HOST_DEVICE inline int64_t convOutputSize(int64_t in, int64_t kernel,
                                              int64_t stride, int64_t padBegin,
                                              int64_t padEnd,
                                              int64_t dilation) {
  if (!windowArgumentsInRange(in, kernel, stride, padBegin, padEnd, dilation))
    return -1;
  return floorDiv(in + padBegin + padEnd - dilation * (kernel - 1) - 1,
                  stride) +
         1;
}

/// Output extent of a pooling window along one axis, PyTorch's rule
/// (pooling_output_shape), generalised to asymmetric padding: with ceil_mode,
/// a last window that would start inside the end padding is dropped. -1
/// when the arguments are out of range (windowArgumentsInRange).
DPC_HOST_DEVICE inline int64_t poolOutputSize(int64_t in, int64_t kernel,
                                              int64_t stride, int64_t padBegin,
                                              int64_t padEnd, int64_t dilation,
                                              bool ceilMode) {
  if (!windowArgumentsInRange(in, kernel, stride, padBegin, padEnd, dilation))
    return -1;
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1 +
                 (ceilMode ? stride - 1 : 0);
  int64_t out = floorDiv(span, stride) + 1;
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_WINDOWMATH_H
