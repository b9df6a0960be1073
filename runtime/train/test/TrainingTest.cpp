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
          "\"lr\": 0.1}"})
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
  // A partial epoch is not checkpointed.
  EXPECT_FALSE(fs::exists(getCheckpointPath(options.checkpointDirectory)));
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
