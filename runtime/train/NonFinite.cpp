//===- NonFinite.cpp - NaN and infinity in the training state -------------===//

#include "runtime/train/NonFinite.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/exec/Executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace dpc::train {
namespace {

/// NaN and infinity are the values whose exponent bits are all set: the
/// scan ORs a flag per element (no branch, so it vectorizes) and looks for
/// the index only when the flag is set.
template <typename Bits>
int64_t findAllOnesExponent(const void *data, int64_t count, Bits mask) {
  const auto *bits = static_cast<const Bits *>(data);
  constexpr int64_t kBlock = 4096;
  for (int64_t start = 0; start < count; start += kBlock) {
    int64_t end = std::min(count, start + kBlock);
    bool bad = false;
    for (int64_t i = start; i < end; ++i)
      bad |= (bits[i] & mask) == mask;
    if (!bad)
      continue;
    for (int64_t i = start; i < end; ++i)
      if ((bits[i] & mask) == mask)
        return i;
  }
  return -1;
}

} // namespace

std::string NonFiniteValue::describe() const {
  return kind + " '" + tensor + "' holds " + value + " at index " +
         std::to_string(index);
}

std::string describeNonFinite(int32_t dtype, const void *data, int64_t index) {
  double value = 0;
  if (plan::DType(dtype) == plan::DType::F64) {
    std::memcpy(&value, static_cast<const double *>(data) + index, 8);
  } else if (plan::DType(dtype) == plan::DType::F32) {
    float f;
    std::memcpy(&f, static_cast<const float *>(data) + index, 4);
    value = f;
  } else { // F16 and BF16: the sign bit and NaN or not
    uint16_t bits;
    std::memcpy(&bits, static_cast<const uint16_t *>(data) + index, 2);
    uint16_t mantissa = plan::DType(dtype) == plan::DType::F16 ? 0x3ff : 0x7f;
    value = bits & mantissa ? NAN : bits & 0x8000 ? -INFINITY : INFINITY;
  }
  return std::isnan(value) ? "nan" : value < 0 ? "-inf" : "inf";
}

int64_t findNonFinite(int32_t dtype, const void *data, int64_t count) {
  switch (plan::DType(dtype)) {
  case plan::DType::F32:
    return findAllOnesExponent<uint32_t>(data, count, 0x7f800000u);
  case plan::DType::F64:
    return findAllOnesExponent<uint64_t>(data, count, 0x7ff0000000000000ull);
  case plan::DType::F16:
    return findAllOnesExponent<uint16_t>(data, count, 0x7c00);
  case plan::DType::BF16:
    return findAllOnesExponent<uint16_t>(data, count, 0x7f80);
  default:
    return -1;
  }
}

int64_t findInvalidStateValue(int32_t dtype, const void *data, int64_t count,
                              bool infinityAllowed) {
  int64_t size = plan::getDTypeSize(plan::DType(dtype));
  for (int64_t start = 0; start < count;) {
    const char *from = static_cast<const char *>(data) + start * size;
    int64_t found = findNonFinite(dtype, from, count - start);
    if (found < 0)
      return -1;
    if (!infinityAllowed || describeNonFinite(dtype, from, found) == "nan")
      return start + found;
    start += found + 1;
  }
  return -1;
}

NonFiniteGuard::NonFiniteGuard(rt::Executor &executor, int step,
                               OnNonFinite policy)
    : executor(executor), step(step), policy(policy) {
  const auto *states = executor.getPlan().get().persistent();
  std::vector<size_t> checked = executor.getCheckedPersistent(step);
  for (size_t index : executor.getPrimaryPersistent()) {
    const plan::PersistentTensor &state = *states->Get(index);
    bool scanned = state.kind() != plan::PersistentKind::Buffer;
    if (!scanned && policy == OnNonFinite::Stop)
      continue;
    Entry entry{index,
                scanned,
                std::binary_search(checked.begin(), checked.end(), index),
                static_cast<int32_t>(state.dtype()),
                plan::getNumElements(plan::toDims(state.dims())),
                {},
                {}};
    if (policy == OnNonFinite::SkipStep) {
      entry.current.resize(executor.getPersistentBytes(index));
      entry.saved.resize(entry.current.size());
    }
    entries.push_back(std::move(entry));
  }
}

void NonFiniteGuard::keepState() {
  if (policy != OnNonFinite::SkipStep)
    return;
  for (Entry &entry : entries)
    executor.readPersistent(entry.index, entry.saved.data());
  savedOptimizerStep = executor.getOptimizerStep();
}

std::optional<NonFiniteValue> NonFiniteGuard::scan(Entry &entry) {
  // skip-step keeps each tensor's copy (the next good state); otherwise the
  // copy is a temporary, so that the guard holds at most the largest
  // tensor, not a second copy of the training state.
  std::vector<uint8_t> temporary;
  std::vector<uint8_t> &bytes =
      policy == OnNonFinite::SkipStep ? entry.current : temporary;
  bytes.resize(executor.getPersistentBytes(entry.index));
  executor.readPersistent(entry.index, bytes.data());
  int64_t at = findNonFinite(entry.dtype, bytes.data(), entry.count);
  if (at < 0)
    return std::nullopt;
  const plan::PersistentTensor &state =
      *executor.getPlan().get().persistent()->Get(entry.index);
  return NonFiniteValue{state.name()->str(),
                        state.kind() == plan::PersistentKind::Parameter
                            ? "parameter"
                            : "optimizer state",
                        at, describeNonFinite(entry.dtype, bytes.data(), at)};
}

std::optional<NonFiniteValue> NonFiniteGuard::check() {
  // One update since the last check: its flag stands for the tensors it
  // wrote, unless it raised it (then everything is scanned, to name the
  // first bad tensor in plan order).
  int64_t optimizerStep = executor.getOptimizerStep();
  bool trustUpdates = checkedAtStep >= 0 &&
                      optimizerStep == checkedAtStep + 1 &&
                      !executor.wroteNonFinite(step);
  checkedAtStep = optimizerStep;
  std::optional<NonFiniteValue> found;
  for (Entry &entry : entries) {
    bool skipScan =
        !entry.scanned || found || (trustUpdates && entry.checkedByUpdate);
    if (skipScan) {
      // skip-step keeps a copy of every tensor to go back to.
      if (policy == OnNonFinite::SkipStep)
        executor.readPersistent(entry.index, entry.current.data());
      continue;
    }
    found = scan(entry);
    if (found && policy == OnNonFinite::Stop)
      return found;
  }
  // A good step: its state is the one to go back to.
  if (!found && policy == OnNonFinite::SkipStep) {
    for (Entry &entry : entries)
      entry.saved.swap(entry.current);
    savedOptimizerStep = optimizerStep;
  }
  return found;
}

void NonFiniteGuard::restoreState() {
  for (Entry &entry : entries)
    executor.writePersistent(entry.index, entry.saved.data());
  executor.setOptimizerStep(savedOptimizerStep);
}

} // namespace dpc::train
