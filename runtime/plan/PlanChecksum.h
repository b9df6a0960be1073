//===- PlanChecksum.h - the checksum a plan carries -------------*- C++ -*-===//
//
// Plan.checksum is the FNV-1a 64 of the whole plan file, weights included,
// with the checksum's own eight bytes read as zeros. The writer packs the
// plan with a placeholder there and seals it; the loader recomputes it, so
// that a plan damaged on disk or in transit is refused in one line instead
// of training on changed weights. Header-only, shared by codegen, the
// loader and the test plans.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_PLANCHECKSUM_H
#define DPC_RUNTIME_PLAN_PLANCHECKSUM_H

#include "runtime/plan/Checksum.h"
#include "runtime/plan/Plan_generated.h"

#include <optional>
#include <vector>

namespace dpc::plan {

/// The placeholder a writer packs, so that the field is present (a default
/// value would be left out of the buffer).
inline constexpr uint64_t kUnsealedChecksum = 1;

/// Where Plan.checksum lies in a verified plan buffer, or nullopt if the
/// plan has none.
inline std::optional<size_t> findPlanChecksum(const uint8_t *data) {
  const auto *table =
      reinterpret_cast<const flatbuffers::Table *>(GetPlan(data));
  const uint8_t *field = table->GetAddressOf(Plan::VT_CHECKSUM);
  if (!field)
    return std::nullopt;
  return static_cast<size_t>(field - data);
}

/// The checksum of `size` bytes whose checksum field is at `at`.
inline uint64_t computePlanChecksum(const uint8_t *data, size_t size,
                                    size_t at) {
  static constexpr uint8_t kZeros[sizeof(uint64_t)] = {};
  uint64_t hash = fnv1a(data, at);
  hash = fnv1a(kZeros, sizeof(kZeros), hash);
  size_t rest = at + sizeof(uint64_t);
  return fnv1a(data + rest, size - rest, hash);
}

/// Writes the checksum into a packed plan (see above); false if `bytes` is
/// not a plan with a checksum field.
inline bool sealPlan(std::vector<uint8_t> &bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!VerifyPlanBuffer(verifier))
    return false;
  std::optional<size_t> at = findPlanChecksum(bytes.data());
  if (!at)
    return false;
  uint64_t checksum = computePlanChecksum(bytes.data(), bytes.size(), *at);
  flatbuffers::WriteScalar(bytes.data() + *at, checksum);
  return true;
}

} // namespace dpc::plan

#endif // DPC_RUNTIME_PLAN_PLANCHECKSUM_H
