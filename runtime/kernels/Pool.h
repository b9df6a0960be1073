//===- Pool.h - Pooling kernels ---------------------------------*- C++ -*-===//
//
// PyTorch semantics (max_pool2d, avg_pool2d, adaptive_avg_pool2d(1)) on
// x [n, c, h, w], y [n, c, outH, outW], with asymmetric padding allowed.
// Backward passes scatter-add into dx, so overlapping windows accumulate.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_POOL_H
#define DPC_RUNTIME_KERNELS_POOL_H

#include "runtime/abi/shapes/PoolShapes.h"

#include <cstdint>

namespace dpc::kernels {

using plan::Pool2dShape;

/// Padding never wins the max (it is -inf); NaN propagates like PyTorch.
void maxPool2dForward(const Pool2dShape &shape, const float *x, float *y);
/// Routes each dy to the first maximum of its window, recomputed from x
/// (no index buffer); overwrites dx.
void maxPool2dBackward(const Pool2dShape &shape, const float *x,
                       const float *dy, float *dx);

/// Requires dilation 1.
void avgPool2dForward(const Pool2dShape &shape, const float *x, float *y);
void avgPool2dBackward(const Pool2dShape &shape, const float *dy, float *dx);

/// y [n, c] = mean over h*w of x [n, c, h, w]; `blocked`: x (dx) is
/// nChw16c, y (dy) plain all the same.
void globalAvgPool2dForward(int64_t n, int64_t c, int64_t h, int64_t w,
                            const float *x, float *y, bool blocked = false);
void globalAvgPool2dBackward(int64_t n, int64_t c, int64_t h, int64_t w,
                             const float *dy, float *dx, bool blocked = false);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_POOL_H
