//===- ShardedCheck.h - reduce-scatter and all-gather against all-reduce -===//
//
// Random rounds on one group: every reduce-scatter must leave in each
// rank's part exactly the bytes that an all-reduce of the same inputs, on
// the same group, leaves at that part's offset; every all-gather must
// leave in each rank's whole the concatenation of the ranks' parts.
// Parts are uneven (0 included), in place or apart, several buffers of
// mixed dtypes per call.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_COMM_TEST_SHARDEDCHECK_H
#define DPC_RUNTIME_COMM_TEST_SHARDEDCHECK_H

#include "runtime/abi/PlanTypes.h"
#include "runtime/comm/Communicator.h"
#include "runtime/comm/test/OnEveryRank.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>

namespace dpc::comm::test {

/// One buffer of a round: its dtype, split and every rank's bytes.
struct ShardedRoundBuffer {
  DType dtype;
  std::vector<int64_t> sizes;
  std::vector<std::vector<uint8_t>> wholes, parts; // per rank
  int64_t count() const {
    int64_t n = 0;
    for (int64_t size : sizes)
      n += size;
    return n;
  }
  int64_t offset(int rank) const {
    int64_t n = 0;
    for (int r = 0; r < rank; ++r)
      n += sizes[r];
    return n;
  }
};

inline void fillShardedRandom(std::vector<uint8_t> &bytes, DType dtype,
                              int64_t count, std::mt19937 &random) {
  bytes.resize(count * plan::getDTypeSize(dtype));
  for (int64_t i = 0; i < count; ++i) {
    double value = double(int64_t(random() % 20001) - 10000) / 7.0;
    uint8_t *at = bytes.data() + i * plan::getDTypeSize(dtype);
    auto put = [&](auto typed) { std::memcpy(at, &typed, sizeof(typed)); };
    switch (dtype) {
    case DType::F32:
      put(float(value));
      break;
    case DType::F64:
      put(value);
      break;
    case DType::I32:
      put(int32_t(value));
      break;
    default:
      put(int64_t(value));
      break;
    }
  }
}

inline void
checkShardedCollectives(std::vector<std::unique_ptr<Communicator>> &group,
                        int rounds, uint32_t seed) {
  int ranks = static_cast<int>(group.size());
  std::mt19937 random(seed);
  for (int round = 0; round < rounds; ++round) {
    static const DType kDtypes[] = {DType::F32, DType::F64, DType::I32,
                                    DType::I64};
    bool inPlace = random() % 2;
    bool gather = random() % 3 == 0;
    ReduceOp op = static_cast<ReduceOp>(random() % 3);
    std::vector<ShardedRoundBuffer> round_(1 + random() % 3);
    for (ShardedRoundBuffer &buffer : round_) {
      buffer.dtype = kDtypes[random() % 4];
      int64_t sizes[] = {0, 1, 3, 16, 17, 1000 + int64_t(random() % 3000)};
      for (int r = 0; r < ranks; ++r)
        buffer.sizes.push_back(sizes[random() % 6]);
      buffer.wholes.resize(ranks);
      buffer.parts.resize(ranks);
      for (int r = 0; r < ranks; ++r) {
        fillShardedRandom(buffer.wholes[r], buffer.dtype, buffer.count(),
                          random);
        fillShardedRandom(buffer.parts[r], buffer.dtype, buffer.sizes[r],
                          random);
      }
    }
    // The reference: all-reduce of copies of the wholes.
    std::vector<ShardedRoundBuffer> reference = round_;
    if (!gather)
      onEveryRank(ranks, [&](int rank) {
        std::vector<ReduceBuffer> wholes;
        for (ShardedRoundBuffer &buffer : reference)
          wholes.push_back(
              {buffer.wholes[rank].data(), buffer.count(), buffer.dtype});
        group[rank]->allReduce(wholes, op);
      });
    onEveryRank(ranks, [&](int rank) {
      std::vector<ShardedBuffer> buffers;
      for (ShardedRoundBuffer &buffer : round_) {
        uint8_t *whole = buffer.wholes[rank].data();
        uint8_t *part = inPlace ? whole + buffer.offset(rank) *
                                              plan::getDTypeSize(buffer.dtype)
                                : buffer.parts[rank].data();
        buffers.push_back({whole, part, buffer.sizes, buffer.dtype});
      }
      if (gather)
        group[rank]->allGather(buffers);
      else
        group[rank]->reduceScatter(buffers, op);
    });
    for (size_t b = 0; b < round_.size(); ++b) {
      const ShardedRoundBuffer &got = round_[b], &want = reference[b];
      size_t element = plan::getDTypeSize(got.dtype);
      for (int rank = 0; rank < ranks; ++rank) {
        std::string where =
            "round " + std::to_string(round) + " buffer " + std::to_string(b) +
            " rank " + std::to_string(rank) + (inPlace ? " (in place)" : "");
        if (gather) {
          // Every rank's part, from where that rank kept it.
          for (int r = 0; r < ranks; ++r) {
            const uint8_t *source =
                inPlace ? want.wholes[r].data() + got.offset(r) * element
                        : want.parts[r].data();
            ASSERT_EQ(0, std::memcmp(got.wholes[rank].data() +
                                         got.offset(r) * element,
                                     source, got.sizes[r] * element))
                << where << ", part of rank " << r;
          }
          continue;
        }
        const uint8_t *part =
            inPlace ? got.wholes[rank].data() + got.offset(rank) * element
                    : got.parts[rank].data();
        ASSERT_EQ(0, std::memcmp(part,
                                 want.wholes[rank].data() +
                                     got.offset(rank) * element,
                                 got.sizes[rank] * element))
            << where;
      }
    }
  }
}

} // namespace dpc::comm::test

#endif // DPC_RUNTIME_COMM_TEST_SHARDEDCHECK_H
