//===- KernelArgs.cpp - the shape checks' argument toolkit ----------------===//

#include "runtime/abi/KernelArgs.h"
#include "runtime/abi/KernelSignature.h"

#include <vector>

namespace dpc::plan::args {
namespace {

std::string describe(const KernelCall &call, bool isOperand, size_t index) {
  return isOperand ? describeOperand(call.kernel, index)
                   : describeResult(call.kernel, index);
}

} // namespace

void fail(const std::string &message) { throw ShapeError(message); }

std::string Name::str() const {
  if (!isRole)
    return text;
  return isOperand ? describeOperand(kernel, index)
                   : describeResult(kernel, index);
}

const TensorArg &get(const KernelCall &call, bool isOperand, size_t index,
                     DType dtype) {
  const std::vector<TensorArg> &args = isOperand ? call.operands : call.results;
  if (index >= args.size() || !args[index].present)
    fail(describe(call, isOperand, index) + " is missing");
  const TensorArg &arg = args[index];
  if (arg.dtype != dtype)
    fail(describe(call, isOperand, index) + " is " + EnumNameDType(arg.dtype) +
         ", expected " + EnumNameDType(dtype));
  if (arg.getNumElements() < 0)
    fail(describe(call, isOperand, index) + " has invalid dims " +
         formatDims(arg.dims));
  return arg;
}

void expectCount(const TensorArg &arg, const Name &what, int64_t expected) {
  if (arg.getNumElements() != expected)
    fail(what + " has " + std::to_string(arg.getNumElements()) + " elements " +
         formatDims(arg.dims) + ", expected " + std::to_string(expected));
}

void expectOperandCount(const KernelCall &call, size_t index, int64_t expected,
                        DType dtype) {
  expectCount(operand(call, index, dtype), operandName(call.kernel, index),
              expected);
}

void expectResultCount(const KernelCall &call, size_t index, int64_t expected,
                       DType dtype) {
  expectCount(result(call, index, dtype), resultName(call.kernel, index),
              expected);
}

void expectRank(const TensorArg &arg, const Name &what, size_t lo, size_t hi) {
  if (arg.dims.size() < lo || arg.dims.size() > hi)
    fail(what + " has rank " + std::to_string(arg.dims.size()) + " " +
         formatDims(arg.dims) + ", expected " +
         (lo == hi ? std::to_string(lo)
                   : std::to_string(lo) + " to " + std::to_string(hi)));
}

void expectCountResult(const KernelCall &call, size_t index) {
  const TensorArg &arg = call.result(index);
  if (!arg.present)
    fail(resultName(call.kernel, index) + " is missing");
  if (getDTypeSize(arg.dtype) == 0 || arg.dtype == DType::F16 ||
      arg.dtype == DType::BF16)
    fail(resultName(call.kernel, index) + " is " + EnumNameDType(arg.dtype) +
         ", expected I64, I32, F32 or F64");
  expectCount(arg, resultName(call.kernel, index), 1);
}

RowsShape rowsOf(const TensorArg &arg, const Name &what) {
  expectRank(arg, what, 1, 8);
  // The columns from the dims, not count / rows: a replica's share may be
  // 0 rows.
  struct {
    const int64_t *first, *last;
    const int64_t *begin() const { return first; }
    const int64_t *end() const { return last; }
  } rest{arg.dims.data() + 1, arg.dims.data() + arg.dims.size()};
  std::optional<int64_t> cols = checkedProduct(rest);
  if (!cols)
    fail(what + " " + formatDims(arg.dims) + " has too many columns");
  return {arg.dims[0], *cols};
}

RowsShape matmulRowsOf(const TensorArg &arg, const Name &what, int64_t cols) {
  RowsShape flat = rowsOf(arg, what);
  if (arg.dims.size() > 2 && arg.dims.back() == cols) {
    std::vector<int64_t> lead(arg.dims.begin(), arg.dims.end() - 1);
    std::optional<int64_t> rows = checkedProduct(lead);
    if (!rows)
      fail(what + " " + formatDims(arg.dims) + " has too many rows");
    return {*rows, cols};
  }
  return flat;
}

Nchw nchwOf(const TensorArg &arg, const Name &what, size_t minRank) {
  expectRank(arg, what, minRank, 4);
  const auto &d = arg.dims;
  return {d[0], d[1], d.size() > 2 ? d[2] : 1, d.size() > 3 ? d[3] : 1};
}

} // namespace dpc::plan::args
