//===- MatmulLowering.cpp - linear layers and matmuls to kernels ----------===//
//
// Linear layers, matmuls (MatmulTransposedA where the left operand is a
// transpose, MatmulFolding.h) and batched matmuls.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/KernelLowering.h"
#include "codegen/lowering/MatmulFolding.h"

using namespace mlir;
using namespace dpc;
using plan::Kernel;
namespace roles = plan::roles;

Value dpc::getTransposed2dInput(Value value) {
  auto transpose = value.getDefiningOp<nn::TransposeOp>();
  if (transpose && transpose.getPermutation() == ArrayRef<int64_t>{1, 0})
    return transpose.getInput();
  return Value();
}

Value dpc::getUnmergedRows(Value value) {
  auto reshape = value.getDefiningOp<nn::ReshapeOp>();
  if (!reshape)
    return value;
  auto in = cast<RankedTensorType>(reshape.getInput().getType());
  auto out = cast<RankedTensorType>(reshape.getType());
  bool mergesRows = in.getRank() > 2 && out.getRank() == 2 &&
                    in.getShape().back() == out.getShape().back();
  return mergesRows ? reshape.getInput() : value;
}

bool dpc::isReadOnlyUnmerged(nn::ReshapeOp reshape) {
  if (getUnmergedRows(reshape.getResult()) == reshape.getResult())
    return false;
  return llvm::all_of(reshape->getUsers(), [&](Operation *user) {
    if (auto matmul = dyn_cast<nn::MatmulOp>(user))
      return matmul.getRhs() == reshape.getResult() &&
             getTransposed2dInput(matmul.getLhs());
    auto transpose = dyn_cast<nn::TransposeOp>(user);
    return transpose && getTransposed2dInput(transpose.getResult()) &&
           llvm::all_of(transpose->getUsers(), [&](Operation *reader) {
             auto matmul = dyn_cast<nn::MatmulOp>(reader);
             return matmul && matmul.getLhs() == transpose.getResult();
           });
  });
}

bool dpc::foldsIntoMatmuls(nn::TransposeOp transpose) {
  return llvm::all_of(transpose->getUsers(),
                      [&](Operation *user) {
                        auto matmul = dyn_cast<nn::MatmulOp>(user);
                        return matmul &&
                               matmul.getLhs() == transpose.getResult();
                      }) &&
         getTransposed2dInput(transpose.getResult());
}

namespace dpc {

template <> LogicalResult lowerToKernels(nn::LinearOp op, KernelBuilder &b) {
  using namespace roles::LinearForward;
  return b.call(
      op, Kernel::LinearForward,
      {{X, op.getInput()}, {W, op.getWeight()}, {Bias, op.getBias()}});
}

template <> LogicalResult lowerToKernels(nn::MatmulOp op, KernelBuilder &b) {
  if (Value transposed = getTransposed2dInput(op.getLhs())) {
    using namespace roles::MatmulTransposedA;
    return b.call(
        op, Kernel::MatmulTransposedA,
        {{A, getUnmergedRows(transposed)}, {B, getUnmergedRows(op.getRhs())}});
  }
  using namespace roles::MatmulForward;
  return b.call(op, Kernel::MatmulForward,
                {{A, op.getLhs()}, {B, op.getRhs()}});
}

template <>
LogicalResult lowerToKernels(nn::BatchMatmulOp op, KernelBuilder &b) {
  using namespace roles::BatchMatmul;
  SmallVector<NamedAttribute> attrs;
  if (op.getTransposeLhs())
    attrs.push_back(b.attr("transpose_a", b.getBuilder().getBoolAttr(true)));
  if (op.getTransposeRhs())
    attrs.push_back(b.attr("transpose_b", b.getBuilder().getBoolAttr(true)));
  return b.call(op, Kernel::BatchMatmul, {{A, op.getLhs()}, {B, op.getRhs()}},
                attrs);
}

} // namespace dpc

void dpc::attachMatmulLowerings(MLIRContext &context) {
  attachKernelLowerings<nn::LinearOp, nn::MatmulOp, nn::BatchMatmulOp>(context);
}
