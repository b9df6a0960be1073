//===- Passes.h - dpc passes ------------------------------------*- C++ -*-===//

#ifndef DPC_PASSES_PASSES_H
#define DPC_PASSES_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace dpc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Recomputes the result types of the nn ops in `func` in order and updates
/// the function's result types. Fails (with a diagnostic) if an op rejects
/// its new operand types.
mlir::LogicalResult inferShapes(mlir::func::FuncOp func);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace dpc

#endif // DPC_PASSES_PASSES_H
