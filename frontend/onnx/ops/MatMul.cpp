//===- MatMul.cpp - matrix products ---------------------------------------===//
//
// MatMul (a matrix, or batched products) and Gemm (PyTorch's Linear).
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

void importGemm(Importer &im, const onnx::NodeProto &node) {
  if (floatAttr(node, "alpha", 1.0f) != 1.0f ||
      floatAttr(node, "beta", 1.0f) != 1.0f)
    fail("alpha and beta other than 1 are not supported");
  if (intAttr(node, "transA", 0) != 0)
    fail("transA=1 is not supported");
  Value a = im.operand(node, 0), b = im.operand(node, 1);
  Value c = im.optionalOperand(node, 2);
  bool vectorBias = c && cast<RankedTensorType>(c.getType()).getRank() == 1;
  Value result;
  if (intAttr(node, "transB", 0) != 0) {
    // PyTorch's Linear: y = x * W^T + b, W stored [out, in].
    SmallVector<Value> operands = {a, b};
    if (vectorBias)
      operands.push_back(c);
    result = im.create<nn::LinearOp>(operands);
  } else {
    result = im.create<nn::MatmulOp>({a, b});
    vectorBias = false;
  }
  if (c && !vectorBias)
    result = im.create<nn::AddOp>({result, c});
  im.define(node, 0, result);
}

void importMatMul(Importer &im, const onnx::NodeProto &node) {
  Value lhs = im.operand(node, 0), rhs = im.operand(node, 1);
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  // A matrix on the right: rows of the left times it. Otherwise a product
  // per leading index (attention's scores and weighted values).
  if (rhsType.getRank() == 2)
    return im.define(node, 0, im.create<nn::MatmulOp>({lhs, rhs}));
  if (lhsType.getRank() != rhsType.getRank() || lhsType.getRank() < 3)
    fail("batched MatMul takes operands of the same rank >= 3, got " +
         typeToString(lhsType) + " and " + typeToString(rhsType));
  im.define(node, 0, im.create<nn::BatchMatmulOp>({lhs, rhs}));
}

} // namespace

void registerMatMulOps(OnnxOpTable &table) {
  table.add("Gemm", importGemm);
  table.add("MatMul", importMatMul);
}

} // namespace dpc::frontend
