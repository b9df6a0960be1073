//===- InProcessCommunicator.cpp - collectives between threads ------------===//

#include "runtime/comm/InProcessCommunicator.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/comm/Reduction.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>

namespace dpc::comm {
namespace {

/// Blocks until all `count` threads have arrived; reusable.
class Barrier {
public:
  explicit Barrier(int count) : count(count) {}
  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t generation = this->generation;
    if (++arrived == count) {
      arrived = 0;
      ++this->generation;
      lock.unlock();
      released.notify_all();
      return;
    }
    released.wait(lock, [&] { return this->generation != generation; });
  }

private:
  std::mutex mutex;
  std::condition_variable released;
  int count, arrived = 0;
  uint64_t generation = 0;
};

/// What the ranks share: the buffers each one posted for the current call.
struct Group {
  explicit Group(int size)
      : size(size), posted(size), sharded(size), ops(size), roots(size),
        barrier(size) {}
  int size;
  std::vector<const std::vector<ReduceBuffer> *> posted;
  std::vector<const std::vector<ShardedBuffer> *> sharded;
  std::vector<ReduceOp> ops;
  std::vector<int> roots; // broadcast
  Barrier barrier;
};

/// Elements are handed to ranks in blocks of this many, so that two ranks
/// never write the same cache line of a f32 buffer.
constexpr int64_t kBlock = 16;

/// Reduces elements [begin, end) of buffer `b` across the ranks and writes
/// the result into every rank's buffer.
template <typename T>
void reduceRange(const Group &group, size_t b, int64_t begin, int64_t end,
                 ReduceOp op) {
  constexpr int64_t kChunk = 1024;
  T acc[kChunk];
  for (int64_t start = begin; start < end; start += kChunk) {
    int64_t n = std::min(kChunk, end - start);
    auto at = [&](int rank) {
      return static_cast<T *>((*group.posted[rank])[b].data) + start;
    };
    std::copy_n(at(0), n, acc);
    for (int rank = 1; rank < group.size; ++rank)
      combine(acc, at(rank), n, op);
    if (op == ReduceOp::Mean)
      for (int64_t i = 0; i < n; ++i)
        acc[i] /= static_cast<T>(group.size);
    for (int rank = 0; rank < group.size; ++rank)
      std::copy_n(acc, n, at(rank));
  }
}

/// Empty if every rank posted the same call as rank 0; otherwise why not.
std::string findMismatch(const Group &group,
                         const char *operation = "all-reduce") {
  const std::vector<ReduceBuffer> &first = *group.posted[0];
  for (int rank = 1; rank < group.size; ++rank) {
    const std::vector<ReduceBuffer> &other = *group.posted[rank];
    std::string where =
        std::string(operation) + ": rank " + std::to_string(rank);
    if (group.ops[rank] != group.ops[0])
      return where + " reduces with another op than rank 0";
    if (other.size() != first.size())
      return where + " passed " + std::to_string(other.size()) +
             " buffers, rank 0 passed " + std::to_string(first.size());
    for (size_t b = 0; b < first.size(); ++b)
      if (other[b].count != first[b].count || other[b].dtype != first[b].dtype)
        return where + " buffer " + std::to_string(b) + " has " +
               std::to_string(other[b].count) + " " +
               plan::EnumNameDType(other[b].dtype) + ", rank 0's has " +
               std::to_string(first[b].count) + " " +
               plan::EnumNameDType(first[b].dtype);
  }
  return {};
}

/// Empty if every rank posted the same sharded call as rank 0; otherwise
/// why not.
std::string findShardedMismatch(const Group &group, const char *operation) {
  const std::vector<ShardedBuffer> &first = *group.sharded[0];
  for (int rank = 1; rank < group.size; ++rank) {
    const std::vector<ShardedBuffer> &other = *group.sharded[rank];
    std::string where =
        std::string(operation) + ": rank " + std::to_string(rank);
    if (group.ops[rank] != group.ops[0])
      return where + " reduces with another op than rank 0";
    if (other.size() != first.size())
      return where + " passed " + std::to_string(other.size()) +
             " buffers, rank 0 passed " + std::to_string(first.size());
    for (size_t b = 0; b < first.size(); ++b)
      if (other[b].sizes != first[b].sizes || other[b].dtype != first[b].dtype)
        return where + " buffer " + std::to_string(b) +
               " is split or typed otherwise than rank 0's";
  }
  return {};
}

/// Rank `rank`'s part of sharded buffer `b`, reduced over every rank's
/// whole in rank order (as reduceRange does), into its `part`.
template <typename T>
void reducePart(const Group &group, size_t b, int rank, ReduceOp op) {
  const ShardedBuffer &mine = (*group.sharded[rank])[b];
  int64_t offset = mine.getOffset(rank), n = mine.sizes[rank];
  auto *out = static_cast<T *>(mine.part);
  auto at = [&](int r) {
    return static_cast<const T *>((*group.sharded[r])[b].whole) + offset;
  };
  if (n == 0)
    return;
  // The part may alias this rank's whole: combine into a copy of rank 0's
  // elements, chunk by chunk, then write.
  constexpr int64_t kChunk = 1024;
  T acc[kChunk];
  for (int64_t start = 0; start < n; start += kChunk) {
    int64_t count = std::min(kChunk, n - start);
    std::copy_n(at(0) + start, count, acc);
    for (int r = 1; r < group.size; ++r)
      combine(acc, at(r) + start, count, op);
    if (op == ReduceOp::Mean)
      for (int64_t i = 0; i < count; ++i)
        acc[i] /= static_cast<T>(group.size);
    std::copy_n(acc, count, out + start);
  }
}

class InProcessCommunicator : public Communicator {
public:
  InProcessCommunicator(std::shared_ptr<Group> group, int rank)
      : group(std::move(group)), rank(rank) {}

