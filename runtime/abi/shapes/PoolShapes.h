//===- PoolShapes.h - pooling and padding shapes ----------------*- C++ -*-===//
//
// PyTorch semantics on x [n, c, h, w], y [n, c, outH, outW]. Pool2dAttrs:
// `stride` defaults to `kernel`; `padding` is empty, [h, w] (symmetric) or
// [top, left, bottom, right]; `dilation` empty or [h, w]. PadAttrs low/high
// are [h, w] or all four dims [n, c, h, w] (n, c = 0).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_SHAPES_POOLSHAPES_H
#define DPC_RUNTIME_ABI_SHAPES_POOLSHAPES_H

#include "runtime/abi/HostDevice.h"
#include "runtime/abi/WindowMath.h"
#include "runtime/abi/shapes/ShapeTypes.h"

#include <cstdint>

namespace dpc::plan {

struct Pool2dShape {
  int64_t n, c, h, w;
  int64_t kernelH, kernelW;
  int64_t strideH, strideW;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int64_t dilationH = 1, dilationW = 1; // max pooling only; 1 = dense
  bool ceilMode = false;
  bool countIncludePad = true; // average pooling only (PyTorch's default)
  /// 1: plain NCHW; kChannelBlock: every tensor is nChw16c.
  int64_t channelBlock = 1;

  DPC_HOST_DEVICE int64_t outH() const {
    return poolOutputSize(h, kernelH, strideH, padTop, padBottom, dilationH,
                          ceilMode);
  }
  DPC_HOST_DEVICE int64_t outW() const {
    return poolOutputSize(w, kernelW, strideW, padLeft, padRight, dilationW,
                          ceilMode);
  }
};

/// Constant spatial padding of x [n, c, h, w] into
/// y [n, c, h + padTop + padBottom, w + padLeft + padRight]. Pads are >= 0.
struct Pad2dShape {
  int64_t n, c, h, w;
  int64_t padTop, padLeft, padBottom, padRight;
  DPC_HOST_DEVICE int64_t outH() const { return h + padTop + padBottom; }
  DPC_HOST_DEVICE int64_t outW() const { return w + padLeft + padRight; }
};

/// Max and average pooling, forward and backward, checked.
Pool2dShape getPool2dShape(const KernelCall &call);
/// GlobalAvgPool2dForward/Backward: x (dx) [n, c, h, w], y (dy) [n, c].
Nchw getGlobalAvgPoolShape(const KernelCall &call);
/// PadForward/Backward, checked; the fill value is KernelAttrs.h's.
Pad2dShape getPad2dShape(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_POOLSHAPES_H
