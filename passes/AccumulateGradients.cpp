//===- AccumulateGradients.cpp - K micro-batches per optimizer step -------===//
//
// Clones @train_step into @accum_first and @accum_step, whose optimizer
// updates become gradient accumulations into per-parameter state, and makes
// @train_step update with the accumulated gradient plus its own. See the
// pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ir/nn/NNOps.h"
#include "ir/nn/StepNames.h"
#include "passes/OptimizerUpdates.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"

namespace dpc {
#define GEN_PASS_DEF_ACCUMULATEGRADIENTS
#include "passes/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc::nn;

namespace {

constexpr StringLiteral kGradAccumAttrName = "dpc.grad_accum";

/// An optimizer update and the accumulator argument added for it.
struct Update {
  Operation *op;
  BlockArgument accumulator;
};

/// Adds an accumulator argument (optimizer state `<param>.grad_accum`, which
/// starts at zero) for every optimizer update of `step`.
FailureOr<SmallVector<Update>> addAccumulators(func::FuncOp step) {
  SmallVector<Operation *> updates;
  step.walk([&](Operation *op) {
    if (dpc::getGradOperand(op))
      updates.push_back(op);
  });
  SmallVector<Update> result;
  MLIRContext *context = step.getContext();
  for (Operation *op : updates) {
    auto param = dyn_cast<BlockArgument>(op->getOperand(0));
    StringAttr name =
        param ? step.getArgAttrOfType<StringAttr>(param.getArgNumber(),
                                                  NNDialect::kParamAttrName)
              : StringAttr();
    if (!name)
      return op->emitError()
             << "updates a value that is not an nn.param argument";
    Value grad = dpc::getGradOperand(op)->get();
    NamedAttribute attr(
        StringAttr::get(context, NNDialect::kOptStateAttrName),
        StringAttr::get(context, name.getValue() + ".grad_accum"));
    unsigned index = step.getNumArguments();
    step.insertArgument(index, grad.getType(),
                        DictionaryAttr::get(context, attr), op->getLoc());
    result.push_back({op, step.getArgument(index)});
  }
  return result;
}

/// Turns a clone of @train_step into an accumulation step: each update
/// becomes an nn.accumulate of its gradient, returned as the accumulator's
/// new value; the updated parameters and optimizer state are no longer
/// results, and arguments left unused (lr, step, optimizer state) go.
LogicalResult makeAccumulationStep(func::FuncOp step, bool first) {
  FailureOr<SmallVector<Update>> updates = addAccumulators(step);
  if (failed(updates))
    return failure();
  MLIRContext *context = step.getContext();
  OpBuilder b(context);
  auto terminator = cast<func::ReturnOp>(step.front().getTerminator());
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  DenseSet<Operation *> updateOps;
  for (const Update &update : *updates)
    updateOps.insert(update.op);
  for (auto [i, value] : llvm::enumerate(terminator.getOperands())) {
    if (updateOps.contains(value.getDefiningOp()))
      continue;
    results.push_back(value);
    resultAttrs.push_back(step.getResultAttrDict(i));
  }
  for (const Update &update : *updates) {
    b.setInsertionPoint(update.op);
    Value grad = dpc::getGradOperand(update.op)->get();
    auto sum = b.create<AccumulateOp>(update.op->getLoc(), grad.getType(),
                                      update.accumulator, grad, first);
    results.push_back(sum);
    StringAttr name = step.getArgAttrOfType<StringAttr>(
        update.accumulator.getArgNumber(), NNDialect::kOptStateAttrName);
    resultAttrs.push_back(DictionaryAttr::get(
        context,
        NamedAttribute(
            StringAttr::get(context, NNDialect::kOptStateUpdateAttrName),
            name)));
  }
  b.setInsertionPoint(terminator);
  b.create<func::ReturnOp>(terminator.getLoc(), results);
  terminator.erase();
  for (const Update &update : *updates)
    update.op->erase();
  // What only the updates read (AdamW's step count feeds nothing else).
  IRRewriter rewriter(context);
  (void)runRegionDCE(rewriter, step.getBody());

  llvm::BitVector unused(step.getNumArguments());
  for (BlockArgument arg : step.getArguments())
    if (arg.use_empty())
      unused.set(arg.getArgNumber());
  step.eraseArguments(unused);
  step.setType(FunctionType::get(context, step.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  step.setAllResultAttrs(resultAttrs);
  return success();
}

/// @train_step updates with `accumulator + gradient`.
LogicalResult addAccumulatedGradients(func::FuncOp step) {
  FailureOr<SmallVector<Update>> updates = addAccumulators(step);
  if (failed(updates))
    return failure();
  OpBuilder b(step.getContext());
  for (const Update &update : *updates) {
    OpOperand *grad = dpc::getGradOperand(update.op);
    // Right where the gradient is complete, so that data parallelism
    // all-reduces it there, overlapping the rest of the backward pass, and
    // the updates still come after every gradient.
    b.setInsertionPointAfterValue(grad->get());
    grad->set(
        b.create<AddOp>(update.op->getLoc(), update.accumulator, grad->get()));
  }
  return success();
}

struct AccumulateGradientsPass
    : public dpc::impl::AccumulateGradientsBase<AccumulateGradientsPass> {
  using AccumulateGradientsBase::AccumulateGradientsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (gradAccum < 1) {
      module.emitError() << "grad-accum must be at least 1, got "
                         << static_cast<int64_t>(gradAccum);
      return signalPassFailure();
    }
    if (gradAccum == 1)
      return;
    auto train = module.lookupSymbol<func::FuncOp>(dpc::steps::kTrain);
    if (!train || train.isExternal()) {
      module.emitError() << "no @train_step to accumulate gradients in; run "
                            "nn-build-train-step first";
      return signalPassFailure();
    }
    if (module->hasAttr(kGradAccumAttrName)) {
      module.emitError() << "gradients are already accumulated";
      return signalPassFailure();
    }
    // Each micro-batch would divide by its own weight of valid targets, not
    // the update's.
    WalkResult weighted = train.walk([](dpc::nn::LossWeightOp op) {
      op.emitError() << "gradient accumulation of a loss that divides by the "
                        "weight of its valid targets (--ignore-index, "
                        "--class-weights) is not supported";
      return WalkResult::interrupt();
    });
    if (weighted.wasInterrupted())
      return signalPassFailure();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointAfter(train);
    for (auto [name, first] : {std::pair{dpc::steps::kAccumFirst, true},
                               std::pair{dpc::steps::kAccumStep, false}}) {
      auto clone = cast<func::FuncOp>(b.clone(*train));
      clone.setSymName(name);
      if (failed(makeAccumulationStep(clone, first)))
        return signalPassFailure();
    }
    if (failed(addAccumulatedGradients(train)))
      return signalPassFailure();
    module->setAttr(kGradAccumAttrName,
                    b.getI64IntegerAttr(static_cast<int64_t>(gradAccum)));
  }
};

} // namespace
