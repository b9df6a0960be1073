//===- CommunicatorTest.cpp - the in-process all-reduce -------------------===//
//
// 1 to 4 ranks on threads, many rounds of random sizes (0, odd, not
// divisible by the ranks), every op and dtype: each rank must end with the
// reduction in rank order, bit for bit, and all ranks must agree.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/InProcessCommunicator.h"
#include "runtime/comm/test/OnEveryRank.h"
#include "runtime/comm/test/ShardedCheck.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

namespace dpc::comm {
namespace {

using test::onEveryRank;

template <typename T>
std::vector<T> expected(const std::vector<std::vector<T>> &inputs,
                        ReduceOp op) {
  std::vector<T> result = inputs[0];
  for (size_t r = 1; r < inputs.size(); ++r)
    for (size_t i = 0; i < result.size(); ++i) {
      T x = inputs[r][i];
      if (op == ReduceOp::Max)
        result[i] = x > result[i] ? x : result[i];
      else
        result[i] += x;
    }
  if (op == ReduceOp::Mean)
    for (T &v : result)
      v /= static_cast<T>(inputs.size());
  return result;
}

template <typename T> DType dtypeOf();
template <> DType dtypeOf<float>() { return DType::F32; }
template <> DType dtypeOf<double>() { return DType::F64; }
template <> DType dtypeOf<int32_t>() { return DType::I32; }
template <> DType dtypeOf<int64_t>() { return DType::I64; }

/// `rounds` all-reduces of one buffer of type T each, random sizes.
template <typename T> void checkRounds(int ranks, int rounds, uint32_t seed) {
  auto group = createInProcessGroup(ranks);
  std::mt19937 random(seed);
  std::vector<std::vector<std::vector<T>>> inputs(rounds);
  std::vector<ReduceOp> ops(rounds);
  for (int round = 0; round < rounds; ++round) {
    int64_t count = round % 7 == 0 ? 0 : random() % 3000;
    ops[round] = static_cast<ReduceOp>(random() % 3);
    for (int r = 0; r < ranks; ++r) {
      std::vector<T> values(count);
      for (T &v : values)
        v = static_cast<T>(int64_t(random() % 2001) - 1000) / T(7);
      inputs[round].push_back(std::move(values));
    }
  }
  std::vector<std::vector<std::vector<T>>> outputs = inputs;
  onEveryRank(ranks, [&](int rank) {
    for (int round = 0; round < rounds; ++round) {
      std::vector<T> &buffer = outputs[round][rank];
      group[rank]->allReduce(
          {{buffer.data(), int64_t(buffer.size()), dtypeOf<T>()}}, ops[round]);
    }
  });
  for (int round = 0; round < rounds; ++round) {
    std::vector<T> want = expected(inputs[round], ops[round]);
    for (int r = 0; r < ranks; ++r)
      ASSERT_TRUE(want.empty() ||
                  std::memcmp(outputs[round][r].data(), want.data(),
                              want.size() * sizeof(T)) == 0)
          << ranks << " ranks, round " << round << ", rank " << r;
  }
}

TEST(CommunicatorTest, EveryOpAndDtypeMatchesRankOrderBitForBit) {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    checkRounds<float>(ranks, 60, 1 + ranks);
    checkRounds<double>(ranks, 20, 11 + ranks);
    checkRounds<int32_t>(ranks, 20, 21 + ranks);
    checkRounds<int64_t>(ranks, 20, 31 + ranks);
  }
}

TEST(CommunicatorTest, OneCallReducesABucketOfMixedBuffers) {
  const int ranks = 3;
  auto group = createInProcessGroup(ranks);
  std::vector<std::vector<float>> a(ranks, std::vector<float>(37));
  std::vector<std::vector<int64_t>> b(ranks, std::vector<int64_t>(5));
  std::vector<std::vector<float>> c(ranks); // empty
  for (int r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < a[r].size(); ++i)
      a[r][i] = float(r * 100 + i);
    for (size_t i = 0; i < b[r].size(); ++i)
      b[r][i] = r + 1;
  }
  onEveryRank(ranks, [&](int r) {
    group[r]->allReduce({{a[r].data(), 37, DType::F32},
                         {c[r].data(), 0, DType::F32},
                         {b[r].data(), 5, DType::I64}},
                        ReduceOp::Sum);
  });
  for (int r = 0; r < ranks; ++r) {
    for (size_t i = 0; i < 37; ++i)
      EXPECT_EQ(a[r][i], float(300 + 3 * i));
    for (int64_t v : b[r])
      EXPECT_EQ(v, 6);
  }
}

