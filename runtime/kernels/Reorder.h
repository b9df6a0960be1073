//===- Reorder.h - blocked channel layouts ----------------------*- C++ -*-===//
//
// nChw16c (oneDNN's aBcd16b): x [n, c, h, w] stored as [n, c / 16, h, w, 16],
// sixteen channels side by side, the layout the convolutions run in. c is a
// multiple of 16 (the plan gives no padded channels). Kernels that run in it
// treat each [h, w, 16] block of one sample as sixteen interleaved planes.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_REORDER_H
#define DPC_RUNTIME_KERNELS_REORDER_H

#include "runtime/abi/shapes/ShapeTypes.h"

#include <cstdint>

namespace dpc::kernels {

/// Channels per block of the blocked layout (the ABI's).
using plan::kChannelBlock;

/// y = x from plain [n, c, plane] to blocked [n, c / 16, plane, 16], or back
/// (`toBlocked` false).
void reorderChannels(int64_t n, int64_t c, int64_t plane, const float *x,
                     float *y, bool toBlocked);

/// One [plane, 16] block to sixteen planes [16, plane], and back.
inline void unpackBlock(const float *block, int64_t plane, float *planes) {
  for (int64_t j = 0; j < plane; ++j)
    for (int64_t l = 0; l < kChannelBlock; ++l)
      planes[l * plane + j] = block[j * kChannelBlock + l];
}
inline void packBlock(const float *planes, int64_t plane, float *block) {
  for (int64_t j = 0; j < plane; ++j)
    for (int64_t l = 0; l < kChannelBlock; ++l)
      block[j * kChannelBlock + l] = planes[l * plane + j];
}

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_REORDER_H
