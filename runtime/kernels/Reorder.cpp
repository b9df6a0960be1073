//===- Reorder.cpp - blocked channel layouts ------------------------------===//

#include "runtime/kernels/Reorder.h"
#include "runtime/kernels/Parallel.h"

namespace dpc::kernels {

void reorderChannels(int64_t n, int64_t c, int64_t plane, const float *x,
                     float *y, bool toBlocked) {
  int64_t blocks = c / kChannelBlock, blockSize = plane * kChannelBlock;
#pragma omp parallel for if (isWorthThreads(n * c * plane))
  for (int64_t b = 0; b < n * blocks; ++b) {
    // Block b of the blocked tensor is sixteen consecutive planes of the
    // plain one.
    if (toBlocked)
      packBlock(x + b * blockSize, plane, y + b * blockSize);
    else
      unpackBlock(x + b * blockSize, plane, y + b * blockSize);
  }
}

} // namespace dpc::kernels
