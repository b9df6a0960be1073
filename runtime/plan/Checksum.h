//===- Checksum.h - FNV-1a 64 over file contents ----------------*- C++ -*-===//
//
// The checksum of checkpoints and plans. Header-only, so that the compiler
// (which seals plans), the runtime and the test plans share it without
// linking each other.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_CHECKSUM_H
#define DPC_RUNTIME_PLAN_CHECKSUM_H

#include <cstddef>
#include <cstdint>

namespace dpc {

inline constexpr uint64_t kFnv1aBasis = 0xcbf29ce484222325ull;

/// FNV-1a 64 of `size` bytes, continuing from `hash` (the basis for a
/// fresh checksum), so that a checksum can be computed piecewise.
inline uint64_t fnv1a(const uint8_t *data, size_t size,
                      uint64_t hash = kFnv1aBasis) {
  for (size_t i = 0; i < size; ++i)
    hash = (hash ^ data[i]) * 0x100000001b3ull;
  return hash;
}

} // namespace dpc

#endif // DPC_RUNTIME_PLAN_CHECKSUM_H
