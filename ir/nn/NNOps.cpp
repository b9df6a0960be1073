//===- NNOps.cpp - nn dialect ops -----------------------------------------===//
//
// Result-type inference (and with it, operand verification) lives in
// ShapeInference.cpp; this file holds the generated op definitions and folds.
//
//===----------------------------------------------------------------------===//

#include "ir/nn/NNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace dpc::nn;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// Exporters emit zero padding before pooling (PyTorch's AvgPool2d does).
OpFoldResult PadOp::fold(FoldAdaptor) {
  auto isZero = [](int64_t v) { return v == 0; };
  if (llvm::all_of(getLow(), isZero) && llvm::all_of(getHigh(), isZero) &&
      getInput().getType() == getType())
    return getInput();
  return {};
}

#define GET_OP_CLASSES
#include "ir/nn/NNOps.cpp.inc"
