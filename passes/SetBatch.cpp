//===- SetBatch.cpp - fix the batch dimension of the data inputs ----------===//

#include "ir/nn/NNDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinTypes.h"

namespace dpc {
#define GEN_PASS_DEF_NNSETBATCH
#include "passes/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using dpc::nn::NNDialect;

namespace {
struct NNSetBatchPass : public dpc::impl::NNSetBatchBase<NNSetBatchPass> {
  using NNSetBatchBase::NNSetBatchBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (batch <= 0) {
      func.emitError() << "batch size must be > 0, got " << batch.getValue();
      return signalPassFailure();
    }
    for (BlockArgument arg : func.getArguments()) {
      if (!func.getArgAttr(arg.getArgNumber(), NNDialect::kInputAttrName) &&
          !func.getArgAttr(arg.getArgNumber(), NNDialect::kLabelsAttrName))
        continue;
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() == 0) {
        func.emitError() << "data input " << arg.getArgNumber()
                         << " has no batch dimension: " << arg.getType();
        return signalPassFailure();
      }
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = batch;
      arg.setType(type.clone(shape));
    }
    if (func.isExternal())
      return;
    func.setType(FunctionType::get(&getContext(),
                                   func.getBody().getArgumentTypes(),
                                   func.getResultTypes()));
    if (failed(dpc::inferShapes(func)))
      signalPassFailure();
  }
};
} // namespace
