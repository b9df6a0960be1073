//===- StepGraphTest.cpp - a step recorded once and replayed
//---------------===//
//
// On a device that records steps (CUDA graphs; here the CPU's recording,
// which keeps each kernel's call as it was, as a CUDA graph does), the
// executor records a replica's train step the second time a key comes (the
// slot its inputs are in, its rows, the batch, whether it is the first
// update) and replays it from then on. Training that way must give, bit for
// bit, the losses and parameters of kernel-by-kernel runs: with uneven
// batches, a learning rate that changes every step (it lives in memory the
// kernels read, not in the recording), SGD's first-step rule, AdamW's step
// count, and a step of two streams ordered by an event. Steps with
// collectives are not recorded and still train alike.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/CpuDevice.h"
#include "runtime/exec/test/TrainingRuns.h"

#include <gtest/gtest.h>

namespace dpc::rt {
namespace {

using plan::test::Batch;
using plan::test::MlpPlanOptions;
using plan::test::randomBatch;

/// A CPU device that records steps and counts what it records and replays.
class RecordingCpuDevice : public CpuDevice {
public:
  RecordingCpuDevice(std::string name, int *recorded, int *replayed)
      : CpuDevice(std::move(name)), recorded(recorded), replayed(replayed) {
    setRecordsSteps(true);
  }
  std::unique_ptr<StepGraph> endCapture(const std::vector<Stream *> &streams,
                                        std::string &why) override {
    auto graph = CpuDevice::endCapture(streams, why);
    *recorded += graph != nullptr;
    return graph;
  }
  void replay(StepGraph &graph, Stream &origin) override {
    ++*replayed;
    CpuDevice::replay(graph, origin);
  }

private:
  int *recorded, *replayed;
};

using test::Trained;

Trained train(const MlpPlanOptions &o, const std::vector<Batch> &batches,
              const DeviceFactory &factory) {
  Executor executor(
      plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(o), "graph.plan"),
      factory);
  // A learning rate per run: a run reading a stale one would show.
  return test::trainOn(executor, batches,
                       [](size_t i) { return 0.02f * float(i + 1); });
}

void expectSameTraining(const MlpPlanOptions &o, int expectedRecorded,
                        int expectedReplayed) {
  std::vector<Batch> batches;
  uint32_t seed = 70;
  for (int64_t rows : {8, 8, 8, 8, 5, 8, 8, 5, 8, 8})
    batches.push_back(randomBatch(o, rows, seed++));
  Trained expected = train(o, batches, createDevice);
  int recorded = 0, replayed = 0;
  Trained graphs =
      train(o, batches, [&](const std::string &name, const DeviceOptions &) {
        return std::make_unique<RecordingCpuDevice>(name, &recorded, &replayed);
      });
  EXPECT_EQ(recorded, expectedRecorded);
  EXPECT_EQ(replayed, expectedReplayed);
  EXPECT_EQ(graphs.losses, expected.losses);
  ASSERT_EQ(graphs.state.size(), expected.state.size());
  for (size_t i = 0; i < expected.state.size(); ++i)
    EXPECT_EQ(graphs.state[i], expected.state[i]) << "persistent " << i;
}

// Runs alternate slots 0, 1, 0, ...; the rows 8, 8, 8, 8, 5, 8, 8, 5, 8, 8
// give keys (slot, rows, first update): (0,8,y) (1,8,n) (0,8,n) (1,8,n)
// (0,5,n) (1,8,n) (0,8,n) (1,5,n) (0,8,n) (1,8,n). Recorded at a key's
// second run: (1,8,n) at run 4, (0,8,n) at run 7; replayed then and at
// every later run of those keys: runs 4, 6, 7, 9, 10.
TEST(StepGraphTest, SgdWithMomentumTrainsLikeKernelByKernel) {
  expectSameTraining(plan::test::smallMlp({}, /*momentum=*/0.9), 2, 5);
}

TEST(StepGraphTest, AdamWReadsItsStepFromMemory) {
  MlpPlanOptions o = plan::test::smallMlp({}, 0.0);
  o.optimizer = "adamw";
  o.weightDecay = 0.01;
  expectSameTraining(o, 2, 5);
}

TEST(StepGraphTest, TwoStreamsOrderedByAnEvent) {
  MlpPlanOptions o = plan::test::smallMlp({}, 0.9);
  o.twoStreams = true;
  expectSameTraining(o, 2, 5);
}

TEST(StepGraphTest, StepsWithCollectivesAreNotRecorded) {
  expectSameTraining(plan::test::smallMlp({5, 3}, 0.9), 0, 0);
}

} // namespace
} // namespace dpc::rt
