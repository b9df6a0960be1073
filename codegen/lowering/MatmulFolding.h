//===- MatmulFolding.h - what MatmulTransposedA reads itself ----*- C++ -*-===//
//
// A^T B over the rows of N-D operands: the VJPs of linear and matmul build
// it as a matmul of a 2-D transpose, of operands whose leading dims a
// reshape merged into rows. MatmulTransposedA does both itself (its
// operands keep the batch in dim 0, as plan tensors must), so such a
// transpose or reshape, read only that way, gets no buffer of its own.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_CODEGEN_LOWERING_MATMULFOLDING_H
#define DPC_CODEGEN_LOWERING_MATMULFOLDING_H

#include "ir/nn/NNOps.h"

namespace dpc {

/// The input of `value` when it is a 2-D transpose (permutation [1, 0]),
/// else null.
mlir::Value getTransposed2dInput(mlir::Value value);

/// The N-D input of `value` when it is a reshape that merges the leading
/// dims into rows (keeping the last), else `value`.
mlir::Value getUnmergedRows(mlir::Value value);

/// Whether `reshape` merges rows and only MatmulTransposedA calls read it,
/// which read its input instead.
bool isReadOnlyUnmerged(nn::ReshapeOp reshape);

/// Whether `transpose` is 2-D and only the left operand of matmuls, which
/// become MatmulTransposedA calls that read its input instead.
bool foldsIntoMatmuls(nn::TransposeOp transpose);

} // namespace dpc

#endif // DPC_CODEGEN_LOWERING_MATMULFOLDING_H
