//===- RowsShapes.cpp - rows, transposes and reductions -------------------===//

#include "runtime/abi/shapes/RowsShapes.h"
#include "runtime/abi/KernelArgs.h"
#include "runtime/abi/KernelAttrs.h"
#include "runtime/abi/shapes/ElementwiseShapes.h"

#include <optional>
#include <string>
#include <vector>

namespace dpc::plan {
using namespace args;

RowsShape getRowsShape(const KernelCall &call) {
  switch (call.kernel) {
  case Kernel::SoftmaxForward:
  case Kernel::LogSoftmaxForward:
  case Kernel::SoftmaxBackward:
  case Kernel::LogSoftmaxBackward: {
    const TensorArg &x = operand(call, 0);
    expectRank(x, operandName(call.kernel, 0), 1, 8);
    int64_t cols = x.dims.back();
    std::optional<int64_t> rows =
        checkedProduct(std::vector<int64_t>(x.dims.begin(), x.dims.end() - 1));
    if (!rows)
      fail(operandName(call.kernel, 0) + " " + formatDims(x.dims) +
           " has too many rows");
    RowsShape s{*rows, cols};
    getElementwiseSize(call); // every operand and the result alike
    return s;
  }
  default: { // CrossEntropyForward/Backward/ForwardBackward, CorrectCount
    RowsShape s = rowsOf(operand(call, 0), operandName(call.kernel, 0));
    if (s.cols < 1)
      fail("the logits have no classes");
    expectOperandCount(call, 1, s.rows, DType::I32);
    if (call.kernel == Kernel::CrossEntropyForward) {
      expectResultCount(call, 0, 1);
      if (hasResult(call, 1))
        expectCountResult(call, 1);
    } else if (call.kernel == Kernel::CrossEntropyBackward) {
      if (hasOperand(call, 2))
        expectOperandCount(call, 2, 1);
      expectResultCount(call, 0, countOf({s.rows, s.cols}));
    } else if (call.kernel == Kernel::CrossEntropyForwardBackward) {
      if (hasOperand(call, 2))
        expectOperandCount(call, 2, 1);
      expectResultCount(call, 0, 1);
      expectResultCount(call, 1, countOf({s.rows, s.cols}));
      if (hasResult(call, 2))
        expectCountResult(call, 2);
    } else {
      expectCountResult(call, 0);
    }
    return s;
  }
  }
}

RowsShape getTransposeShape(const KernelCall &call) {
  const TensorArg &x = operand(call, 0);
  expectRank(x, operandName(call.kernel, 0), 2, 2);
  const TensorArg &y = result(call, 0, x.dtype);
  expectCount(y, resultName(call.kernel, 0), x.getNumElements());
  if (getDTypeSize(x.dtype) != 4)
    fail("transpose supports 4-byte elements");
  return {x.dims[0], x.dims[1]};
}

PermuteShape getPermuteShape(const KernelCall &call) {
  const TensorArg &x = call.operand(0);
  if (!x.present || getDTypeSize(x.dtype) != 4)
    fail(operandName(call.kernel, 0) + " must be a tensor of 4-byte elements");
  operand(call, 0, x.dtype); // its dims
  const TransposeAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_TransposeAttrs() : nullptr;
  if (!attrs)
    fail("TransposeAttrs are missing");
  PermuteShape s{x.dims, attrList(attrs->permutation())};
  size_t rank = x.dims.size();
  if (rank > 8 || s.permutation.size() != rank)
    fail("the permutation has " + std::to_string(s.permutation.size()) +
         " entries for " + formatDims(x.dims));
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> permuted;
  for (int64_t p : s.permutation) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p])
      fail(formatDims(s.permutation) + " is not a permutation of " +
           std::to_string(rank) + " dims");
    seen[p] = true;
    permuted.push_back(x.dims[p]);
  }
  const TensorArg &y = result(call, 0, x.dtype);
  if (y.dims != permuted)
    fail(resultName(call.kernel, 0) + " is " + formatDims(y.dims) +
         ", expected " + formatDims(permuted));
  return s;
}

namespace {
/// Operand 0's dims, which ReduceAttrs' dims reduce, and how many elements
/// the reduction keeps.
ReduceShape reduceShapeOf(const KernelCall &call, int64_t &kept) {
  const TensorArg &x = operand(call, 0);
  const ReduceAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_ReduceAttrs() : nullptr;
  if (!attrs)
    fail("ReduceAttrs are missing");
  ReduceShape s{x.dims, std::vector<bool>(x.dims.size(), false)};
  int64_t rank = static_cast<int64_t>(x.dims.size());
  for (int64_t dim : attrList(attrs->dims())) {
    int64_t d = dim < 0 ? dim + rank : dim;
    if (d < 0 || d >= rank)
      fail("reduced dim " + std::to_string(dim) + " is out of range for " +
           formatDims(x.dims));
    if (s.reduced[d])
      fail("dim " + std::to_string(dim) + " is reduced twice");
    s.reduced[d] = true;
  }
  kept = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (!s.reduced[d])
      kept *= x.dims[d];
  return s;
}
} // namespace

ReduceShape getReduceShape(const KernelCall &call) {
  int64_t kept = 0;
  ReduceShape s = reduceShapeOf(call, kept);
  expectResultCount(call, 0, kept);
  return s;
}

ReduceShape getReduceBackwardShape(const KernelCall &call) {
  int64_t kept = 0;
  ReduceShape s = reduceShapeOf(call, kept);
  expectOperandCount(call, 1, kept);
  expectOperandCount(call, 2, kept);
  expectResultCount(call, 0, operand(call, 0).getNumElements());
  return s;
}

} // namespace dpc::plan
