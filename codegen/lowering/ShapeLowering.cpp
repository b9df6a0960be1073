//===- ShapeLowering.cpp - reshapes, transposes, joins and row gathers ----===//
//
// Reshape and flatten are views of their input's buffer; a transpose is a
// kernel call unless the matmuls that read it do it themselves
// (MatmulFolding.h). Concat and split join and cut along an axis, and an
// embedding gathers table rows (its gradient scatters them back).
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/KernelLowering.h"
#include "codegen/lowering/MatmulFolding.h"

using namespace mlir;
using namespace dpc;
using plan::Kernel;
namespace roles = plan::roles;

namespace dpc {

template <> LogicalResult lowerToKernels(nn::ReshapeOp op, KernelBuilder &b) {
  if (!isReadOnlyUnmerged(op))
    return b.view(op.getResult(), op.getInput());
  return b.joinBuffer(op.getResult(), op.getInput());
}

template <> LogicalResult lowerToKernels(nn::FlattenOp op, KernelBuilder &b) {
  return b.view(op.getResult(), op.getInput());
}

template <> LogicalResult lowerToKernels(nn::TransposeOp op, KernelBuilder &b) {
  if (foldsIntoMatmuls(op))
    return b.joinBuffer(op.getResult(), op.getInput());
  if (getTransposed2dInput(op.getResult())) {
    using namespace roles::Transpose2d;
    return b.call(op, Kernel::Transpose2d, {{X, op.getInput()}});
  }
  using namespace roles::Transpose;
  return b.call(op, Kernel::Transpose, {{X, op.getInput()}},
                {b.attr("permutation", op.getPermutationAttr())});
}

template <> LogicalResult lowerToKernels(nn::ConcatOp op, KernelBuilder &b) {
  return b.callVariadic(op, Kernel::ConcatForward, op.getInputs(),
                        {b.attr("axis", op.getAxisAttr())});
}

template <> LogicalResult lowerToKernels(nn::SplitOp op, KernelBuilder &b) {
  // Parts that are contiguous runs of a static input (a split along its
  // first dim that is not 1: a replica's range of a flattened parameter)
  // are views of it.
  auto input = cast<RankedTensorType>(op.getInput().getType());
  auto inputBuffer = cast<MemRefType>(b.buffer(op.getInput()).getType());
  int64_t axis = op.getAxis();
  if (inputBuffer.hasStaticShape() &&
      llvm::all_of(input.getShape().take_front(axis),
                   [](int64_t dim) { return dim == 1; })) {
    int64_t offset = 0;
    for (Value part : op.getResults()) {
      if (!part.use_empty() && failed(b.viewRange(part, op.getInput(), offset)))
        return failure();
      offset += cast<RankedTensorType>(part.getType()).getNumElements();
    }
    return success();
  }
  using namespace roles::SplitForward;
  return b.call(op, Kernel::SplitForward, {{X, op.getInput()}},
                {b.attr("axis", op.getAxisAttr())});
}

template <> LogicalResult lowerToKernels(nn::EmbeddingOp op, KernelBuilder &b) {
  using namespace roles::EmbeddingForward;
  return b.call(op, Kernel::EmbeddingForward,
                {{Table, op.getTable()}, {Indices, op.getIndices()}});
}

template <>
LogicalResult lowerToKernels(nn::EmbeddingGradOp op, KernelBuilder &b) {
  using namespace roles::EmbeddingBackward;
  return b.call(op, Kernel::EmbeddingBackward,
                {{Indices, op.getIndices()}, {DY, op.getResultGrad()}});
}

} // namespace dpc

void dpc::attachShapeLowerings(MLIRContext &context) {
  attachKernelLowerings<nn::ReshapeOp, nn::FlattenOp, nn::TransposeOp,
                        nn::ConcatOp, nn::SplitOp, nn::EmbeddingOp,
                        nn::EmbeddingGradOp>(context);
}
