//===- PipelinedRunTest.cpp - binding the next run while one runs ---------===//
//
// Executor::start/finish let the host bind (and upload) the next run's
// inputs while a run goes on: training that way must give, bit for bit, the
// losses and parameters of run() in sequence -- on one device and on two --
// whatever the batch sizes; an input bound once must keep serving later
// runs (inputs are double-buffered); and using outputs, the training state
// or another step before finish() must be refused.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/test/TrainingRuns.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace dpc::rt {
namespace {

using plan::test::Batch;
using plan::test::MlpPlanOptions;
using plan::test::randomBatch;
using Rows = std::vector<int64_t>;

std::unique_ptr<Executor> makeExecutor(const MlpPlanOptions &o) {
  return std::make_unique<Executor>(
      plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(o), "pipe.plan"));
}

using test::readState;
constexpr auto bind = test::bindBatch;

int64_t rowsOf(const Batch &batch) { return int64_t(batch.labels.size()); }

TEST(PipelinedRunTest, OverlappedUploadsTrainLikeSequentialRuns) {
  for (const Rows &split : {Rows{}, Rows{5, 3}}) {
    MlpPlanOptions o = plan::test::smallMlp(split, /*momentum=*/0.9);
    std::vector<Batch> batches;
    uint32_t seed = 40;
    for (int64_t rows : {8, 8, 5, 8, 1, 8, 3})
      batches.push_back(randomBatch(o, rows, seed++));
    // A learning rate per step, so that a run reading the other slot's
    // value shows.
    auto lrOf = [](size_t i) { return 0.02f * float(i + 1); };

    auto sequential = makeExecutor(o);
    int train = sequential->findStep(plan::StepRole::Train);
    std::vector<double> expected;
    for (size_t i = 0; i < batches.size(); ++i) {
      bind(*sequential, train, batches[i], lrOf(i));
      sequential->run(train, rowsOf(batches[i]));
      expected.push_back(sequential->getScalarOutput(train, "loss"));
    }

    auto pipelined = makeExecutor(o);
    std::vector<double> losses;
    bind(*pipelined, train, batches[0], lrOf(0));
    pipelined->start(train, rowsOf(batches[0]));
    for (size_t i = 0; i < batches.size(); ++i) {
      bool more = i + 1 < batches.size();
      if (more) // uploads while step i runs
        bind(*pipelined, train, batches[i + 1], lrOf(i + 1));
      pipelined->finish(train);
      losses.push_back(pipelined->getScalarOutput(train, "loss"));
      if (more)
        pipelined->start(train, rowsOf(batches[i + 1]));
    }
    EXPECT_EQ(losses, expected) << "devices: " << split.size();
    EXPECT_EQ(readState(*pipelined), readState(*sequential));
    EXPECT_EQ(pipelined->getOptimizerStep(), sequential->getOptimizerStep());
  }
}

TEST(PipelinedRunTest, AnInputBoundOnceServesEveryLaterRun) {
  MlpPlanOptions o = plan::test::smallMlp({4, 4});
  Batch first = randomBatch(o, 8, 7), second = randomBatch(o, 6, 8);
  auto executor = makeExecutor(o);
  int eval = executor->findStep(plan::StepRole::Eval);
  auto logitsOf = [&](int64_t rows) {
    executor->run(eval, rows);
    std::vector<float> logits(executor->getOutputBytes(eval, "logits") / 4);
    executor->getOutput(eval, "logits", logits.data(), logits.size() * 4);
    return logits;
  };
  executor->setInput(eval, "images", first.images.data(),
                     first.images.size() * 4);
  executor->setInput(eval, "labels", first.labels.data(),
                     first.labels.size() * 4);
  std::vector<float> once = logitsOf(8);
  EXPECT_EQ(logitsOf(8), once) << "the second run reads the other buffer";
  EXPECT_EQ(logitsOf(8), once);

  // A new binding replaces the old one in every later run, while an input
  // not bound again (labels' first 6 rows) is reused.
  executor->setInput(eval, "images", second.images.data(),
                     second.images.size() * 4);
  executor->setInput(eval, "labels", first.labels.data(), 6 * 4);
  std::vector<float> replaced = logitsOf(6);
  EXPECT_EQ(logitsOf(6), replaced);
  auto fresh = makeExecutor(o);
  fresh->setInput(eval, "images", second.images.data(),
                  second.images.size() * 4);
  fresh->setInput(eval, "labels", first.labels.data(), 6 * 4);
  fresh->run(eval, 6);
  std::vector<float> expected(replaced.size());
  fresh->getOutput(eval, "logits", expected.data(), expected.size() * 4);
  EXPECT_EQ(replaced, expected);
}

TEST(PipelinedRunTest, OutputsStateAndOtherStepsWaitForFinish) {
  MlpPlanOptions o = plan::test::smallMlp();
  auto executor = makeExecutor(o);
  int train = executor->findStep(plan::StepRole::Train);
  int eval = executor->findStep(plan::StepRole::Eval);
  Batch batch = randomBatch(o, 8, 3);
  bind(*executor, train, batch, 0.1f);
  EXPECT_THROW(executor->finish(train), std::logic_error) << "not started";
  executor->start(train, 8);
  EXPECT_THROW(executor->start(eval, 8), std::logic_error);
  EXPECT_THROW(executor->start(train, 8), std::logic_error);
  EXPECT_THROW(executor->getScalarOutput(train, "loss"), std::logic_error);
  std::vector<float> state(executor->getPersistentBytes(0) / 4);
  EXPECT_THROW(executor->readPersistent(0, state.data()), std::logic_error);
  EXPECT_THROW(executor->writePersistent(0, state.data()), std::logic_error);
  EXPECT_THROW(executor->finish(eval), std::logic_error);
  executor->finish(train);
  EXPECT_TRUE(std::isfinite(executor->getScalarOutput(train, "loss")));
  EXPECT_THROW(executor->finish(train), std::logic_error) << "finished";
  executor->run(eval, 8); // the executor is usable again
}

} // namespace
} // namespace dpc::rt
