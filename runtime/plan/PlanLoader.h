//===- PlanLoader.h - reading and validating plan files ---------*- C++ -*-===//
//
// A LoadedPlan is a plan file held in memory after every check the runtime
// relies on: the "DPCP" identifier, the version, the FlatBuffers verifier,
// the plan's checksum (PlanChecksum.h), and the cross-references the
// verifier cannot see (tensor indices, arena bounds, persistent shapes,
// aliases, kernel signatures and shapes, events that can be ordered, no
// tensor read before an instruction ordered before the read writes it,
// every input read bound, every output written, replicas and their
// training state on one device, replicas of one signature and kernels,
// collectives that every replica issues, the batch split). Everything past
// load() may trust the plan. Each problem is a PlanError whose message is
// one line that names the file.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_PLANLOADER_H
#define DPC_RUNTIME_PLAN_PLANLOADER_H

#include "runtime/io/OneLine.h"
#include "runtime/plan/Plan_generated.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dpc::plan {

/// One line, whatever the file's names hold (OneLine.h).
struct PlanError : std::runtime_error {
  explicit PlanError(const std::string &message)
      : std::runtime_error(io::oneLine(message)) {}
};

class LoadedPlan {
public:
  /// Reads and validates the plan file at `path`.
  static std::shared_ptr<const LoadedPlan> load(const std::string &path);
  /// Validates an in-memory plan; `name` stands for the file in messages.
  static std::shared_ptr<const LoadedPlan> fromBytes(std::vector<uint8_t> bytes,
                                                     std::string name);

  const Plan &get() const { return *root; }
  const Plan *operator->() const { return root; }
  const std::string &getName() const { return name; }
  const std::vector<uint8_t> &getBytes() const { return bytes; }

  /// Index of the (first, in plan order) step of role `role`, or -1.
  int findStep(StepRole role) const;
  /// Indices of every step called `stepName` -- the replicas of a
  /// data-parallel step, one per device -- ordered by device.
  std::vector<int> findReplicas(std::string_view stepName) const;
  /// The batch every batch-dim tensor of step `step` was compiled for (0
  /// when it has none): for a replica, its device's share.
  int64_t getMaxBatch(int step) const { return maxBatch[step]; }
  /// The tensor whose storage tensor `tensor` of step `step` views: itself
  /// unless it is an alias, else the end of its (acyclic) alias chain.
  int getAliasBase(int step, int tensor) const {
    return aliasBase[step][tensor];
  }
  /// Where tensor `tensor` of step `step` starts in its alias base, in
  /// bytes (0 but for an element range: the offsets along its chain).
  int64_t getAliasOffset(int step, int tensor) const {
    return aliasOffset[step][tensor];
  }
  /// Step `step`'s instructions, (stream, instruction) pairs, in an order
  /// that enqueues every event's signal before its waits.
  const std::vector<std::pair<int, int>> &getEnqueueOrder(int step) const {
    return enqueueOrder[step];
  }

  /// Throws PlanError("NAME: message").
  [[noreturn]] void fail(const std::string &message) const;

private:
  LoadedPlan(std::vector<uint8_t> bytes, std::string name)
      : bytes(std::move(bytes)), name(std::move(name)) {}
  void validate();

  std::vector<uint8_t> bytes;
  std::string name;
  const Plan *root = nullptr;
  std::vector<int64_t> maxBatch;
  std::vector<std::vector<int>> aliasBase;
  std::vector<std::vector<int64_t>> aliasOffset;
  std::vector<std::vector<std::pair<int, int>>> enqueueOrder;

  friend class PlanValidator;
};

/// Fails `plan` (LoadedPlan::fail) unless its roles name one step per role,
/// one input per role in a step, and accumulation roles only where the
/// plan accumulates (PlanRoles.cpp).
void checkRoles(const LoadedPlan &plan);

/// Fails `plan` unless the replicas of each step have the same inputs and
/// outputs (names, roles, dtypes, dims but the batch) (PlanReplicas.cpp).
void checkReplicaSignatures(const LoadedPlan &plan);

} // namespace dpc::plan

#endif // DPC_RUNTIME_PLAN_PLANLOADER_H
