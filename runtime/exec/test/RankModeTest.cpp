//===- RankModeTest.cpp - one executor per device, ranks on threads -------===//
//
// Rank mode (Executor.h) with the ranks on threads over an in-process group:
// each rank's executor drives one device and binds only its rows, and the
// ranks together must compute, bit for bit, what one executor driving every
// device computes -- losses, counts and the training state -- with even and
// uneven splits and ragged batches; the scalar outputs ride on a gradient
// all-reduce. Also: the world size must match the plan, and rank 0's state
// wins over a rank that starts elsewhere.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/InProcessCommunicator.h"
#include "runtime/comm/test/OnEveryRank.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/test/TestPlans.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <thread>

namespace dpc::rt {
namespace {

using plan::test::Batch;
using plan::test::MlpPlanOptions;
using plan::test::randomBatch;
using Rows = std::vector<int64_t>;

MlpPlanOptions smallMlp(Rows split) {
  return plan::test::smallMlp(std::move(split), /*momentum=*/0.9);
}

std::shared_ptr<const plan::LoadedPlan> loadPlan(const MlpPlanOptions &o) {
  return plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(o), "dp.plan");
}

/// What the run saw: per step the global loss and count, then the state.
struct Record {
  std::vector<double> losses, counts;
  std::vector<std::vector<uint8_t>> state;
};

/// Trains `batches` on `executor`, binding rows [first, first + count) of
/// each (all of them outside rank mode).
Record train(Executor &executor, const std::vector<Batch> &batches,
             int64_t pixels) {
  Record record;
  int step = executor.findStep(plan::StepRole::Train);
  for (const Batch &batch : batches) {
    int64_t rows = int64_t(batch.labels.size());
    auto [first, count] = executor.getLocalRows(step, rows).at(0);
    executor.setInput(step, "images", batch.images.data() + first * pixels,
                      count * pixels * 4);
    executor.setInput(step, "labels", batch.labels.data() + first, count * 4);
    float lr = 0.1f;
    executor.setInput(step, "lr", &lr, 4);
    executor.run(step, rows);
    record.losses.push_back(executor.getScalarOutput(step, "loss"));
    record.counts.push_back(executor.getScalarOutput(step, "correct"));
  }
  for (size_t index : executor.getPrimaryPersistent()) {
    std::vector<uint8_t> bytes(executor.getPersistentBytes(index));
    executor.readPersistent(index, bytes.data());
    record.state.push_back(std::move(bytes));
  }
  return record;
}

using comm::test::onEveryRank;

void expectRanksMatchOneProcess(const Rows &split) {
  MlpPlanOptions o = smallMlp(split);
  auto loaded = loadPlan(o);
  int64_t pixels = o.channels * o.height * o.width;
  std::vector<Batch> batches;
  uint32_t seed = 1;
  for (int64_t rows : {8, 8, 5, 1, 8, 7})
    batches.push_back(randomBatch(o, rows, seed++));

  Record expected;
  {
    Executor one(loaded);
    expected = train(one, batches, pixels);
  }
  int ranks = int(split.size());
  auto group = comm::createInProcessGroup(ranks);
  std::vector<Record> records(ranks);
  std::vector<std::string> errors(ranks);
  onEveryRank(ranks, [&](int rank) {
    try {
      Executor mine(loaded, createDevice, {std::move(group[rank]), ranks});
      EXPECT_EQ(mine.getLocalDevice(), rank);
      records[rank] = train(mine, batches, pixels);
    } catch (const std::exception &error) {
      errors[rank] = error.what();
    }
  });
  for (int rank = 0; rank < ranks; ++rank) {
    ASSERT_EQ(errors[rank], "");
    EXPECT_EQ(records[rank].losses, expected.losses) << "rank " << rank;
    EXPECT_EQ(records[rank].counts, expected.counts) << "rank " << rank;
    ASSERT_EQ(records[rank].state.size(), expected.state.size());
    for (size_t t = 0; t < expected.state.size(); ++t)
      EXPECT_EQ(records[rank].state[t], expected.state[t])
          << "rank " << rank << " tensor " << t;
  }
}

TEST(RankModeTest, TwoRanksUnevenSplitMatchOneProcess) {
  expectRanksMatchOneProcess({3, 5});
}

TEST(RankModeTest, ThreeRanksMatchOneProcess) {
  expectRanksMatchOneProcess({3, 3, 2});
}

/// Counts the all-reduces a rank issues, passing them on.
class CountingCommunicator : public comm::Communicator {
public:
  explicit CountingCommunicator(std::unique_ptr<comm::Communicator> inner)
      : inner(std::move(inner)) {}
  int getRank() const override { return inner->getRank(); }
  int getWorldSize() const override { return inner->getWorldSize(); }
  void allReduce(const std::vector<comm::ReduceBuffer> &buffers,
                 plan::ReduceOp op) override {
    ++*allReduces;
    inner->allReduce(buffers, op);
  }
  void broadcast(const std::vector<comm::ReduceBuffer> &buffers,
                 int root) override {
    inner->broadcast(buffers, root);
  }
  std::shared_ptr<int> allReduces = std::make_shared<int>(0);

private:
  std::unique_ptr<comm::Communicator> inner;
};

// The loss and the count ride on the step's gradient all-reduce: reading
// them costs no collective of its own, and they are still the global sums.
TEST(RankModeTest, ScalarOutputsRideOnAGradientAllReduce) {
  MlpPlanOptions o = smallMlp({3, 5});
  auto loaded = loadPlan(o);
  int64_t pixels = o.channels * o.height * o.width;
  std::vector<Batch> batches;
  for (uint32_t seed = 1; seed <= 4; ++seed)
    batches.push_back(randomBatch(o, 8, seed));
  int perStep = 0;
  for (const plan::Step *step : *loaded->get().steps())
    if (step->role() == plan::StepRole::Train && step->device() == 0)
      for (const plan::Stream *stream : *step->streams())
        for (const plan::Instruction *instruction : *stream->instructions())
          perStep += instruction->kernel() == plan::Kernel::AllReduce;
  ASSERT_GT(perStep, 0);

  Record expected;
  {
    Executor one(loaded);
    expected = train(one, batches, pixels);
  }
  auto group = comm::createInProcessGroup(2);
  std::vector<Record> records(2);
  std::vector<int> allReduces(2);
  onEveryRank(2, [&](int rank) {
    auto counting =
        std::make_unique<CountingCommunicator>(std::move(group[rank]));
    std::shared_ptr<int> count = counting->allReduces;
    Executor mine(loaded, createDevice, {std::move(counting), 2});
    records[rank] = train(mine, batches, pixels);
    allReduces[rank] = *count;
  });
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(allReduces[rank], perStep * int(batches.size()))
        << "rank " << rank;
    EXPECT_EQ(records[rank].losses, expected.losses) << "rank " << rank;
    EXPECT_EQ(records[rank].counts, expected.counts) << "rank " << rank;
  }
}

