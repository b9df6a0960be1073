//===- MicroBatchRunner.cpp - gradient accumulation's micro-batches -------===//

#include "runtime/exec/MicroBatchRunner.h"
#include "runtime/exec/ReplicaDriver.h"
#include "runtime/exec/TrainingState.h"

#include <algorithm>
#include <stdexcept>

namespace dpc::rt {

std::vector<int64_t> chunkBatch(int64_t batch, int64_t parts) {
  std::vector<int64_t> chunks;
  int64_t chunk = (batch + parts - 1) / parts;
  for (int64_t left = batch; left > 0; left -= chunk)
    chunks.push_back(std::min(chunk, left));
  return chunks;
}

MicroBatchRunner::MicroBatchRunner(Replicas &replicas, ReplicaDriver &driver,
                                   TrainingState &state, int64_t gradAccum,
                                   int trainStep, int accumFirst, int accumStep)
    : replicas(replicas), driver(driver), state(state), gradAccum(gradAccum),
      trainStep(trainStep), accumFirst(accumFirst), accumStep(accumStep) {}

void MicroBatchRunner::stage(const plan::Tensor &tensor, std::string_view name,
                             const void *data, size_t bytes) {
  // Up to K micro-batches of rows, for start() to split.
  int64_t maxBatch = replicas.getGroup(trainStep).maxBatch * gradAccum;
  int64_t rowBytes = rowBytesOf(tensor);
  if (rowBytes == 0 || static_cast<int64_t>(bytes) % rowBytes != 0 ||
      static_cast<int64_t>(bytes) / rowBytes > maxBatch)
    throw std::invalid_argument(
        "input '" + std::string(name) + "' takes up to " +
        std::to_string(maxBatch) + " rows of " + std::to_string(rowBytes) +
        " bytes, got " + std::to_string(bytes) + " bytes");
  const auto *source = static_cast<const uint8_t *>(data);
  staged[std::string(name)] = {std::vector<uint8_t>(source, source + bytes),
                               rowBytes};
}

void MicroBatchRunner::start(int64_t batch) {
  StepGroup &group = replicas.getGroup(trainStep);
  int64_t maxBatch = group.maxBatch * gradAccum;
  if (batch < 1 || batch > maxBatch)
    throw std::invalid_argument("batch " + std::to_string(batch) +
                                " is outside 1.." + std::to_string(maxBatch) +
                                " for step '" + group.name + "'");
  // torch.chunk's rule; only non-empty micro-batches run, the last one as
  // the train step itself, which adds the accumulated gradients. Rank mode
  // holds this rank's part of each (Executor::getLocalRows).
  std::vector<int64_t> micro = chunkBatch(batch, gradAccum);
  std::vector<int64_t> held = driver.getHeldRows(group, batch, micro);
  int64_t heldRows = 0;
  for (int64_t rows : held)
    heldRows += rows;
  for (const auto &[name, input] : staged)
    if (int64_t(input.bytes.size()) != heldRows * input.rowBytes)
      throw std::invalid_argument(
          "input '" + name + "' holds " +
          std::to_string(input.bytes.size() / input.rowBytes) +
          " rows, but step '" + group.name + "' runs " +
          std::to_string(heldRows) +
          (heldRows != batch ? " of " + std::to_string(batch) : ""));
  if (micro.size() == 1) // no accumulation step restarts the sums
    state.zero(plan::PersistentKind::GradAccumulator);
  group.earlierScalars.clear();
  int64_t offset = 0, firstRow = 0;
  for (size_t m = 0; m < micro.size(); ++m) {
    bool last = m + 1 == micro.size();
    int target = last ? trainStep : m == 0 ? accumFirst : accumStep;
    StepGroup &targetGroup = replicas.getGroup(target);
    for (const auto &[name, input] : staged) {
      const plan::Tensor *tensor =
          replicas.findBindingOf(targetGroup, name, true);
      if (tensor)
        replicas.bindInput(targetGroup, *tensor, name,
                           input.bytes.data() + offset * input.rowBytes,
                           held[m] * input.rowBytes);
    }
    // Every micro-batch's loss is a share of the global batch's mean.
    replicas.start(target, micro[m], batch, firstRow);
    if (last)
      break; // finish() waits for it
    replicas.finish(targetGroup);
    for (const std::string &name : replicas.getScalarOutputNames(targetGroup))
      group.earlierScalars[name] += replicas.getScalarOutput(target, name);
    offset += held[m];
    firstRow += micro[m];
  }
}

} // namespace dpc::rt
