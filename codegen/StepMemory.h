//===- StepMemory.h - a step's arena plan, without lowering --*- C++ -*-===//
//
// The lowering (convert-nn-to-exec) decides which tensors get arena
// buffers, which are views or updated in place; plan-exec-arena places
// them from their liveness (BufferLiveness.h). planStepMemory runs that
// lowering alone (no scheduling, no report) into a scratch module and plans
// its arena with the same liveness and planner, leaving the step unchanged,
// so that the rematerialization pass measures memory exactly as the plan
// will use it. Positions are those of the lowered exec step.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_CODEGEN_STEPMEMORY_H
#define DPC_CODEGEN_STEPMEMORY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace dpc {

/// One arena buffer: the value that allocated it first, then its views and
/// the values updated in place in it; live over program positions
/// [first, last] (positions are the step's ops in order, from 0).
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

/// Plans the arena of every replica of `step` (@train_step or @eval_step,
/// partitioned or not) as the lowering would, leaving `step` unchanged.
mlir::FailureOr<std::vector<ReplicaMemory>>
planStepMemory(mlir::func::FuncOp step);

} // namespace dpc

#endif // DPC_CODEGEN_STEPMEMORY_H
