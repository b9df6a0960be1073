//===- Conv.h - 2-D convolution kernels (oneDNN) ----------------*- C++ -*-===//
//
// Layout: x [n, c, h, w], weights [k, c/groups, r, s] (PyTorch's), bias [k],
// y [n, k, outH, outW]; plain row-major, except activations the shape marks
// blocked (nChw16c). Dilation 1 means dense.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_CONV_H
#define DPC_RUNTIME_KERNELS_CONV_H

#include "runtime/kernels/KernelContext.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Precision.h"

#include <cstdint>
#include <string>

namespace dpc::kernels {

/// How a convolution pass computes: oneDNN's direct algorithm, or Winograd
/// F(4x4, 3x3) (f32, 3x3, stride 1, AVX-512: 2.25x fewer multiplies; its
/// rounding error is 2-5x direct's, ~1e-6 of the output's range). A
/// Winograd call oneDNN has no kernel for on this CPU or shape runs direct.
enum class ConvAlgorithm : uint8_t { Direct, Winograd };

struct Conv2dShape {
  int64_t n, c, h, w; // input
  int64_t k, r, s;    // output channels, kernel height, kernel width
  int64_t strideH = 1, strideW = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int64_t dilationH = 1, dilationW = 1;
  int64_t groups = 1;
  /// The activations' layouts: x (dx) and y (dy) plain NCHW or nChw16c
  /// (Reorder.h). Weights and bias are plain.
  bool blockedX = false, blockedY = false;
  Precision precision = Precision::F32;
  ConvAlgorithm algorithm = ConvAlgorithm::Direct;
  /// Where dy's bf16 copy is shared between the backward passes (bf16
  /// only).
  CastSlot dyCast = {};

  int64_t outH() const {
    return math::convOutputSize(h, r, strideH, padTop, padBottom, dilationH);
  }
  int64_t outW() const {
    return math::convOutputSize(w, s, strideW, padLeft, padRight, dilationW);
  }
};

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
