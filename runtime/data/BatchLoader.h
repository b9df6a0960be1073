//===- BatchLoader.h - shuffled batches, prefetched -------------*- C++ -*-===//
//
// Cuts a Dataset into batches in a shuffled order and assembles the next
// batch on a background thread while the caller trains on the current one.
// The order of epoch E depends only on (seed, E), so a run resumed at epoch E
// sees exactly the batches an uninterrupted run would have seen.
//
// A process-per-device run shards each global batch (DistributedSampler's
// role): every rank walks the same global order and assembles only its own
// rows of each batch, those the RowSlice says. When the data set does not
// divide into batches, the last one is short (as in a one-process run),
// dropped, or padded with samples from the start of the epoch's order.
//
// With an Augmentation, each image is cropped and flipped as it is copied
// into its batch, by the draw of (seed, epoch, sample index): the same on
// every rank, whichever rows it assembles.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_DATA_BATCHLOADER_H
#define DPC_RUNTIME_DATA_BATCHLOADER_H

#include "runtime/data/Dataset.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dpc::data {

struct Batch {
  int64_t size = 0; // global rows; the last batch of an epoch may be short
  std::vector<float> images;   // this process's rows (all without a RowSlice)
  std::vector<int32_t> labels; // this process's rows' targets (Dataset's)
  std::vector<std::vector<float>> extras; // the data set's extras, same rows
  /// The global batch's targets that count (all rows, every process):
  /// those not equal to the ignore index. An accuracy's divisor.
  int64_t countedTargets = 0;
};

/// What happens to the last batch of an epoch when it is not full.
enum class LastBatch { Short, Drop, Pad };

/// Rows [first, first + count) of a global batch, as {first, count}.
using RowRanges = std::vector<std::pair<int64_t, int64_t>>;
/// This process's rows of a global batch of `rows` rows, in order: one
/// range, or one per micro-batch with gradient accumulation.
using RowSlice = std::function<RowRanges(int64_t rows)>;

/// The permutation of [0, count) used for epoch `epoch`: Fisher-Yates driven
/// by a fixed-definition generator, so it is the same on every platform.
std::vector<int64_t> epochOrder(int64_t count, uint64_t seed, int64_t epoch);

class BatchLoader {
public:
  BatchLoader(const Dataset &dataset, int64_t batchSize, bool shuffle,
              uint64_t seed, LastBatch last = LastBatch::Short,
              RowSlice slice = {}, Augmentation augmentation = {});
  ~BatchLoader();
  BatchLoader(const BatchLoader &) = delete;
  BatchLoader &operator=(const BatchLoader &) = delete;

  int64_t batchesPerEpoch() const;

  /// Starts (or restarts) epoch `epoch`; prefetching begins at once.
  void startEpoch(int64_t epoch);
  /// The next batch of the current epoch, or null after its last one. The
  /// batch stays valid until the next call.
  const Batch *next();

private:
  void produce();
  void fill(Batch &batch, int64_t index, int64_t epoch,
            const std::vector<int64_t> &sampleOrder) const;
  /// Batch::countedTargets of the global batch of `rows` rows from `begin`.
  int64_t countTargets(const std::vector<int64_t> &sampleOrder, int64_t begin,
                       int64_t rows) const;

  const Dataset &dataset;
  const int64_t batchSize;
  const bool shuffle;
  const uint64_t seed;
  const LastBatch last;
  const RowSlice slice;
  const Augmentation augmentation;

  std::mutex mutex;
  std::condition_variable changed;
  /// Shared with the producer, which reads it unlocked while it fills.
  std::shared_ptr<const std::vector<int64_t>> order;
  int64_t epoch = 0;        // the epoch `order` belongs to
  int64_t generation = 0;   // bumped by startEpoch: stale work is dropped
  int64_t nextToFill = 0;   // batch index the producer assembles next
  int64_t nextToReturn = 0; // batch index next() hands out next
  std::deque<std::unique_ptr<Batch>> ready, free;
  std::unique_ptr<Batch> current;
  bool stopping = false;
  std::thread producer;
};

} // namespace dpc::data

#endif // DPC_RUNTIME_DATA_BATCHLOADER_H
