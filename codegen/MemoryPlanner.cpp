//===- MemoryPlanner.cpp - offsets in one arena from liveness -------------===//

#include "codegen/MemoryPlanner.h"

#include <algorithm>
#include <numeric>

using namespace dpc;

namespace {

/// Places the buffers one by one in `order`, each at the lowest aligned
/// offset where it overlaps no placed buffer alive at the same time.
MemoryPlan placeInOrder(llvm::ArrayRef<BufferLifetime> buffers,
                        llvm::ArrayRef<size_t> order, int64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  auto align = [&](int64_t bytes) {
    return (bytes + alignment - 1) / alignment * alignment;
  };
  auto sizeOf = [&](size_t index) {
    return align(std::max<int64_t>(buffers[index].size, 1));
  };
  // Placed buffers, sorted by offset.
  std::vector<size_t> placed;
  for (size_t index : order) {
    const BufferLifetime &buffer = buffers[index];
    int64_t size = sizeOf(index);
    int64_t offset = 0;
    for (size_t other : placed) {
      const BufferLifetime &o = buffers[other];
      if (o.last < buffer.first || buffer.last < o.first)
        continue; // never alive together
      if (plan.offsets[other] - offset >= size)
        break;
      offset = std::max(offset, plan.offsets[other] + sizeOf(other));
    }
    plan.offsets[index] = offset;
    placed.insert(std::upper_bound(placed.begin(), placed.end(), offset,
                                   [&](int64_t value, size_t other) {
                                     return value < plan.offsets[other];
                                   }),
                  index);
    plan.peakBytes = std::max(plan.peakBytes, offset + size);
  }
  return plan;
}

} // namespace

MemoryPlan dpc::planMemory(llvm::ArrayRef<BufferLifetime> buffers,
                           int64_t alignment) {
  std::vector<size_t> byFirstWrite(buffers.size());
  std::iota(byFirstWrite.begin(), byFirstWrite.end(), 0);
  std::vector<size_t> bySize = byFirstWrite;
  std::stable_sort(byFirstWrite.begin(), byFirstWrite.end(),
                   [&](size_t a, size_t b) {
                     if (buffers[a].first != buffers[b].first)
                       return buffers[a].first < buffers[b].first;
                     return buffers[a].size > buffers[b].size;
                   });
  std::stable_sort(bySize.begin(), bySize.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].first < buffers[b].first;
  });
  // Two greedy orders; the smaller arena wins. In order of first write
  // suits steps whose buffers die in reverse order; largest first (as
  // TFLite's arena planner) packs the short-lived buffers of a
  // rematerialized backward pass around the long-lived ones.
  MemoryPlan firstFit = placeInOrder(buffers, byFirstWrite, alignment);
  MemoryPlan largestFirst = placeInOrder(buffers, bySize, alignment);
  return largestFirst.peakBytes < firstFit.peakBytes ? largestFirst : firstFit;
}
