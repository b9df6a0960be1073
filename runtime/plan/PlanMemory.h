//===- PlanMemory.h - the memory a plan needs, per device -------*- C++ -*-===//
//
// One reading of a plan's memory for `dpc inspect`, `dpc compile
// --report-memory` and the runtime's start-up check: a device holds its
// training state and, one step at a time, that step's arena.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_PLANMEMORY_H
#define DPC_RUNTIME_PLAN_PLANMEMORY_H

#include "runtime/plan/PlanLoader.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::plan {

struct DeviceMemory {
  std::string name;
  int64_t parameterBytes = 0, bufferBytes = 0, optimizerBytes = 0;
  /// The largest arena of the device's steps, and that step's split at its
  /// peak: forward values, parameter gradients, and the rest (activation
  /// gradients, temporaries, planner fragmentation).
  int64_t arenaBytes = 0;
  std::string peakStep;
  int64_t activationBytes = 0, gradientBytes = 0, workspaceBytes = 0;
  /// Whole parameters gathered from their shards (--shard parameters).
  int64_t gatheredParameterBytes = 0;
  /// What recomputation adds to the device's steps.
  int64_t rematFlops = 0;
  /// The largest tensors alive at that step's peak.
  std::vector<const LiveTensor *> liveAtPeak;
  /// The buffers every step's inputs are bound to (and, on a CPU device,
  /// their host staging copies, in the same memory).
  int64_t inputBytes = 0;

  int64_t peakBytes() const {
    return parameterBytes + bufferBytes + optimizerBytes + arenaBytes;
  }
  /// What the device must hold to run the plan: the peak and the inputs.
  int64_t requiredBytes() const { return peakBytes() + inputBytes; }
};

/// Per device, in the plan's device order.
std::vector<DeviceMemory> summarizeMemory(const Plan &plan);

/// "1.50 GiB", "300.00 MiB".
std::string formatBytes(int64_t bytes);

/// Checks that every device has the memory the plan needs: the
/// DPC_DEVICE_MEMORY environment variable (a size per device) if set, else,
/// for the CPU devices together, the machine's available physical memory.
/// Throws PlanError (one line naming the plan) if not.
void checkDeviceMemory(const LoadedPlan &plan);

} // namespace dpc::plan

#endif // DPC_RUNTIME_PLAN_PLANMEMORY_H
