//===- MemoryPlanner.cpp - offsets in one arena from liveness -------------===//

#include "codegen/MemoryPlanner.h"

#include <algorithm>
#include <numeric>

using namespace dpc;

MemoryPlan dpc::planMemory(llvm::ArrayRef<BufferLifetime> buffers,
                           int64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].first != buffers[b].first)
      return buffers[a].first < buffers[b].first;
    return buffers[a].size > buffers[b].size;
  });
  auto align = [&](int64_t bytes) {
    return (bytes + alignment - 1) / alignment * alignment;
  };

  // Buffers placed and still alive, kept sorted by offset.
  std::vector<size_t> live;
  for (size_t index : order) {
    const BufferLifetime &buffer = buffers[index];
    llvm::erase_if(
        live, [&](size_t other) { return buffers[other].last < buffer.first; });
    int64_t size = align(std::max<int64_t>(buffer.size, 1));
    int64_t offset = 0;
    auto insertAt = live.begin();
    for (auto it = live.begin(); it != live.end(); ++it) {
      int64_t otherOffset = plan.offsets[*it];
      if (otherOffset - offset >= size)
        break;
      offset = std::max(
          offset, otherOffset + align(std::max<int64_t>(buffers[*it].size, 1)));
      insertAt = it + 1;
    }
    plan.offsets[index] = offset;
    live.insert(insertAt, index);
    plan.peakBytes = std::max(plan.peakBytes, offset + size);
  }
  return plan;
}
