//===- ConvShapes.h - a convolution call's shape ----------------*- C++ -*-===//
//
// Layout: x [n, c, h, w], weights [k, c/groups, r, s] (PyTorch's), bias [k],
// y [n, k, outH, outW]; plain row-major, except activations the shape marks
// blocked (nChw16c). Dilation 1 means dense. Conv2dAttrs give stride,
// padding ([top, left, bottom, right], [h, w] or empty), dilation and groups.
// A 3-D convolution has a depth before the height in every tensor (x
// [n, c, d, h, w], weights [k, c/groups, t, r, s]) and attribute (stride
// [d, h, w], padding [front, top, left, back, bottom, right] or [d, h, w]);
// its tensors are plain. A 2-D one is the 3-D one of depth 1.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_SHAPES_CONVSHAPES_H
#define DPC_RUNTIME_ABI_SHAPES_CONVSHAPES_H

#include "runtime/abi/Precision.h"
#include "runtime/abi/WindowMath.h"
#include "runtime/abi/shapes/ShapeTypes.h"

#include <array>
#include <cstdint>

namespace dpc::plan {

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
  /// (runtime/kernels/Reorder.h). Weights and bias are plain.
  bool blockedX = false, blockedY = false;
  Precision precision = Precision::F32;
  ConvAlgorithm algorithm = ConvAlgorithm::Direct;
  /// Where dy's bf16 copy is shared between the backward passes (bf16
  /// only).
  CastSlot dyCast = {};
  /// 2, or 3 for a volumetric convolution, whose depth follows (input
  /// depth, kernel depth, stride, front and back padding, dilation; in 2-D
  /// the unit values, so that every formula holds for both).
  int spatialDims = 2;
  int64_t d = 1, t = 1;
  int64_t strideD = 1, padFront = 0, padBack = 0, dilationD = 1;

  int64_t outD() const {
    return convOutputSize(d, t, strideD, padFront, padBack, dilationD);
  }

  int64_t outH() const {
    return convOutputSize(h, r, strideH, padTop, padBottom, dilationH);
  }
  int64_t outW() const {
    return convOutputSize(w, s, strideW, padLeft, padRight, dilationW);
  }
};

/// Every field of `s` that changes what a convolution computes (its
/// geometry, groups and precision; not its layouts, algorithm or cast
/// slot): what each backend keys its cached convolution plans by, with
/// what else its plans depend on.
std::array<int64_t, 24> getConvGeometryKey(const Conv2dShape &s);

/// Conv2dForward, Conv2dReluForward, Conv2dBackwardData and
/// Conv2dBackwardWeights, checked, with the call's precision and algorithm.
Conv2dShape getConv2dShape(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_CONVSHAPES_H
