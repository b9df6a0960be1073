//===- CheckedMath.h - sizes that cannot overflow ---------------*- C++ -*-===//
//
// Every count or byte size computed from numbers read out of a file (plan,
// checkpoint, .npy, IDX, ONNX) goes through these, so that a hostile file
// gets an error instead of signed overflow. Header-only, so that the
// compiler, the runtime and the data readers share them without linking
// each other.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_CHECKEDMATH_H
#define DPC_RUNTIME_ABI_CHECKEDMATH_H

#include <cstdint>
#include <optional>

namespace dpc {

/// a * b, or nullopt if it overflows int64.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product))
    return std::nullopt;
  return product;
}

/// a + b, or nullopt if it overflows int64.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    return std::nullopt;
  return sum;
}

/// The product of `dims` (1 for none), or nullopt if a dim is negative or
/// the product exceeds `limit`.
template <typename Range>
std::optional<int64_t> checkedProduct(const Range &dims,
                                      int64_t limit = INT64_MAX) {
  int64_t product = 1;
  for (auto dim : dims) {
    // An unsigned dim above INT64_MAX turns negative here: refused too.
    auto value = static_cast<int64_t>(dim);
    if (value < 0)
      return std::nullopt;
    std::optional<int64_t> next = checkedMul(product, value);
    if (!next || *next > limit)
      return std::nullopt;
    product = *next;
  }
  return product;
}

} // namespace dpc

#endif // DPC_RUNTIME_ABI_CHECKEDMATH_H
