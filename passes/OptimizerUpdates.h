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

/// The optimizer-state operands of an update (SGD's momentum buffer,
/// AdamW's exp_avg and exp_avg_sq), in operand order, each paired with the
/// result that is its new value; empty for any other op, and for SGD
/// without momentum. Every update is elementwise in its parameter, gradient
/// and state, so any element range of them can be updated on its own.
inline llvm::SmallVector<std::pair<mlir::OpOperand *, mlir::OpResult>>
getStateOperands(mlir::Operation *op) {
  llvm::SmallVector<std::pair<mlir::OpOperand *, mlir::OpResult>> states;
  if (auto sgd = llvm::dyn_cast<nn::SgdUpdateOp>(op)) {
    if (sgd.getMomentumBuffer())
      states.push_back(
          {&sgd.getMomentumBufferMutable()[0],
           llvm::cast<mlir::OpResult>(sgd.getNewMomentumBuffer())});
  } else if (auto adamw = llvm::dyn_cast<nn::AdamWUpdateOp>(op)) {
    states.push_back({&adamw.getExpAvgMutable(),
                      llvm::cast<mlir::OpResult>(adamw.getNewExpAvg())});
    states.push_back({&adamw.getExpAvgSqMutable(),
                      llvm::cast<mlir::OpResult>(adamw.getNewExpAvgSq())});
  }
  return states;
}

/// The parameter operand of an optimizer update, or null for any other op.
inline mlir::OpOperand *getParamOperand(mlir::Operation *op) {
  if (auto sgd = llvm::dyn_cast<nn::SgdUpdateOp>(op))
    return &sgd.getParamMutable();
  if (auto adamw = llvm::dyn_cast<nn::AdamWUpdateOp>(op))
    return &adamw.getParamMutable();
  return nullptr;
}

} // namespace dpc

#endif // DPC_PASSES_OPTIMIZERUPDATES_H