TEST(CommunicatorTest, FloatSumIsTheSameOnEveryRankAndRun) {
  // Values whose sum depends on the order: the result must not.
  const int ranks = 4;
  std::vector<float> first;
  for (int run = 0; run < 5; ++run) {
    auto group = createInProcessGroup(ranks);
    std::vector<std::vector<float>> buffers(ranks);
    std::mt19937 random(5);
    std::normal_distribution<float> normal(0.f, 1e4f);
    for (auto &buffer : buffers)
      for (int i = 0; i < 1001; ++i)
        buffer.push_back(normal(random) * (i % 2 ? 1e-4f : 1.f));
    onEveryRank(ranks, [&](int r) {
      for (int round = 0; round < 3; ++round)
        group[r]->allReduce(buffers[r].data(), 1001, ReduceOp::Sum);
    });
    for (int r = 1; r < ranks; ++r)
      ASSERT_EQ(0, std::memcmp(buffers[r].data(), buffers[0].data(), 4004));
    if (run == 0)
      first = buffers[0];
    ASSERT_EQ(0, std::memcmp(first.data(), buffers[0].data(), 4004));
  }
}

TEST(CommunicatorTest, MaxPropagatesNaN) {
  auto group = createInProcessGroup(2);
  std::vector<float> x = {1.f, NAN}, y = {NAN, 2.f};
  onEveryRank(2, [&](int r) {
    group[r]->allReduce(r == 0 ? x.data() : y.data(), 2, ReduceOp::Max);
  });
  EXPECT_TRUE(std::isnan(x[0]) && std::isnan(x[1]));
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
}

TEST(CommunicatorTest, MismatchedCallsThrowOnEveryRank) {
  auto group = createInProcessGroup(2);
  std::vector<float> x(4), y(5);
  int failures = 0;
  std::mutex mutex;
  onEveryRank(2, [&](int r) {
    try {
      group[r]->allReduce(r == 0 ? x.data() : y.data(), r == 0 ? 4 : 5,
                          ReduceOp::Sum);
    } catch (const CommError &error) {
      std::lock_guard<std::mutex> lock(mutex);
      ++failures;
      EXPECT_STREQ(error.what(), "all-reduce: rank 1 buffer 0 has 5 F32, "
                                 "rank 0's has 4 F32");
    }
  });
  EXPECT_EQ(failures, 2);
  // The group is still usable.
  onEveryRank(2, [&](int r) {
    group[r]->allReduce(r == 0 ? x.data() : y.data(), 4, ReduceOp::Sum);
  });
  EXPECT_THROW(group[0]->allReduce({{x.data(), 4, DType::F16}}, ReduceOp::Sum),
               CommError);
}

TEST(CommunicatorTest, ReduceScatterAndAllGatherMatchAllReduce) {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    auto group = createInProcessGroup(ranks);
    test::checkShardedCollectives(group, 40, 10 + ranks);
  }
}

/// The base class's reduce-scatter and all-gather (what Gloo and MPI use),
/// over the in-process all-reduce and broadcast.
class GenericSharded : public Communicator {
public:
  explicit GenericSharded(std::unique_ptr<Communicator> inner)
      : inner(std::move(inner)) {}
  int getRank() const override { return inner->getRank(); }
  int getWorldSize() const override { return inner->getWorldSize(); }
  void allReduce(const std::vector<ReduceBuffer> &buffers,
                 ReduceOp op) override {
    inner->allReduce(buffers, op);
  }
  void broadcast(const std::vector<ReduceBuffer> &buffers, int root) override {
    inner->broadcast(buffers, root);
  }

private:
  std::unique_ptr<Communicator> inner;
};

TEST(CommunicatorTest, GenericReduceScatterAndAllGatherMatchAllReduce) {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    std::vector<std::unique_ptr<Communicator>> group;
    for (auto &rank : createInProcessGroup(ranks))
      group.push_back(std::make_unique<GenericSharded>(std::move(rank)));
    test::checkShardedCollectives(group, 30, 20 + ranks);
  }
}

TEST(CommunicatorTest, ShardedCallsMismatchedOrMalformedThrow) {
  auto group = createInProcessGroup(2);
  std::vector<float> whole(6), part(3);
  int failures = 0;
  std::mutex mutex;
  onEveryRank(2, [&](int r) {
    std::vector<int64_t> sizes =
        r == 0 ? std::vector<int64_t>{3, 3} : std::vector<int64_t>{2, 4};
    try {
      group[r]->reduceScatter({{whole.data(), part.data(), sizes, DType::F32}},
                              ReduceOp::Sum);
    } catch (const CommError &error) {
      std::lock_guard<std::mutex> lock(mutex);
      ++failures;
      EXPECT_STREQ(error.what(), "reduce-scatter: rank 1 buffer 0 is split "
                                 "or typed otherwise than rank 0's");
    }
  });
  EXPECT_EQ(failures, 2);
  try {
    group[0]->allGather({{whole.data(), part.data(), {6}, DType::F32}});
    FAIL() << "one part for two ranks was taken";
  } catch (const CommError &error) {
    EXPECT_STREQ(error.what(), "all-gather: buffer 0 has 1 parts for 2 ranks");
  }
}

} // namespace
} // namespace dpc::comm
