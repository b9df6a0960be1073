//===- TrainingTest.cpp - the training loop end to end --------------------===//

#include "runtime/data/Dataset.h"
#include "runtime/plan/test/TestPlans.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Trainer.h"
#include "runtime/train/test/TestData.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace dpc::train {
namespace {

namespace fs = std::filesystem;
using plan::test::MlpPlanOptions;

/// A fresh directory per test.
std::string freshDirectory(const std::string &name) {
  fs::path dir = fs::path(testing::TempDir()) / ("dpc_train_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

struct Fixture {
  std::string dir, planPath;
  test::IdxFiles train, test;
};

/// An 8x8, 4-class band data set and an MLP plan for it.
Fixture makeBandFixture(const std::string &name, MlpPlanOptions o,
                        int64_t trainCount = 203) {
  Fixture f;
  f.dir = freshDirectory(name);
  f.train = test::writeBandDataset(f.dir + "/train", trainCount, 8, 8, 4, 1);
  f.test = test::writeBandDataset(f.dir + "/test", 64, 8, 8, 4, 2);
  o.height = o.width = 8;
  o.classes = 4;
  f.planPath = f.dir + "/model.dpcplan";
  EXPECT_TRUE(plan::test::writeFile(f.planPath, plan::test::buildMlpPlan(o)));
  return f;
}

RunOptions bandOptions(const Fixture &f) {
  RunOptions options;
  options.planPath = f.planPath;
  options.trainImages = f.train.images, options.trainLabels = f.train.labels;
  options.testImages = f.test.images, options.testLabels = f.test.labels;
  options.quiet = true;
  options.lr = 0.1;
  options.seed = 3;
  return options;
}

MlpPlanOptions bandPlan() {
  MlpPlanOptions o;
  o.batch = 16;
  o.hidden = 12;
  o.momentum = 0.9;
  return o;
}

TEST(TrainingTest, LearnsTheBandsWithAShortLastBatch) {
  // 203 = 12 * 16 + 11: every epoch ends with a batch of 11.
  Fixture f = makeBandFixture("bands", bandPlan());
  RunOptions options = bandOptions(f);
  options.epochs = 3;
  options.metricsPath = f.dir + "/metrics.jsonl";
  options.plotPath = f.dir + "/plot.svg";
  std::ostringstream out;
  TrainResult result = runTraining(options, out);
  ASSERT_EQ(result.history.size(), 3u);
  EXPECT_LT(result.history[2].trainLoss, result.history[0].trainLoss);
  EXPECT_GT(result.finalTestAcc, 0.9);

  std::ifstream metrics(options.metricsPath);
  std::string line;
  int lines = 0;
  while (std::getline(metrics, line)) {
    ++lines;
    for (const char *key :
         {"\"epoch\": ", "\"train_loss\": ", "\"train_acc\": ",
          "\"test_acc\": ", "\"epoch_seconds\": ", "\"images_per_second\": ",
          "\"lr\": 0.1, \"memory\": [{\"device\": \"cpu:0\", "
          "\"planned_bytes\": ",
          "\"allocated_peak_bytes\": ", "\"peak_rss_bytes\": "})
      EXPECT_NE(line.find(key), std::string::npos) << line;
  }
  EXPECT_EQ(lines, 3);
  std::ifstream plot(options.plotPath);
  std::string svg((std::istreambuf_iterator<char>(plot)),
                  std::istreambuf_iterator<char>());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("test acc"), std::string::npos);
}

TEST(TrainingTest, StepsLimitStopsMidEpoch) {
  Fixture f = makeBandFixture("steps", bandPlan());
  RunOptions options = bandOptions(f);
  options.maxSteps = 5;
  options.checkpointDirectory = f.dir + "/ckpt";
  std::ostringstream out;
  TrainResult result = runTraining(options, out);
  ASSERT_EQ(result.history.size(), 1u);
  // A run that --steps stops mid-epoch checkpoints where it stopped, and
  // says so on its last line.
  TrainingState state = loadCheckpoint(options.checkpointDirectory);
  EXPECT_EQ(state.stepsDone, 5);
  EXPECT_EQ(state.epochsDone, 0);
  EXPECT_EQ(state.partial.stepsDone, 5);
  EXPECT_EQ(state.partial.samplesSeen, 5 * 16);
  EXPECT_TRUE(state.history.empty()) << "the partial epoch is not history";

  options.quiet = false;
  std::ostringstream printed;
  runTraining(options, printed);
  std::string text = printed.str();
  std::string last = text.substr(text.rfind('\n', text.size() - 2) + 1);
  EXPECT_EQ(last,
            "checkpoint: " + getCheckpointPath(options.checkpointDirectory) +
                " at step 5 (epoch 1, batch 5 of 13)\n");
}

/// Two epochs straight must equal one epoch, a checkpoint, a new process
/// state (a new executor from the file) and one more epoch: bit for bit.
void expectResumeIsBitExact(const std::string &name, MlpPlanOptions o) {
  Fixture f = makeBandFixture(name, o);
  std::ostringstream out;

  RunOptions straight = bandOptions(f);
  straight.epochs = 2;
  straight.checkpointDirectory = f.dir + "/straight";
  TrainResult a = runTraining(straight, out);

  RunOptions first = bandOptions(f);
  first.epochs = 1;
  first.checkpointDirectory = f.dir + "/resumed";
  runTraining(first, out);
  RunOptions second = first;
  second.epochs = 2;
  second.resume = true;
  second.metricsPath = f.dir + "/resumed.jsonl";
  TrainResult b = runTraining(second, out);

  TrainingState sa = loadCheckpoint(straight.checkpointDirectory);
  TrainingState sb = loadCheckpoint(second.checkpointDirectory);
  EXPECT_EQ(sa.epochsDone, 2);
  EXPECT_EQ(sb.epochsDone, 2);
  EXPECT_EQ(sa.stepsDone, sb.stepsDone);
  EXPECT_EQ(sa.optimizerStep, sb.optimizerStep);
  EXPECT_EQ(sa.optimizerStep, 2 * 13);
  ASSERT_EQ(sa.tensors.size(), sb.tensors.size());
  for (size_t i = 0; i < sa.tensors.size(); ++i) {
    EXPECT_EQ(sa.tensors[i].name, sb.tensors[i].name);
    EXPECT_TRUE(sa.tensors[i].bytes == sb.tensors[i].bytes)
        << "tensor '" << sa.tensors[i].name << "' differs";
  }
  ASSERT_EQ(a.history.size(), 2u);
  ASSERT_EQ(b.history.size(), 2u);
  EXPECT_EQ(a.history[1].trainLoss, b.history[1].trainLoss);
  EXPECT_EQ(a.history[1].testAcc, b.history[1].testAcc);
  // The resumed run's metrics file holds both epochs.
  std::ifstream metrics(second.metricsPath);
  std::string line;
  int lines = 0;
  while (std::getline(metrics, line))
    ++lines;
  EXPECT_EQ(lines, 2);
}

/// Two epochs straight must equal three runs that stop mid-epoch: one
/// whose --checkpoint-every checkpoint is its last, one that --steps stops
/// in the second epoch, and one that finishes: bit for bit, parameters,
/// optimizer state and every epoch's loss.
void expectMidEpochResumeIsBitExact(const std::string &name, MlpPlanOptions o) {
  Fixture f = makeBandFixture(name, o);
  std::ostringstream out;

  RunOptions straight = bandOptions(f);
  straight.epochs = 2;
  straight.checkpointDirectory = f.dir + "/straight";
  TrainResult a = runTraining(straight, out);

  RunOptions first = bandOptions(f);
  first.epochs = 2;
  first.maxSteps = 5;
  first.checkpointEvery = 5; // saved at step 5 by --checkpoint-every
  first.checkpointDirectory = f.dir + "/resumed";
  runTraining(first, out);
  EXPECT_EQ(loadCheckpoint(first.checkpointDirectory).partial.stepsDone, 5);
  RunOptions second = first;
  second.resume = true;
  second.maxSteps = 18; // stops at batch 5 of epoch 2
  second.checkpointEvery = 4;
  runTraining(second, out);
  TrainingState middle = loadCheckpoint(second.checkpointDirectory);
  EXPECT_EQ(middle.epochsDone, 1);
  EXPECT_EQ(middle.partial.stepsDone, 5);
  RunOptions third = second;
  third.maxSteps = -1;
  third.checkpointEvery = 0;
  TrainResult b = runTraining(third, out);

  TrainingState sa = loadCheckpoint(straight.checkpointDirectory);
  TrainingState sb = loadCheckpoint(third.checkpointDirectory);
  EXPECT_EQ(sb.epochsDone, 2);
  EXPECT_EQ(sb.partial.stepsDone, 0);
  EXPECT_EQ(sa.optimizerStep, sb.optimizerStep);
  ASSERT_EQ(sa.tensors.size(), sb.tensors.size());
  for (size_t i = 0; i < sa.tensors.size(); ++i)
    EXPECT_TRUE(sa.tensors[i].bytes == sb.tensors[i].bytes)
        << "tensor '" << sa.tensors[i].name << "' differs";
  ASSERT_EQ(a.history.size(), 2u);
  ASSERT_EQ(b.history.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_EQ(a.history[e].trainLoss, b.history[e].trainLoss) << e;
    EXPECT_EQ(a.history[e].trainAcc, b.history[e].trainAcc) << e;
    EXPECT_EQ(a.history[e].testAcc, b.history[e].testAcc) << e;
  }
}

TEST(TrainingTest, MidEpochResumeIsBitExactWithSgdMomentum) {
  expectMidEpochResumeIsBitExact("midepoch_sgd", bandPlan());
}

TEST(TrainingTest, MidEpochResumeIsBitExactWithAdamWOnTwoDevices) {
  MlpPlanOptions o = bandPlan();
  o.optimizer = "adamw";
  o.weightDecay = 0.01;
  o.split = {7, 9};
  expectMidEpochResumeIsBitExact("midepoch_adamw_two_devices", o);
}

TEST(TrainingTest, MidEpochCheckpointNeedsItsBatches) {
  Fixture f = makeBandFixture("midepoch_subset", bandPlan());
  RunOptions options = bandOptions(f);
  options.maxSteps = 9;
  options.checkpointDirectory = f.dir + "/ckpt";
  std::ostringstream out;
  runTraining(options, out);
  options.resume = true;
  options.maxSteps = -1;
  options.trainSubset = 64; // 4 batches an epoch
  try {
    runTraining(options, out);
    FAIL() << "resumed past the end of an epoch";
  } catch (const RunError &error) {
    EXPECT_EQ(std::string(error.what()),
              getCheckpointPath(options.checkpointDirectory) +
                  ": stopped after batch 9 of epoch 1, but an epoch of this "
                  "data has only 4 batches (another data set or "
                  "--train-subset?)");
  }
}

TEST(TrainingTest, ResumeIsBitExactWithSgdMomentum) {
  expectResumeIsBitExact("resume_sgd", bandPlan());
}

TEST(TrainingTest, ResumeIsBitExactWithAdamW) {
  MlpPlanOptions o = bandPlan();
  o.optimizer = "adamw";
  o.weightDecay = 0.01;
  expectResumeIsBitExact("resume_adamw", o);
}

TEST(TrainingTest, ResumeIsBitExactOnTwoDevices) {
  MlpPlanOptions o = bandPlan();
  o.split = {7, 9}; // uneven; the last batch of 11 goes 5, 6
  expectResumeIsBitExact("resume_two_devices", o);
}

TEST(TrainingTest, TwoDevicesTrainLikeOne) {
  std::ostringstream out;
  std::vector<TrainResult> results;
  for (std::vector<int64_t> split : {std::vector<int64_t>{}, {8, 8}}) {
    MlpPlanOptions o = bandPlan();
    o.split = split;
    Fixture f = makeBandFixture("like_one_" + std::to_string(split.size()), o);
    RunOptions options = bandOptions(f);
    options.epochs = 2;
    options.init = "kaiming"; // drawn once, the same on every device
    results.push_back(runTraining(options, out));
  }
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_NEAR(results[1].history[e].trainLoss,
                results[0].history[e].trainLoss,
                1e-5 * results[0].history[e].trainLoss);
    EXPECT_EQ(results[1].history[e].trainAcc, results[0].history[e].trainAcc);
    EXPECT_EQ(results[1].history[e].testAcc, results[0].history[e].testAcc);
  }
}

void expectFashionMnistSubsetLearns(const std::string &name,
                                    const std::vector<int64_t> &split) {
  if (!fs::exists(std::string(data::kFashionMnistDirectory) +
                  "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST is not installed";
  std::string dir = freshDirectory(name);
  MlpPlanOptions o;
  o.batch = 64;
  o.hidden = 64;
  o.split = split;
  std::string planPath = dir + "/mlp.dpcplan";
  ASSERT_TRUE(plan::test::writeFile(planPath, plan::test::buildMlpPlan(o)));
  RunOptions options;
  options.planPath = planPath;
  options.fashionMnist = true;
  options.trainSubset = 2000;
  options.testSubset = 500;
  options.epochs = 2;
  options.lr = 0.1;
  options.quiet = true;
  std::ostringstream out;
  TrainResult result = runTraining(options, out);
  ASSERT_EQ(result.history.size(), 2u);
  EXPECT_LT(result.history[1].trainLoss, result.history[0].trainLoss);
  EXPECT_GT(result.finalTestAcc, 0.6);
}

TEST(TrainingTest, FashionMnistSubsetLearns) {
  expectFashionMnistSubsetLearns("fashion", {});
}

TEST(TrainingTest, FashionMnistSubsetLearnsOnTwoDevices) {
  expectFashionMnistSubsetLearns("fashion_two_devices", {32, 32});
}

} // namespace
} // namespace dpc::train
