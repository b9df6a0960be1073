//===- TrainingState.h - the copies of a plan's persistent state -*- C++
//-*-===//
//
// The training state of a plan: one allocation per persistent tensor on
// each device that holds a copy (initialized from the plan), which of the
// copies is the primary one (the lowest device's), the optimizer step count
// and the dropout seed. A shard (PersistentTensor.logical_dims) is no copy:
// each is primary, and rank 0's is never broadcast over another's. Which copies
// a process holds is the devices it was given: another rank's have none.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_TRAININGSTATE_H
#define DPC_RUNTIME_EXEC_TRAININGSTATE_H

#include "runtime/comm/Communicator.h"
#include "runtime/device/Device.h"
#include "runtime/plan/PlanLoader.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace dpc::rt {

/// Whether `state` is one device's shard of a tensor (sharded optimizer
/// state or parameters) rather than a copy of it.
bool isShard(const plan::PersistentTensor &state);

/// The dims of the whole tensor `state` is a copy or a shard of (what a
/// checkpoint and an export hold).
std::vector<int64_t> getWholeDims(const plan::PersistentTensor &state);

class TrainingState {
public:
  /// Allocates and initializes every copy of the plan's persistent tensors
  /// on its device in `devices` (none where the device is null).
  TrainingState(const plan::LoadedPlan &plan,
                const std::vector<std::unique_ptr<Device>> &devices);

  size_t size() const { return persistent.size(); }
  size_t getBytes(size_t index) const { return persistent.at(index).size(); }
  void *getData(size_t index) const { return persistent[index].get(); }
  /// Reads copy `index`; throws std::invalid_argument for another rank's.
  void read(size_t index, void *data) const;
  /// Writes `data` to every copy of tensor `index` this process holds.
  void write(size_t index, const void *data);
  /// One copy of each tensor, the lowest device's, in plan order.
  const std::vector<size_t> &getPrimary() const { return primary; }
  /// Writes each primary copy (only the Buffers with `buffersOnly`) to its
  /// other copies.
  void copyPrimaryToReplicas(bool buffersOnly);
  /// The primary copies (only the Buffers with `buffersOnly`), as the
  /// buffers of a collective.
  std::vector<comm::ReduceBuffer> getPrimaryBuffers(bool buffersOnly);
  /// Zeroes every copy of the tensors of kind `kind`.
  void zero(plan::PersistentKind kind);
  /// The primary copies that the optimizer updates of `step` (on a device
  /// that checks its updates) check as they write them, sorted.
  std::vector<size_t> getCheckedPersistent(const plan::Step &step,
                                           const Device &device) const;

  /// The plan's optimizer step count and dropout seed (Executor.h).
  int64_t optimizerStep = 0;
  uint64_t randomSeed = 0;

private:
  const plan::LoadedPlan &plan;
  std::vector<DeviceBuffer> persistent;
  std::vector<size_t> primary;
  std::vector<std::vector<size_t>> copies; // per persistent: all copies
};

} // namespace dpc::rt

#endif // DPC_RUNTIME_EXEC_TRAININGSTATE_H
