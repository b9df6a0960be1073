//===- Executor.h - runs the steps of a loaded plan -------------*- C++ -*-===//
//
// The executor owns the memory of a plan -- one allocation per persistent
// tensor (initialized from the plan), one arena per step, one buffer per
// input -- and the streams and events of every step. run() enqueues a
// step's instructions on its streams, each one resolved to a KernelCall at
// the run-time batch, in an order where every event is recorded before it
// is waited for, and then waits for all streams. It is generic over
// Device/Stream/Event: the CPU and a CUDA backend share it.
//
// The executor also holds the plan's optimizer step count: it goes up by
// one before each run of a step that updates parameters (SGD's first step
// and AdamW's bias correction use it), and is saved with the training state.
// When that step has an i64 scalar input named "step" (AdamW's step
// operand), the executor binds the count to it before the run.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_EXECUTOR_H
#define DPC_RUNTIME_EXEC_EXECUTOR_H

#include "runtime/exec/Device.h"
#include "runtime/plan/PlanLoader.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dpc::exec {

using DeviceFactory =
    std::function<std::unique_ptr<Device>(const std::string &name)>;

class Executor {
public:
  /// Creates the plan's devices (by default with createDevice), allocates
  /// and initializes its memory. Throws plan::PlanError naming the plan for
  /// a device this runtime lacks.
  explicit Executor(std::shared_ptr<const plan::LoadedPlan> plan,
                    const DeviceFactory &factory = createDevice);
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  const plan::LoadedPlan &getPlan() const { return *plan; }
  /// Index of the step called `name`, or -1.
  int findStep(std::string_view name) const { return plan->findStep(name); }
  /// The largest batch step `step` runs (its compiled batch).
  int64_t getMaxBatch(int step) const { return plan->getMaxBatch(step); }

  /// The tensor bound to input/output `name` of `step`, or null.
  const plan::Tensor *findInput(int step, std::string_view name) const;
  const plan::Tensor *findOutput(int step, std::string_view name) const;

  /// Copies `bytes` into input `name` of `step` (at most its compiled size).
  /// Throws std::invalid_argument for an unknown name or too many bytes.
  void setInput(int step, std::string_view name, const void *data,
                size_t bytes);
  /// Runs `step` on `batch` rows (1..getMaxBatch, any batch for a step
  /// without batch tensors) and waits for it. Throws std::runtime_error if
  /// a kernel fails.
  void run(int step, int64_t batch);
  /// Copies output `name` of the last run of `step`, at its batch, into
  /// `data` (`bytes` must be what getOutputBytes says).
  void getOutput(int step, std::string_view name, void *data,
                 size_t bytes) const;
  size_t getOutputBytes(int step, std::string_view name) const;
  /// A one-element output converted to double, whatever its dtype.
  double getScalarOutput(int step, std::string_view name) const;

  /// Training state: persistent tensors by index into Plan.persistent.
  size_t getNumPersistent() const { return persistent.size(); }
  size_t getPersistentBytes(size_t index) const;
  void readPersistent(size_t index, void *data) const;
  void writePersistent(size_t index, const void *data);
  int64_t getOptimizerStep() const { return optimizerStep; }
  void setOptimizerStep(int64_t step) { optimizerStep = step; }

private:
  struct StepState;
  StepState &getStep(int step) const;
  std::vector<int64_t> runtimeDims(const plan::Tensor &tensor,
                                   int64_t batch) const;

  std::shared_ptr<const plan::LoadedPlan> plan;
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<DeviceBuffer> persistent;
  std::vector<std::unique_ptr<StepState>> steps;
  int64_t optimizerStep = 0;
};

} // namespace dpc::exec

#endif // DPC_RUNTIME_EXEC_EXECUTOR_H
