//===- RowsShapes.h - rows, transposes and reductions -----------*- C++ -*-===//
//
// Softmax and LogSoftmax run over the last dim; CrossEntropy and
// CorrectCount over rows (dims[0], the rest flattened) of class logits.
// Transposes permute dims; ReduceSum sums some (ReduceAttrs dims may be
// negative, from the end; the result holds the kept dims in order, with or
// without the reduced ones kept as 1). Scalars (loss, dloss, counts) are
// tensors of one element.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_SHAPES_ROWSSHAPES_H
#define DPC_RUNTIME_ABI_SHAPES_ROWSSHAPES_H

#include "runtime/abi/shapes/ShapeTypes.h"

#include <cstdint>
#include <vector>

namespace dpc::plan {

/// Transpose: x's dims and the permutation (a permutation of at most 8
/// dims; y's dims are x's permuted; 4-byte elements).
struct PermuteShape {
  std::vector<int64_t> dims, permutation;
};

struct ReduceShape {
  std::vector<int64_t> dims; // the operand's
  std::vector<bool> reduced; // per operand dim
};

/// Softmax, LogSoftmax: rows x last dim. CrossEntropy, CorrectCount:
/// rows x classes of the logits.
RowsShape getRowsShape(const KernelCall &call);
/// Transpose2d: x is [rows, cols].
RowsShape getTransposeShape(const KernelCall &call);
PermuteShape getPermuteShape(const KernelCall &call);
ReduceShape getReduceShape(const KernelCall &call);
/// ReduceExtremumBackward (x, y, dy) -> (dx): y and dy hold the kept
/// elements, dx as many as x.
ReduceShape getReduceBackwardShape(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_ROWSSHAPES_H
