//===- BufferLiveness.cpp - arena buffers of a planned exec step ----------===//

#include "codegen/BufferLiveness.h"

#include <algorithm>
#include <map>

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
  auto arena = ex::getRootBuffer(buffer).getDefiningOp<ex::ArenaOp>();
  if (!arena)
    return std::nullopt;
  int64_t begin = static_cast<int64_t>(arena.getOffset());
  return std::make_pair(begin,
                        begin + getBufferBytes(arena.getBuffer(), batch));
}

std::vector<ArenaLifetime> dpc::getArenaLifetimes(ex::StepOp step) {
  int64_t batch = static_cast<int64_t>(step.getBatch());
  Block &body = step.getBody().front();
  DenseMap<Operation *, int64_t> positions;
  for (Operation &op : body)
    positions[&op] = static_cast<int64_t>(positions.size());
  int64_t end = static_cast<int64_t>(positions.size());
  // A kernel on another stream than the compute stream (a collective) is
  // done only where a compute kernel waits for what it signals (the end
  // when none does): its buffers live until then, or the compute stream
  // could reuse them while it still runs.
  DenseMap<Operation *, int64_t> doneAt;
  DenseMap<int64_t, Operation *> signaledBy;
  for (auto kernel : body.getOps<ex::KernelOp>()) {
    if (kernel.getStream().value_or(0) != 0) {
      doneAt[kernel] = end;
      if (std::optional<ArrayRef<int64_t>> signals = kernel.getSignal())
        for (int64_t event : *signals)
          signaledBy[event] = kernel;
      continue;
    }
    if (std::optional<ArrayRef<int64_t>> waits = kernel.getWait())
      for (int64_t event : *waits)
        if (Operation *side = signaledBy.lookup(event))
          doneAt[side] = std::min(doneAt[side], positions.lookup(kernel));
  }
  std::vector<ArenaLifetime> lifetimes;
  for (auto arena : body.getOps<ex::ArenaOp>()) {
    ArenaLifetime lifetime{arena, getBufferBytes(arena.getBuffer(), batch), end,
                           -1, true};
    SmallVector<Value> values = {arena.getBuffer()};
    while (!values.empty()) {
      Value value = values.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (auto view = dyn_cast<ex::ViewOp>(user)) {
          values.push_back(view.getBuffer());
          continue;
        }
        int64_t at = positions.lookup(user);
        lifetime.first = std::min(lifetime.first, at);
        int64_t until = !isa<ex::KernelOp>(user) ? end
                        : doneAt.count(user)     ? doneAt.lookup(user)
                                                 : at;
        lifetime.last = std::max(lifetime.last, until);
      }
    }
    if (lifetime.first > lifetime.last) {
      lifetime.first = lifetime.last = positions.lookup(arena);
      lifetime.used = false;
    }
    lifetimes.push_back(lifetime);
  }
  return lifetimes;
}

std::pair<int64_t, int64_t>
dpc::getLivePeak(ArrayRef<ArenaLifetime> lifetimes) {
  // +bytes where a buffer's life begins, -bytes just after it ends.
  std::map<int64_t, int64_t> delta;
  for (const ArenaLifetime &lifetime : lifetimes) {
    delta[lifetime.first] += lifetime.bytes;
    delta[lifetime.last + 1] -= lifetime.bytes;
  }
  int64_t live = 0, peakPosition = 0, peakBytes = 0;
  for (auto [position, change] : delta) {
    live += change;
    if (live > peakBytes) {
      peakBytes = live;
      peakPosition = position;
    }
  }
  return {peakPosition, peakBytes};
}

MemoryPlan dpc::planArena(ArrayRef<ArenaLifetime> lifetimes) {
  std::vector<BufferLifetime> buffers;
  for (const ArenaLifetime &lifetime : lifetimes)
    buffers.push_back({lifetime.bytes, lifetime.first, lifetime.last});
  return planMemory(buffers);
}

ArenaLiveness::ArenaLiveness(ex::StepOp step)
    : batch(static_cast<int64_t>(step.getBatch())),
      arenaBytes(static_cast<int64_t>(step.getArenaBytes())) {
  for (Operation &op : step.getBody().front())
    positions[&op] = static_cast<int64_t>(positions.size());
  for (ArenaLifetime &lifetime : getArenaLifetimes(step)) {
    // Buffers nothing uses any more (a fusion dropped their kernel) free
    // their bytes.
    if (!lifetime.used)
      continue;
    auto bytes = dpc::getArenaBytes(lifetime.op.getBuffer(), batch);
    intervals.push_back(
        {lifetime.first, lifetime.last, bytes->first, bytes->second});
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
