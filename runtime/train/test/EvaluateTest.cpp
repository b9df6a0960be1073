//===- EvaluateTest.cpp - dpc eval and dpc predict end to end -------------===//

#include "runtime/train/Evaluate.h"
#include "runtime/plan/test/TestPlans.h"
#include "runtime/train/EvalCommand.h"
#include "runtime/train/Trainer.h"
#include "runtime/train/test/TestData.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace dpc::train {
namespace {

namespace fs = std::filesystem;

class EvaluateTest : public testing::Test {
protected:
  void SetUp() override {
    // One directory per test: ctest runs them in parallel.
    dir = (fs::path(testing::TempDir()) /
           ("dpc_evaluate_" +
            std::string(
                testing::UnitTest::GetInstance()->current_test_info()->name())))
              .string();
    fs::remove_all(dir);
    fs::create_directories(dir);
    train = test::writeBandDataset(dir + "/train", 203, 8, 8, 4, 1);
    testSet = test::writeBandDataset(dir + "/test", 37, 8, 8, 4, 2);
    plan::test::MlpPlanOptions o;
    o.batch = 16;
    o.hidden = 12;
    o.height = o.width = 8;
    o.classes = 4;
    o.split = {7, 9}; // two devices: outputs are joined in row order
    planPath = dir + "/model.dpcplan";
    ASSERT_TRUE(plan::test::writeFile(planPath, plan::test::buildMlpPlan(o)));
  }

  /// Trains one epoch into dir/ckpt; returns its test accuracy.
  double trainOneEpoch() {
    RunOptions options;
    options.planPath = planPath;
    options.trainImages = train.images, options.trainLabels = train.labels;
    options.testImages = testSet.images, options.testLabels = testSet.labels;
    options.quiet = true;
    options.epochs = 1;
    options.checkpointDirectory = dir + "/ckpt";
    std::ostringstream out;
    return runTraining(options, out).finalTestAcc;
  }

  InferenceOptions inferenceOptions() const {
    InferenceOptions options;
    options.planPath = planPath;
    options.checkpointDirectory = dir + "/ckpt";
    options.data.trainImages = testSet.images;
    options.data.trainLabels = testSet.labels;
    return options;
  }

  std::string dir, planPath;
  test::IdxFiles train, testSet;
};

TEST_F(EvaluateTest, AccuracyIsTheTrainingRunsTestAccuracy) {
  double testAcc = trainOneEpoch();
  EvalResult result = evaluateDataset(inferenceOptions());
  EXPECT_EQ(result.count, 37);
  EXPECT_EQ(double(result.correct) / 37, testAcc);
  EXPECT_GT(result.loss, 0);
  int64_t total = 0, diagonal = 0;
  ASSERT_EQ(result.confusion.size(), 4u);
  for (size_t c = 0; c < 4; ++c)
    for (size_t p = 0; p < 4; ++p) {
      total += result.confusion[c][p];
      diagonal += c == p ? result.confusion[c][p] : 0;
    }
  EXPECT_EQ(total, 37);
  EXPECT_EQ(diagonal, result.correct);

  // The logits' argmax makes the same predictions; top-1 is the argmax.
  Predictions predictions = predictDataset(inferenceOptions());
  ASSERT_EQ(predictions.count, 37);
  ASSERT_EQ(predictions.classes, 4);
  std::vector<int64_t> top2 = topK(predictions, 2);
  ASSERT_EQ(top2.size(), 74u);
  for (int64_t row = 0; row < 37; ++row) {
    const float *logits = &predictions.logits[row * 4];
    EXPECT_GE(logits[top2[2 * row]], logits[top2[2 * row + 1]]);
    for (int64_t c = 0; c < 4; ++c)
      EXPECT_GE(logits[top2[2 * row]], logits[c]);
  }
}

TEST_F(EvaluateTest, CommandsPrintAndWrite) {
  trainOneEpoch();
  std::vector<std::string> base = {
      planPath, "--data", "idx:" + testSet.images + "," + testSet.labels,
      "--checkpoint", dir + "/ckpt"};
  std::ostringstream out, err;
  std::vector<std::string> json = base;
  json.push_back("--json");
  ASSERT_EQ(runtime::evalCommand(json, out, err), 0) << err.str();
  EXPECT_EQ(out.str().rfind("{\"samples\": 37, \"loss\": ", 0), 0u)
      << out.str();
  EXPECT_NE(out.str().find("\"confusion_matrix\": [["), std::string::npos);

  std::vector<std::string> predict = base;
  predict.insert(predict.end(), {"-o", dir + "/top.npy", "--top-k", "3"});
  out.str("");
  ASSERT_EQ(runtime::predictCommand(predict, out, err), 0) << err.str();
  EXPECT_EQ(out.str(), "predictions: " + dir +
                           "/top.npy (37 images, top 3 classes each)\n");
  std::ifstream file(dir + "/top.npy", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)),
                    std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 128u + 37 * 3 * 8);
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  EXPECT_NE(bytes.find("'descr': '<i8'"), std::string::npos);
  EXPECT_NE(bytes.find("'shape': (37, 3, )"), std::string::npos);
}

