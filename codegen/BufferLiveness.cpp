//===- BufferLiveness.cpp - arena buffers of a planned exec step ----------===//

#include "codegen/BufferLiveness.h"

#include <algorithm>

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;

int64_t dpc::getBufferBytes(Value buffer, int64_t batch) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t bytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  for (int64_t dim : ex::getBufferDims(buffer, batch))
    bytes *= dim;
  return bytes;
}

std::optional<std::pair<int64_t, int64_t>> dpc::getArenaBytes(Value buffer,
                                                              int64_t batch) {
  while (auto view = buffer.getDefiningOp<ex::ViewOp>())
    buffer = view.getSource();
  auto arena = buffer.getDefiningOp<ex::ArenaOp>();
  if (!arena)
    return std::nullopt;
  int64_t begin = static_cast<int64_t>(arena.getOffset());
  return std::make_pair(begin,
                        begin + getBufferBytes(arena.getBuffer(), batch));
}

ArenaLiveness::ArenaLiveness(ex::StepOp step)
    : batch(static_cast<int64_t>(step.getBatch())),
      arenaBytes(static_cast<int64_t>(step.getArenaBytes())) {
  Block &body = step.getBody().front();
  for (Operation &op : body)
    positions[&op] = static_cast<int64_t>(positions.size());
  int64_t end = static_cast<int64_t>(positions.size());
  for (auto arena : body.getOps<ex::ArenaOp>()) {
    auto bytes = dpc::getArenaBytes(arena.getBuffer(), batch);
    Interval interval{end, -1, bytes->first, bytes->second};
    SmallVector<Value> values = {arena.getBuffer()};
    while (!values.empty()) {
      Value value = values.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (auto view = dyn_cast<ex::ViewOp>(user)) {
          values.push_back(view.getBuffer());
          continue;
        }
        int64_t at = positions.lookup(user);
        interval.first = std::min(interval.first, at);
        interval.last =
            std::max(interval.last, isa<ex::KernelOp>(user) ? at : end);
      }
    }
    if (interval.first <= interval.last)
      intervals.push_back(interval);
  }
}

int64_t ArenaLiveness::placeAt(int64_t position, Value like) {
  int64_t size = getBufferBytes(like, batch);
  std::vector<std::pair<int64_t, int64_t>> taken;
  for (const Interval &interval : intervals)
    if (interval.first <= position && position <= interval.last)
      taken.push_back({interval.begin, interval.end});
  llvm::sort(taken);
  constexpr int64_t kAlignment = 64;
  int64_t offset = 0;
  for (auto [begin, end] : taken) {
    if (offset + size <= begin)
      break;
    offset = std::max(offset, (end + kAlignment - 1) / kAlignment * kAlignment);
  }
  intervals.push_back({position, position, offset, offset + size});
  arenaBytes = std::max(arenaBytes, offset + size);
  return offset;
}
