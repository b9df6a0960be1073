//===- KernelArgs.h - the shape checks' argument toolkit --------*- C++ -*-===//
//
// What every shape family (shapes/*.cpp) checks a call's tensors with:
// fetch an operand or result of a dtype, expect an element count or a
// rank, multiply sizes without overflow, read rows and NCHW extents. Each
// failure throws a ShapeError that names the tensor by its role
// ("operand 2 (Bias)"). Only the ABI's own sources use the toolkit
// (namespace args); ShapeError is what callers catch.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_KERNELARGS_H
#define DPC_RUNTIME_ABI_KERNELARGS_H

#include "runtime/abi/CheckedMath.h"
#include "runtime/abi/KernelCall.h"
#include "runtime/abi/shapes/ShapeTypes.h"

#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dpc::plan {

/// A mismatch between a kernel and its tensors; the message says what, the
/// caller says where.
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace args {

[[noreturn]] void fail(const std::string &message);

/// What an error calls a tensor: an operand or result of a kernel, spelled
/// out only when an error reports it (the checks run on every kernel call,
/// which must not build strings), or a given text.
class Name {
public:
  Name() = default;
  Name(std::string text) : text(std::move(text)) {}
  Name(Kernel kernel, bool isOperand, size_t index)
      : kernel(kernel), isOperand(isOperand), index(index), isRole(true) {}
  std::string str() const;
  friend std::string operator+(const Name &name, std::string_view more) {
    return name.str().append(more);
  }
  friend std::string operator+(std::string text, const Name &name) {
    return text.append(name.str());
  }

private:
  std::string text;
  Kernel kernel = Kernel::Copy;
  bool isOperand = true;
  size_t index = 0;
  bool isRole = false;
};
inline Name operandName(Kernel kernel, size_t index) {
  return {kernel, true, index};
}
inline Name resultName(Kernel kernel, size_t index) {
  return {kernel, false, index};
}

/// Fetches operand/result `index`, which must be present and of `dtype`.
const TensorArg &get(const KernelCall &call, bool isOperand, size_t index,
                     DType dtype = DType::F32);
inline const TensorArg &operand(const KernelCall &call, size_t index,
                                DType dtype = DType::F32) {
  return get(call, true, index, dtype);
}
inline const TensorArg &result(const KernelCall &call, size_t index,
                               DType dtype = DType::F32) {
  return get(call, false, index, dtype);
}
inline bool hasOperand(const KernelCall &call, size_t index) {
  return call.operand(index).present;
}
inline bool hasResult(const KernelCall &call, size_t index) {
  return call.result(index).present;
}

/// The product of `factors` (sizes from dims and attributes a plan may
/// forge): an error instead of an overflow.
template <typename Range> int64_t countOf(const Range &factors) {
  std::optional<int64_t> count = checkedProduct(factors);
  if (!count)
    fail("the kernel's sizes overflow");
  return *count;
}
inline int64_t countOf(std::initializer_list<int64_t> factors) {
  return countOf<std::initializer_list<int64_t>>(factors);
}

void expectCount(const TensorArg &arg, const Name &what, int64_t expected);
void expectOperandCount(const KernelCall &call, size_t index, int64_t expected,
                        DType dtype = DType::F32);
void expectResultCount(const KernelCall &call, size_t index, int64_t expected,
                       DType dtype = DType::F32);
void expectRank(const TensorArg &arg, const Name &what, size_t lo, size_t hi);

/// A count-like result (correct predictions): any numeric dtype, 1 element.
void expectCountResult(const KernelCall &call, size_t index);

/// Rows (dims[0]) and the rest flattened, of a tensor of rank >= 1.
RowsShape rowsOf(const TensorArg &arg, const Name &what);

/// A matmul operand whose columns are `cols`: rows are every dim but the
/// last when the last is `cols` (x [n, t, k] times a [k, m] weight), else
/// dims[0] with the rest flattened (x [n, c, h, w] into a linear layer).
/// Both readings agree when both fit (the middle dims are 1).
RowsShape matmulRowsOf(const TensorArg &arg, const Name &what, int64_t cols);

/// NCHW extents of a tensor of rank minRank..4.
Nchw nchwOf(const TensorArg &arg, const Name &what, size_t minRank);

} // namespace args
} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_KERNELARGS_H