TEST_F(EvaluateTest, BadInputsAreOneLine) {
  std::ostringstream out, err;
  std::vector<std::string> args = {
      planPath, "--data", "idx:" + testSet.images + "," + testSet.labels,
      "--checkpoint", dir + "/none"};
  EXPECT_EQ(runtime::evalCommand(args, out, err), 1);
  EXPECT_EQ(err.str(), dir + "/none/checkpoint.dpcckpt: no checkpoint "
                             "there\n");
  err.str("");
  EXPECT_EQ(
      runtime::predictCommand({planPath, "--data", "npy:x.npy"}, out, err), 1);
  EXPECT_EQ(err.str(), "dpc predict: missing -o FILE.npy (see dpc predict "
                       "--help)\n");
  err.str("");
  EXPECT_EQ(
      runtime::evalCommand(
          {planPath, "--data", "fashion-mnist", "--top-k", "2"}, out, err),
      1);
  EXPECT_EQ(err.str(),
            "dpc eval: unknown flag '--top-k' (see dpc eval --help)\n");
  err.str("");
  trainOneEpoch();
  args.back() = dir + "/ckpt";
  args.insert(args.end(), {"-o", dir + "/x.npy", "--top-k", "5"});
  EXPECT_EQ(runtime::predictCommand(args, out, err), 1);
  EXPECT_EQ(err.str(), "dpc predict: --top-k 5 is more than the plan's 4 "
                       "classes (see dpc predict --help)\n");
}

// Two samples of 4 pixels, 4 classes (class 3 never occurs), the last
// pixel of the first ignored; a tie goes to the lower class. Predicted and
// true: (0,0) (1,1) (2,1) | (1,1) (1,0) (2,2) (2,2), so the IoUs are 1/2,
// 2/4, 2/3 and none.
TEST(IouCountsTest, MeanOverTheClassesThatOccur) {
  const float classesFirst[2][4][4] = {
      {{5, 0, 0, 1}, {0, 5, 0, 1}, {0, 0, 5, 0}, {-1, -1, -1, -1}},
      {{0, 0, 0, 0}, {1, 1, 0, 0}, {0, 0, 1, 1}, {-1, -1, -1, -1}}};
  const int32_t targets[2][4] = {{0, 1, 1, 255}, {1, 0, 2, 2}};
  // The same logits with the classes last: [2, 4 pixels, 4 classes].
  float classesLast[2][4][4];
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 4; ++c)
      for (int p = 0; p < 4; ++p)
        classesLast[n][p][c] = classesFirst[n][c][p];
  IouCounts first(4), last(4);
  first.add(&classesFirst[0][0][0], &targets[0][0], 2, 1, 4, 255);
  last.add(&classesLast[0][0][0], &targets[0][0], 2, 4, 1, 255);
  for (const IouCounts *counts : {&first, &last}) {
    std::vector<double> iou = counts->getPerClassIou();
    ASSERT_EQ(iou.size(), 4u);
    EXPECT_DOUBLE_EQ(iou[0], 0.5);
    EXPECT_DOUBLE_EQ(iou[1], 0.5);
    EXPECT_DOUBLE_EQ(iou[2], 2.0 / 3.0);
    EXPECT_TRUE(std::isnan(iou[3]));
    EXPECT_DOUBLE_EQ(counts->getMeanIou(), (0.5 + 0.5 + 2.0 / 3.0) / 3);
  }
  EXPECT_TRUE(std::isnan(IouCounts(3).getMeanIou()));
}

} // namespace
} // namespace dpc::train
