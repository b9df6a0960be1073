//===- PlanArena.cpp - offsets of a step's arena buffers ------------------===//
//
// Gives every exec.arena of every step its byte offset in the step's one
// arena, and the step its arena size: buffers whose lifetimes
// (BufferLiveness.h) overlap never share bytes, the others may. The
// planner is MemoryPlanner.h's first fit.
//
//===----------------------------------------------------------------------===//

#include "codegen/BufferLiveness.h"
#include "codegen/MemoryPlanner.h"
#include "codegen/Passes.h"
#include "ir/exec/ExecOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace dpc {
#define GEN_PASS_DEF_PLANEXECARENA
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;

namespace {

struct PlanExecArenaPass
    : public dpc::impl::PlanExecArenaBase<PlanExecArenaPass> {
  void runOnOperation() override {
    for (auto step : getOperation().getOps<ex::StepOp>()) {
      std::vector<ArenaLifetime> lifetimes = getArenaLifetimes(step);
      MemoryPlan plan = planArena(lifetimes);
      for (auto [lifetime, offset] : llvm::zip_equal(lifetimes, plan.offsets))
        lifetime.op.setOffset(offset);
      step.setArenaBytes(plan.peakBytes);
    }
  }
};

} // namespace