  int getRank() const override { return rank; }
  int getWorldSize() const override { return group->size; }

  void allReduce(const std::vector<ReduceBuffer> &buffers,
                 ReduceOp op) override {
    // Checked before the barrier: every rank runs the same plan, so every
    // rank throws here alike and none is left waiting.
    for (const ReduceBuffer &buffer : buffers)
      if (buffer.count < 0 ||
          (buffer.dtype != DType::F32 && buffer.dtype != DType::F64 &&
           buffer.dtype != DType::I32 && buffer.dtype != DType::I64))
        throw CommError(std::string("all-reduce: unsupported buffer (") +
                        plan::EnumNameDType(buffer.dtype) + ", " +
                        std::to_string(buffer.count) + " elements)");
    if (op != ReduceOp::Sum && op != ReduceOp::Mean && op != ReduceOp::Max)
      throw CommError("all-reduce: unknown reduce op");
    if (group->size == 1)
      return; // Sum, Mean and Max of one rank are the identity.

    group->posted[rank] = &buffers;
    group->ops[rank] = op;
    group->barrier.arriveAndWait();
    // Every rank sees the same posts, so every rank reaches the same verdict.
    std::string mismatch = findMismatch(*group);
    if (mismatch.empty())
      reduceMySlice(buffers, op);
    // Nobody may return (and reuse its buffers or its post) before every
    // rank has finished writing into them.
    group->barrier.arriveAndWait();
    if (!mismatch.empty())
      throw CommError(mismatch);
  }

  void broadcast(const std::vector<ReduceBuffer> &buffers, int root) override {
    if (root < 0 || root >= group->size)
      throw CommError("broadcast: root " + std::to_string(root) +
                      " is not a rank of " + std::to_string(group->size));
    if (group->size == 1)
      return;
    group->posted[rank] = &buffers;
    group->roots[rank] = root;
    group->ops[rank] = ReduceOp::Sum; // not compared: no op
    group->barrier.arriveAndWait();
    std::string mismatch = findMismatch(*group, "broadcast");
    for (int r = 1; r < group->size && mismatch.empty(); ++r)
      if (group->roots[r] != group->roots[0])
        mismatch = "broadcast: rank " + std::to_string(r) +
                   " broadcasts from another root than rank 0";
    if (mismatch.empty() && rank != root) {
      const std::vector<ReduceBuffer> &source = *group->posted[root];
      for (size_t b = 0; b < buffers.size(); ++b)
        if (buffers[b].count > 0) // an empty buffer may be null
          std::memcpy(buffers[b].data, source[b].data,
                      buffers[b].count * plan::getDTypeSize(buffers[b].dtype));
    }
    group->barrier.arriveAndWait();
    if (!mismatch.empty())
      throw CommError(mismatch);
  }

