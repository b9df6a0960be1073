//===- LinearShapes.cpp - linear layers and matrix products ---------------===//

#include "runtime/abi/shapes/LinearShapes.h"
#include "runtime/abi/KernelArgs.h"
#include "runtime/abi/KernelAttrs.h"

#include <algorithm>
#include <string>
#include <vector>

namespace dpc::plan {
using namespace args;

LinearShape getLinearShape(const KernelCall &call) {
  LinearShape s{};
  switch (call.kernel) {
  case Kernel::LinearForward:
  case Kernel::LinearReluForward: {
    const TensorArg &w = operand(call, 1);
    expectRank(w, operandName(call.kernel, 1), 2, 2);
    s.out = w.dims[0], s.in = w.dims[1];
    s.n = rowsOf(operand(call, 0), operandName(call.kernel, 0)).rows;
    expectOperandCount(call, 0, countOf({s.n, s.in}));
    if (hasOperand(call, 2))
      expectOperandCount(call, 2, s.out);
    expectResultCount(call, 0, countOf({s.n, s.out}));
    break;
  }
  case Kernel::LinearBackwardData: {
    const TensorArg &w = operand(call, 1);
    expectRank(w, operandName(call.kernel, 1), 2, 2);
    s.out = w.dims[0], s.in = w.dims[1];
    s.n = rowsOf(operand(call, 0), operandName(call.kernel, 0)).rows;
    expectOperandCount(call, 0, countOf({s.n, s.out}));
    expectResultCount(call, 0, countOf({s.n, s.in}));
    break;
  }
  default: { // LinearBackwardWeights
    const TensorArg &dw = result(call, 0);
    expectRank(dw, resultName(call.kernel, 0), 2, 2);
    s.out = dw.dims[0], s.in = dw.dims[1];
    s.n = rowsOf(operand(call, 0), operandName(call.kernel, 0)).rows;
    expectOperandCount(call, 0, countOf({s.n, s.in}));
    expectOperandCount(call, 1, countOf({s.n, s.out}));
    if (hasResult(call, 1))
      expectResultCount(call, 1, s.out);
    break;
  }
  }
  s.precision = getPrecision(call);
  s.xCast = getCastSlot(call);
  return s;
}

MatmulShape getMatmulShape(const KernelCall &call) {
  if (call.kernel == Kernel::MatmulTransposedA) {
    // c [k, m] = a [n, k]^T b [n, m]; c's dims say how a and b read.
    const TensorArg &c = result(call, 0);
    expectRank(c, resultName(call.kernel, 0), 2, 2);
    RowsShape a =
        matmulRowsOf(operand(call, 0), operandName(call.kernel, 0), c.dims[0]);
    RowsShape b =
        matmulRowsOf(operand(call, 1), operandName(call.kernel, 1), c.dims[1]);
    if (a.rows != b.rows)
      fail("operands 0 and 1 have " + std::to_string(a.rows) + " and " +
           std::to_string(b.rows) + " rows");
    expectResultCount(call, 0, countOf({a.cols, b.cols}));
    return {a.rows, a.cols, b.cols, getPrecision(call)};
  }
  const TensorArg &b = operand(call, 1);
  expectRank(b, operandName(call.kernel, 1), 2, 2);
  RowsShape a =
      matmulRowsOf(operand(call, 0), operandName(call.kernel, 0), b.dims[0]);
  MatmulShape s{a.rows, a.cols, b.dims[1]};
  if (b.dims[0] != s.k)
    fail(operandName(call.kernel, 1) + " " + formatDims(b.dims) +
         " does not have " + std::to_string(s.k) + " rows");
  if (call.kernel == Kernel::MatmulForward) {
    expectResultCount(call, 0, countOf({s.n, s.m}));
  } else {
    expectOperandCount(call, 2, countOf({s.n, s.m}));
    if (hasResult(call, 0))
      expectResultCount(call, 0, countOf({s.n, s.k}));
    if (hasResult(call, 1))
      expectResultCount(call, 1, countOf({s.k, s.m}));
  }
  s.precision = getPrecision(call);
  return s;
}

BatchMatmulShape getBatchMatmulShape(const KernelCall &call) {
  const BatchMatmulAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_BatchMatmulAttrs()
                       : nullptr;
  BatchMatmulShape s{};
  s.transposeA = attrs && attrs->transpose_a();
  s.transposeB = attrs && attrs->transpose_b();
  const TensorArg &a = operand(call, 0), &b = operand(call, 1);
  const TensorArg &c = result(call, 0);
  size_t rank = a.dims.size();
  expectRank(a, operandName(call.kernel, 0), 3, 8);
  expectRank(b, operandName(call.kernel, 1), rank, rank);
  expectRank(c, resultName(call.kernel, 0), rank, rank);
  std::vector<int64_t> leading(a.dims.begin(), a.dims.end() - 2);
  for (const TensorArg *t : {&b, &c})
    if (!std::equal(leading.begin(), leading.end(), t->dims.begin()))
      fail("batch matmul operands " + formatDims(a.dims) + ", " +
           formatDims(b.dims) + " -> " + formatDims(c.dims) +
           " differ in their leading dims");
  s.batch = countOf(leading);
  // op(x) reads x's last two dims swapped when transposed.
  auto dim = [&](const TensorArg &x, bool transposed, size_t i) {
    return x.dims[rank - 2 + (transposed ? 1 - i : i)];
  };
  s.m = dim(a, s.transposeA, 0);
  s.k = dim(a, s.transposeA, 1);
  s.n = dim(b, s.transposeB, 1);
  if (dim(b, s.transposeB, 0) != s.k || c.dims[rank - 2] != s.m ||
      c.dims[rank - 1] != s.n)
    fail("batch matmul operands " + formatDims(a.dims) + ", " +
         formatDims(b.dims) + " -> " + formatDims(c.dims) + " do not multiply");
  return s;
}

} // namespace dpc::plan
