//===- StreamOrder.h - what a step's streams run before what ----*- C++ -*-===//
//
// A step's instructions run on several streams, ordered by stream order and
// by events (an instruction waits for the last record of an event enqueued
// before it). Enqueued in the plan's order, this is a happens-before
// relation the executor can ask about ahead of a run: e.g. whether a
// collective on the communication stream starts only after the kernels
// that write the step's loss.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_STREAMORDER_H
#define DPC_RUNTIME_EXEC_STREAMORDER_H

#include "runtime/plan/Plan_generated.h"

#include <utility>
#include <vector>

namespace dpc::rt {

/// The happens-before relation of one step's instructions.
class StreamOrder {
public:
  /// `order`: (stream, instruction) pairs in the order they are enqueued.
  StreamOrder(const plan::Step &step,
              const std::vector<std::pair<int, int>> &order);

  /// Whether instruction `before` (an index into `order`) completes before
  /// instruction `after` starts, whatever the streams' timing.
  bool precedes(size_t before, size_t after) const;

  /// The indices into `order` of the instructions that write `tensor` (as
  /// a result or workspace; through a view of its storage too).
  std::vector<size_t> findWriters(int tensor) const;

private:
  const plan::Step &step;
  std::vector<std::pair<int, int>> order;
  /// Per instruction: for every stream, the last instruction of that stream
  /// (its index in the stream, -1 none) known complete when it starts.
  std::vector<std::vector<int>> startClock;
};

} // namespace dpc::rt

#endif // DPC_RUNTIME_EXEC_STREAMORDER_H