  void reduceScatter(const std::vector<ShardedBuffer> &buffers,
                     ReduceOp op) override {
    checkSharded(buffers, "reduce-scatter");
    for (const ShardedBuffer &buffer : buffers)
      if (buffer.dtype != DType::F32 && buffer.dtype != DType::F64 &&
          buffer.dtype != DType::I32 && buffer.dtype != DType::I64)
        throw CommError(std::string("reduce-scatter: unsupported dtype ") +
                        plan::EnumNameDType(buffer.dtype));
    if (op != ReduceOp::Sum && op != ReduceOp::Mean && op != ReduceOp::Max)
      throw CommError("reduce-scatter: unknown reduce op");
    std::string mismatch = postSharded(buffers, op, "reduce-scatter");
    if (mismatch.empty())
      for (size_t b = 0; b < buffers.size(); ++b)
        switch (buffers[b].dtype) {
        case DType::F32:
          reducePart<float>(*group, b, rank, op);
          break;
        case DType::F64:
          reducePart<double>(*group, b, rank, op);
          break;
        case DType::I32:
          reducePart<int32_t>(*group, b, rank, op);
          break;
        default:
          reducePart<int64_t>(*group, b, rank, op);
          break;
        }
    group->barrier.arriveAndWait();
    if (!mismatch.empty())
      throw CommError(mismatch);
  }

  void allGather(const std::vector<ShardedBuffer> &buffers) override {
    checkSharded(buffers, "all-gather");
    std::string mismatch = postSharded(buffers, ReduceOp::Sum, "all-gather");
    // Each rank writes only its own wholes, reading every rank's parts,
    // which nobody writes during the call.
    for (size_t b = 0; b < buffers.size() && mismatch.empty(); ++b) {
      int64_t size = plan::getDTypeSize(buffers[b].dtype);
      auto *whole = static_cast<uint8_t *>(buffers[b].whole);
      for (int r = 0; r < group->size; ++r) {
        const ShardedBuffer &from = (*group->sharded[r])[b];
        uint8_t *to = whole + from.getOffset(r) * size;
        if (from.sizes[r] > 0 && to != from.part)
          std::memcpy(to, from.part, from.sizes[r] * size);
      }
    }
    group->barrier.arriveAndWait();
    if (!mismatch.empty())
      throw CommError(mismatch);
  }

private:
  /// Posts a sharded call and waits for every rank's: the verdict on them.
  std::string postSharded(const std::vector<ShardedBuffer> &buffers,
                          ReduceOp op, const char *operation) {
    group->sharded[rank] = &buffers;
    group->ops[rank] = op;
    group->barrier.arriveAndWait();
    return findShardedMismatch(*group, operation);
  }

  /// This rank's blocks of the buffers' concatenated elements.
  void reduceMySlice(const std::vector<ReduceBuffer> &buffers, ReduceOp op) {
    int64_t total = 0;
    for (const ReduceBuffer &buffer : buffers)
      total += buffer.count;
    int64_t blocks = (total + kBlock - 1) / kBlock;
    int64_t begin = std::min(total, blocks * rank / group->size * kBlock);
    int64_t end = std::min(total, blocks * (rank + 1) / group->size * kBlock);
    int64_t offset = 0;
    for (size_t b = 0; b < buffers.size() && offset < end; ++b) {
      int64_t lo = std::max(begin, offset) - offset;
      int64_t hi = std::min(end, offset + buffers[b].count) - offset;
      offset += buffers[b].count;
      if (lo >= hi)
        continue;
      switch (buffers[b].dtype) {
      case DType::F32:
        reduceRange<float>(*group, b, lo, hi, op);
        break;
      case DType::F64:
        reduceRange<double>(*group, b, lo, hi, op);
        break;
      case DType::I32:
        reduceRange<int32_t>(*group, b, lo, hi, op);
        break;
      default:
        reduceRange<int64_t>(*group, b, lo, hi, op);
        break;
      }
    }
  }

  std::shared_ptr<Group> group;
  int rank;
};

} // namespace

std::vector<std::unique_ptr<Communicator>> createInProcessGroup(int worldSize) {
  if (worldSize < 1)
    throw CommError("a communicator group needs at least one rank");
  auto group = std::make_shared<Group>(worldSize);
  std::vector<std::unique_ptr<Communicator>> ranks;
  for (int rank = 0; rank < worldSize; ++rank)
    ranks.push_back(std::make_unique<InProcessCommunicator>(group, rank));
  return ranks;
}

} // namespace dpc::comm
