//===- LayerNorm.h - Layer normalization over rows --------------*- C++ -*-===//
//
// x is `rows` rows of `cols` elements (the dims before and from the
// normalized axis); scale and bias have `cols` elements. The math per row
// and per column is KernelElements.h's, shared with the CUDA kernels.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_LAYERNORM_H
#define DPC_RUNTIME_KERNELS_LAYERNORM_H

#include "runtime/abi/shapes/NormShapes.h"
#include "runtime/kernels/KernelElements.h"

#include <cstdint>

namespace dpc::kernels {

using plan::LayerNormShape;

/// `bias` may be null (no bias).
void layerNormForward(const LayerNormShape &s, const float *x,
                      const float *scale, const float *bias, float *y);

/// `stats` holds `rows` entries of scratch; `dBias` may be null.
void layerNormBackward(const LayerNormShape &s, const float *x, const float *dy,
                       const float *scale, elements::RowStats *stats, float *dx,
                       float *dScale, float *dBias);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_LAYERNORM_H
