//===- MicroBatchRunner.h - gradient accumulation's micro-batches -*- C++
//-*-===//
//
// With gradient accumulation (the plan's grad_accum K > 1), the train step
// takes up to K times its replicas' batch: its batch inputs are held on the
// host, split like torch.chunk into at most K micro-batches, run by the
// accumulation steps (the first one restarts the sums, the others add to
// them) and last the train step itself, every loss averaged over the whole
// batch; its scalar outputs are then summed over the micro-batches.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_MICROBATCHRUNNER_H
#define DPC_RUNTIME_EXEC_MICROBATCHRUNNER_H

#include "runtime/exec/Replicas.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dpc::rt {

class ReplicaDriver;
class TrainingState;

/// torch.chunk's rule: ceil(batch / parts) rows per chunk, the last one
/// shorter, so that there may be fewer than `parts` chunks.
std::vector<int64_t> chunkBatch(int64_t batch, int64_t parts);

class MicroBatchRunner {
public:
  /// Runs `trainStep`'s micro-batches through `accumFirst` and `accumStep`
  /// (plan step indices), `gradAccum` of them at most.
  MicroBatchRunner(Replicas &replicas, ReplicaDriver &driver,
                   TrainingState &state, int64_t gradAccum, int trainStep,
                   int accumFirst, int accumStep);

  int64_t getGradAccum() const { return gradAccum; }
  /// Holds the global rows of batch input `name` (bound to `tensor`) of the
  /// train step until start() splits them.
  void stage(const plan::Tensor &tensor, std::string_view name,
             const void *data, size_t bytes);
  /// Runs every micro-batch of `batch` rows but the last, and starts the
  /// last (Replicas::finish waits for it).
  void start(int64_t batch);

private:
  Replicas &replicas;
  ReplicaDriver &driver;
  TrainingState &state;
  int64_t gradAccum;
  int trainStep, accumFirst, accumStep;
  /// The global rows of each batch input (and the bytes of one row).
  struct Staged {
    std::vector<uint8_t> bytes;
    int64_t rowBytes = 0;
  };
  std::map<std::string, Staged, std::less<>> staged;
};

} // namespace dpc::rt

#endif // DPC_RUNTIME_EXEC_MICROBATCHRUNNER_H
