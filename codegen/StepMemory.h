//===- StepMemory.h - a step's arena plan, without lowering --*- C++ -*-===//
//
// The lowering (convert-nn-to-exec) decides which tensors get arena
// buffers, which are views or updated in place; plan-exec-arena places
// them from their liveness (BufferLiveness.h), which the communication
// stream's waits (schedule-exec-streams) extend. planStepMemory runs that
// lowering and that scheduling alone (no report) into a scratch module and
// plans its arena with the same liveness and planner, leaving the step
// unchanged, so that the rematerialization pass, which the tools hand it
// to, measures memory exactly as the plan will use it.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_CODEGEN_STEPMEMORY_H
#define DPC_CODEGEN_STEPMEMORY_H

#include "ir/exec/ExecOps.h"
#include "passes/StepMemory.h"

namespace dpc {

/// The StepMemoryEstimator of the plan: every replica's arena as
/// convert-nn-to-exec, schedule-exec-streams and plan-exec-arena make it.
mlir::FailureOr<std::vector<ReplicaMemory>>
planStepMemory(mlir::func::FuncOp step);

/// schedule-exec-streams on one lowered step: its collectives on the
/// communication stream, and the events that order the two streams.
mlir::LogicalResult scheduleStepStreams(exec::StepOp step);

} // namespace dpc

#endif // DPC_CODEGEN_STEPMEMORY_H
