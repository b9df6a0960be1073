//===- Conv.h - 2-D and 3-D convolution kernels (oneDNN) --------*- C++ -*-===//
//
// Layout: x [n, c, h, w], weights [k, c/groups, r, s] (PyTorch's), bias [k],
// y [n, k, outH, outW]; plain row-major, except activations the shape marks
// blocked (nChw16c). Dilation 1 means dense. A 3-D convolution (the shape's
// spatialDims 3) has a depth before the height of x, weights and y, all
// plain.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_CONV_H
#define DPC_RUNTIME_KERNELS_CONV_H

#include "runtime/abi/shapes/ConvShapes.h"
#include "runtime/kernels/KernelContext.h"

#include <cstdint>
#include <string>

namespace dpc::kernels {

// The shape and algorithm of a call, and what it computes in, are the
// ABI's (runtime/abi/shapes/ConvShapes.h).
using plan::CastSlot;
using plan::Conv2dShape;
using plan::ConvAlgorithm;
using plan::Precision;

/// y = conv(x, w) + bias, and with `relu` max(y, 0) as oneDNN writes it (a
/// post-op). `bias` may be null.
void conv2dForward(KernelContext &ctx, const Conv2dShape &shape, const float *x,
                   const float *weights, const float *bias, float *y,
                   bool relu = false);

/// dx from dy and the weights (overwrites dx).
void conv2dBackwardData(KernelContext &ctx, const Conv2dShape &shape,
                        const float *dy, const float *weights, float *dx);

/// dWeights and, when non-null, dBias from x and dy (overwrites both).
void conv2dBackwardWeights(KernelContext &ctx, const Conv2dShape &shape,
                           const float *x, const float *dy, float *dWeights,
                           float *dBias);

/// The three passes of a convolution.
enum class ConvPass : uint8_t { Forward, BackwardData, BackwardWeights };

/// The name of the oneDNN implementation a pass of `shape` runs (e.g.
/// "jit_wino_4x3:avx512_core" or "jit:avx512_core"): whether a Winograd
/// call got a Winograd kernel, for tests and benchmarks. `relu`: the
/// forward with its ReLU post-op.
std::string conv2dImplementation(KernelContext &ctx, const Conv2dShape &shape,
                                 ConvPass pass, bool relu = false);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_CONV_H
