//===- OptimizerUpdates.h - what the passes ask of an update ----*- C++ -*-===//

#ifndef DPC_PASSES_OPTIMIZERUPDATES_H
#define DPC_PASSES_OPTIMIZERUPDATES_H

#include "ir/nn/NNOps.h"

namespace dpc {

/// The gradient operand of an optimizer update, or null for any other op.
inline mlir::OpOperand *getGradOperand(mlir::Operation *op) {
  if (auto sgd = llvm::dyn_cast<nn::SgdUpdateOp>(op))
    return &sgd.getGradMutable();
  if (auto adamw = llvm::dyn_cast<nn::AdamWUpdateOp>(op))
    return &adamw.getGradMutable();
  return nullptr;
}

} // namespace dpc

#endif // DPC_PASSES_OPTIMIZERUPDATES_H