TEST(RankModeTest, LocalRowsFollowTheSplit) {
  auto loaded = loadPlan(smallMlp({3, 5}));
  auto group = comm::createInProcessGroup(2);
  Executor rank1(loaded, createDevice, {std::move(group[1]), 2});
  int step = rank1.findStep(plan::StepRole::Train);
  using Ranges = Executor::RowRanges;
  EXPECT_EQ(rank1.getLocalRows(step, 8), (Ranges{{3, 5}}));
  EXPECT_EQ(rank1.getLocalRows(step, 5), (Ranges{{2, 3}}));
  // Binding the global rows instead of this rank's is caught by run().
  std::vector<float> images(5 * 16);
  std::vector<int32_t> labels(5);
  rank1.setInput(step, "images", images.data(), images.size() * 4);
  rank1.setInput(step, "labels", labels.data(), labels.size() * 4);
  try {
    rank1.run(step, 5);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument &error) {
    EXPECT_NE(std::string(error.what()).find("runs 3 of 5"), std::string::npos)
        << error.what();
  }
}

TEST(RankModeTest, WorldSizeMustMatchThePlan) {
  auto loaded = loadPlan(smallMlp({4, 4}));
  auto group = comm::createInProcessGroup(3);
  try {
    Executor executor(loaded, createDevice, {std::move(group[0]), 3});
    FAIL() << "expected an error";
  } catch (const plan::PlanError &error) {
    EXPECT_EQ(std::string(error.what()),
              "dp.plan: the plan has 2 device(s), but WORLD_SIZE is 3 (a "
              "process-per-device run needs one rank per device)");
  }
}

TEST(RankModeTest, CudaDeviceNamesCountFromTheHostsLocalRank) {
  // One host: the plan's name itself (rank r of cuda:0,cuda:1 drives cuda:r).
  EXPECT_EQ(getRankDeviceName("cuda:1", 1, 1), "cuda:1");
  EXPECT_EQ(getRankDeviceName("cuda:0", 1, 1), "cuda:0");
  EXPECT_EQ(getRankDeviceName("cuda:1", 1, -1), "cuda:1");
  // Two hosts of two GPUs, cuda:0..cuda:3: ranks 2 and 3 drive their host's
  // cuda:0 and cuda:1 (LOCAL_RANK), as torchrun's workers do.
  EXPECT_EQ(getRankDeviceName("cuda:2", 2, 0), "cuda:0");
  EXPECT_EQ(getRankDeviceName("cuda:3", 3, 1), "cuda:1");
  // Other names, and names that would fall below cuda:0, are kept.
  EXPECT_EQ(getRankDeviceName("cpu:3", 3, 1), "cpu:3");
  EXPECT_EQ(getRankDeviceName("cuda:0", 3, 1), "cuda:0");
  EXPECT_EQ(getRankDeviceName("cuda:x", 3, 1), "cuda:x");
}

TEST(RankModeTest, RankZerosStateWins) {
  // Rank 1 starts from other weights: the first run broadcasts rank 0's.
  MlpPlanOptions o = smallMlp({4, 4});
  auto loaded = loadPlan(o);
  std::vector<Batch> batches = {randomBatch(o, 8, 3)};
  Record expected;
  {
    Executor one(loaded);
    expected = train(one, batches, 16);
  }
  auto group = comm::createInProcessGroup(2);
  std::vector<Record> records(2);
  onEveryRank(2, [&](int rank) {
    Executor mine(loaded, createDevice, {std::move(group[rank]), 2});
    if (rank == 1)
      for (size_t index : mine.getPrimaryPersistent()) {
        std::vector<uint8_t> noise(mine.getPersistentBytes(index), 0x3f);
        mine.writePersistent(index, noise.data());
      }
    records[rank] = train(mine, batches, 16);
  });
  EXPECT_EQ(records[1].state, expected.state);
  EXPECT_EQ(records[1].losses, expected.losses);
}

} // namespace
} // namespace dpc::rt
