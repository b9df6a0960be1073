//===- StepMemory.h - a step's planned arena, as remat sees it --*- C++ -*-===//
//
// What rematerialization's budget search needs to know of a step's memory:
// every replica's planned arena, its peak, and which nn values each arena
// buffer holds. The back end computes it (codegen/StepMemory.h:
// planStepMemory, the lowering alone and the arena planner), and the tools
// that build pass pipelines hand it to the pass (createRematerialize), so
// that passes/ does not depend on codegen/.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_PASSES_STEPMEMORY_H
#define DPC_PASSES_STEPMEMORY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace dpc {

/// One arena buffer: the value that allocated it first, then its views and
/// the values updated in place in it (none for a kernel's workspace); live
/// over program positions [first, last] of the lowered step.
struct PlannedBuffer {
  llvm::SmallVector<mlir::Value, 2> values;
  int64_t bytes = 0;
  int64_t first = 0;
  int64_t last = 0;
  bool liveAt(int64_t position) const {
    return first <= position && position <= last;
  }
};

/// The arena of one replica of a step.
struct ReplicaMemory {
  int64_t replica = 0;
  /// The planned arena (offsets by first fit: at least the live bytes).
  int64_t arenaBytes = 0;
  /// The position where the most bytes are alive, and how many.
  int64_t peakPosition = 0;
  int64_t liveBytesAtPeak = 0;
  std::vector<PlannedBuffer> buffers;
};

/// Plans the arena of every replica of a step (@train_step or @eval_step,
/// partitioned or not) as the plan will have it, leaving the step unchanged.
using StepMemoryEstimator =
    std::function<mlir::FailureOr<std::vector<ReplicaMemory>>(
        mlir::func::FuncOp step)>;

} // namespace dpc

#endif // DPC_PASSES_STEPMEMORY_H
