//===- NormShapes.h - batch and layer normalization shapes ------*- C++ -*-===//
//
// Batch norm takes x of rank 2 [n, c], 3 [n, c, l] or 4 [n, c, h, w], with
// per-channel scale, shift and statistics [c]. Layer norm takes x as rows
// (the dims before `axis`, batch first) of cols (the dims from `axis` on).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_SHAPES_NORMSHAPES_H
#define DPC_RUNTIME_ABI_SHAPES_NORMSHAPES_H

#include "runtime/abi/shapes/ShapeTypes.h"

#include <cstdint>

namespace dpc::plan {

struct BatchNormShape {
  int64_t n, c, h, w;
  /// 1: plain NCHW; kChannelBlock: x, y, dy and dx are nChw16c.
  int64_t channelBlock = 1;
};

struct BatchNormParams {
  float eps = 1e-5f;
  float momentum = 0.1f; // PyTorch's: running = (1-m)*running + m*batch
};

struct LayerNormShape {
  int64_t rows = 0, cols = 0;
  double epsilon = 1e-5;
};

/// What LayerNormBackward's workspace holds per row: the row's mean and
/// inverse standard deviation, recomputed as the forward computed them.
struct RowStats {
  float mean, invStd;
};

/// Every batch-norm kernel (training, inference, synchronized, fused with
/// ReLU), checked; BatchNormParams come from KernelAttrs.h.
BatchNormShape getBatchNormShape(const KernelCall &call);

/// LayerNormForward/Backward, checked; the backward's workspace holds a
/// RowStats per row.
LayerNormShape getLayerNormShape(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_NORMSHAPES_H
