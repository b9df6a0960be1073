//===- Passes.h - dpc passes ------------------------------------*- C++ -*-===//

#ifndef DPC_PASSES_PASSES_H
#define DPC_PASSES_PASSES_H

#include "passes/StepMemory.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace dpc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Recomputes the result types of the nn ops in `func` in order and updates
/// the function's result types. Fails (with a diagnostic) if an op rejects
/// its new operand types.
mlir::LogicalResult inferShapes(mlir::func::FuncOp func);

/// dpc-rematerialize with the memory estimate budget=SIZE measures
/// candidates with (codegen's planStepMemory, handed in by the tools);
/// created without one, budget=SIZE is refused.
std::unique_ptr<mlir::Pass>
createRematerialize(const RematerializeOptions &options,
                    StepMemoryEstimator estimateMemory);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace dpc

#endif // DPC_PASSES_PASSES_H
