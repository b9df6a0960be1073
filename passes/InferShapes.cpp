//===- InferShapes.cpp - propagate result types through nn ops ------------===//
//
// Used by passes that change argument types (nn-set-batch): types then flow
// through the graph by the ops' own inference.
//
//===----------------------------------------------------------------------===//

#include "ir/nn/NNOps.h"
#include "passes/Passes.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;

LogicalResult dpc::inferShapes(func::FuncOp func) {
  WalkResult walk = func.walk([](InferTypeOpInterface op) {
    return failed(nn::inferResultTypes(op)) ? WalkResult::interrupt()
                                            : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  Operation *terminator = func.getBody().back().getTerminator();
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 terminator->getOperandTypes()));
  return success();
}
