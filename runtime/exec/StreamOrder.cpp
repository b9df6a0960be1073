//===- StreamOrder.cpp - what a step's streams run before what ------------===//
//
// Vector clocks over the enqueue order: a stream's clock holds, per stream,
// the last instruction known complete; a wait merges in the clock its
// event was recorded with; an instruction starts with its stream's clock.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/StreamOrder.h"

#include <algorithm>

namespace dpc::rt {

StreamOrder::StreamOrder(const plan::Step &step,
                         const std::vector<std::pair<int, int>> &order)
    : step(step), order(order) {
  size_t numStreams = step.streams() ? step.streams()->size() : 0;
  std::vector<std::vector<int>> clocks(numStreams,
                                       std::vector<int>(numStreams, -1));
  std::vector<std::vector<int>> events;
  startClock.reserve(order.size());
  for (auto [s, i] : order) {
    const plan::Instruction &instruction =
        *step.streams()->Get(s)->instructions()->Get(i);
    std::vector<int> &clock = clocks[s];
    if (const auto *waits = instruction.wait_events())
      for (int e : *waits)
        if (e >= 0 && size_t(e) < events.size())
          for (size_t t = 0; t < numStreams; ++t)
            clock[t] = std::max(clock[t], events[e][t]);
    startClock.push_back(clock);
    clock[s] = i;
    if (const auto *signals = instruction.signal_events())
      for (int e : *signals) {
        if (e < 0)
          continue;
        if (size_t(e) >= events.size())
          events.resize(e + 1, std::vector<int>(numStreams, -1));
        events[e] = clock;
      }
  }
}

bool StreamOrder::precedes(size_t before, size_t after) const {
  auto [s, i] = order.at(before);
  return startClock.at(after)[s] >= i;
}

std::vector<size_t> StreamOrder::findWriters(int tensor) const {
  // Writing a view of the tensor's storage, or the storage a view of it
  // shows, writes it too.
  const auto *tensors = step.tensors();
  auto rootOf = [&](int t) {
    for (int hops = 0; tensors && t >= 0 && t < int(tensors->size()) &&
                       tensors->Get(t)->storage() == plan::Storage::Alias &&
                       hops < int(tensors->size());
         ++hops)
      t = tensors->Get(t)->alias();
    return t;
  };
  int root = rootOf(tensor);
  auto touches = [&](int t) { return t >= 0 && rootOf(t) == root; };
  std::vector<size_t> writers;
  for (size_t c = 0; c < order.size(); ++c) {
    auto [s, i] = order[c];
    const plan::Instruction &instruction =
        *step.streams()->Get(s)->instructions()->Get(i);
    bool writes = touches(instruction.workspace());
    if (const auto *results = instruction.results())
      for (int t : *results)
        writes |= touches(t);
    if (writes)
      writers.push_back(c);
  }
  return writers;
}

} // namespace dpc::rt
