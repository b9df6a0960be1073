//===- StepNames.h - the functions the training passes build ----*- C++ -*-===//
//
// nn-build-train-step turns @forward into @train_step and @eval_step, and
// dpc-accumulate-gradients adds @accum_first and @accum_step; the passes
// after them and the lowering find the steps by these names (the plan then
// carries each step's typed role, runtime/plan/Plan.fbs's StepRole).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_IR_NN_STEPNAMES_H
#define DPC_IR_NN_STEPNAMES_H

#include "llvm/ADT/StringRef.h"

namespace dpc::steps {

constexpr llvm::StringLiteral kForward = "forward";
constexpr llvm::StringLiteral kTrain = "train_step";
constexpr llvm::StringLiteral kEval = "eval_step";
/// --grad-accum's micro-steps: the first zeroes the accumulators.
constexpr llvm::StringLiteral kAccumFirst = "accum_first";
constexpr llvm::StringLiteral kAccumStep = "accum_step";

/// The steps that differentiate the model (and may recompute).
constexpr llvm::StringLiteral kTrainingSteps[] = {kTrain, kAccumFirst,
                                                  kAccumStep};
/// Every step that runs on the devices, in the order they are lowered.
constexpr llvm::StringLiteral kDeviceSteps[] = {kTrain, kAccumFirst,
                                                kAccumStep, kEval};

} // namespace dpc::steps

#endif // DPC_IR_NN_STEPNAMES_H
