//===- TrainingRuns.h - training a test plan through the executor -*- C++ -*-//
//
// What the executor tests (and the CUDA backend's) do to train a plan of
// runtime/plan/test/TestPlans.h and compare runs: bind a batch and a
// learning rate, read the training state back, train on a list of batches.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_TEST_TRAININGRUNS_H
#define DPC_RUNTIME_EXEC_TEST_TRAININGRUNS_H

#include "runtime/exec/Executor.h"
#include "runtime/plan/test/TestPlans.h"

#include <functional>
#include <vector>

namespace dpc::rt::test {

/// Binds `batch`'s images and labels and the learning rate `lr` to step
/// `step`'s inputs.
inline void bindBatch(Executor &executor, int step,
                      const plan::test::Batch &batch, float lr) {
  executor.setInput(step, "images", batch.images.data(),
                    batch.images.size() * 4);
  executor.setInput(step, "labels", batch.labels.data(),
                    batch.labels.size() * 4);
  executor.setInput(step, "lr", &lr, 4);
}

/// Every persistent tensor of the plan, as f32 values.
inline std::vector<std::vector<float>> readState(const Executor &executor) {
  std::vector<std::vector<float>> state;
  for (size_t i = 0; i < executor.getNumPersistent(); ++i) {
    state.emplace_back(executor.getPersistentBytes(i) / 4);
    executor.readPersistent(i, state.back().data());
  }
  return state;
}

/// The loss of each run and the training state after the last.
struct Trained {
  std::vector<double> losses;
  std::vector<std::vector<float>> state;
};

/// Runs the train step once per batch, run i at learning rate `lrOf(i)`.
inline Trained trainOn(Executor &executor,
                       const std::vector<plan::test::Batch> &batches,
                       const std::function<float(size_t)> &lrOf) {
  int step = executor.findStep(plan::StepRole::Train);
  Trained result;
  for (size_t i = 0; i < batches.size(); ++i) {
    bindBatch(executor, step, batches[i], lrOf(i));
    executor.run(step, int64_t(batches[i].labels.size()));
    result.losses.push_back(executor.getScalarOutput(step, "loss"));
  }
  result.state = readState(executor);
  return result;
}

} // namespace dpc::rt::test

#endif // DPC_RUNTIME_EXEC_TEST_TRAININGRUNS_H
