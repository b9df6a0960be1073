//===- RunCommandTest.cpp - `dpc run`: flags, errors, a whole run ---------===//
//
// Every mistake a user can make is one line on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/RunCommand.h"
#include "runtime/plan/test/TestPlans.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/RunOptions.h"
#include "runtime/train/test/TestData.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace dpc::runtime {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out, err;
};

Result run(const std::vector<std::string> &args) {
  std::ostringstream out, err;
  int code = runCommand(args, out, err);
  return {code, out.str(), err.str()};
}

/// Expects exit code 1 and exactly `message` as the one line on stderr.
void expectError(const std::vector<std::string> &args,
                 const std::string &message) {
  Result r = run(args);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, message + "\n");
}

class RunCommandTest : public testing::Test {
protected:
  void SetUp() override {
    // One directory per test: ctest runs them in parallel processes.
    dir = (fs::path(testing::TempDir()) /
           ("dpc_run_command_" +
            std::string(
                testing::UnitTest::GetInstance()->current_test_info()->name())))
              .string();
    fs::remove_all(dir);
    fs::create_directories(dir);
    train = train::test::writeBandDataset(dir + "/train", 100, 8, 8, 4, 1);
    test = train::test::writeBandDataset(dir + "/test", 40, 8, 8, 4, 2);
    plan::test::MlpPlanOptions o;
    o.batch = 32;
    o.height = o.width = 8;
    o.hidden = 8;
    o.classes = 4;
    planPath = dir + "/model.dpcplan";
    ASSERT_TRUE(plan::test::writeFile(planPath, plan::test::buildMlpPlan(o)));
    data = "idx:" + train.images + "," + train.labels + "," + test.images +
           "," + test.labels;
  }

  std::string dir, planPath, data;
  train::test::IdxFiles train, test;
};

TEST_F(RunCommandTest, BadFlagsAreOneLine) {
  const std::string help = " (see dpc run --help)";
  expectError({}, "dpc run: missing the plan file (dpc run PLAN --data ...)" +
                      help);
  expectError({planPath},
              "dpc run: missing --data fashion-mnist[:DIR] or --data idx:..." +
                  help);
  expectError({planPath, "--data", data, "--bogus"},
              "dpc run: unknown flag '--bogus'" + help);
  expectError({planPath, "--data", data, "--epochs"},
              "dpc run: --epochs needs a value" + help);
  expectError({planPath, "--data", data, "--epochs", "0"},
              "dpc run: --epochs: expected a whole number >= 1, got '0'" +
                  help);
  expectError({planPath, "--data", data, "--steps=abc"},
              "dpc run: --steps: expected a whole number >= 1, got 'abc'" +
                  help);
  expectError({planPath, "--data", data, "--lr", "-1"},
              "dpc run: --lr: expected a positive number, got '-1'" + help);
  expectError({planPath, "--data", data, "--lr-schedule", "linear"},
              "dpc run: --lr-schedule: expected constant, step:EVERY:GAMMA or "
              "cosine[:WARMUP_EPOCHS], got 'linear'" +
                  help);
  expectError({planPath, "--data", "mnist"},
              "dpc run: --data: expected fashion-mnist[:DIR], idx:FILES or "
              "npy:FILES, got 'mnist'" +
                  help);
  expectError({planPath, "--data", "idx:a,b,c"},
              "dpc run: --data idx: expected TRAIN_IMAGES,TRAIN_LABELS or "
              "TRAIN_IMAGES,TRAIN_LABELS,TEST_IMAGES,TEST_LABELS" +
                  help);
  expectError({planPath, "--data", data, "--resume"},
              "dpc run: --resume needs --checkpoint DIR" + help);
  expectError({planPath, "--data", data, "--checkpoint-every", "3"},
              "dpc run: --checkpoint-every needs --checkpoint DIR" + help);
  expectError({planPath, "--data", data, "--layout", "chw"},
              "dpc run: --layout: expected nchw or nhwc, got 'chw'" + help);
  expectError({planPath, "--data", data, "--normalize", "0.5:0"},
              "dpc run: --normalize: the std of channel 0 must be > 0, got "
              "'0'" +
                  help);
  expectError({planPath, "--data", data, "--normalize=0.5:-0.1"},
              "dpc run: --normalize: the std of channel 0 must be > 0, got "
              "'-0.1'" +
                  help);
  expectError({planPath, "--data", data, "--normalize", "0.5,0.5:1"},
              "dpc run: --normalize: 2 means but 1 stds; give one of each "
              "per channel" +
                  help);
  expectError({planPath, "--data", data, "--augment", "crop=x"},
              "dpc run: --augment crop: expected a whole number >= 1, got "
              "'x'" +
                  help);
  expectError({planPath, "--data", data, "--augment", "crop=2,crop=3"},
              "dpc run: --augment: expected crop=PAD and flip, each at most "
              "once, got 'crop=3'" +
                  help);
  expectError({planPath, "--data", data, "--val-split", "-0.5"},
              "dpc run: --val-split: expected a fraction between 0 and 1, "
              "got '-0.5'" +
                  help);
  expectError({planPath, "--data", data, "--val-data", "idx:a"},
              "dpc run: --val-data: expected idx:IMAGES,LABELS or "
              "npy:IMAGES,LABELS, got 'idx:a'" +
                  help);
  expectError({planPath, "--data", data, "--quiet=yes"},
              "dpc run: --quiet takes no value" + help);
  expectError({planPath, "--data", data, "--metrics="},
              "dpc run: --metrics needs a non-empty value" + help);
  expectError({planPath, "other.plan", "--data", data},
              "dpc run: unexpected argument 'other.plan' (the plan is "
              "already '" +
                  planPath + "')" + help);
}

TEST_F(RunCommandTest, DataFlagsParse) {
  train::RunOptions options = train::parseRunOptions(
      {planPath, "--data", data, "--layout=nhwc", "--normalize",
       "0.5,0.25,1e-1:0.5,2,4", "--augment", "flip,crop=4", "--val-split",
       "0.125"});
  EXPECT_EQ(options.layout, data::ImageLayout::NHWC);
  EXPECT_EQ(options.normalization.mean,
            (std::vector<float>{0.5f, 0.25f, 0.1f}));
  EXPECT_EQ(options.normalization.std, (std::vector<float>{0.5f, 2, 4}));
  EXPECT_EQ(options.augmentation.cropPadding, 4);
  EXPECT_TRUE(options.augmentation.flip);
  EXPECT_EQ(options.valSplit, 0.125);
  options = train::parseRunOptions(
      {planPath, "--data", data, "--val-data", "npy:v.npy,l.npy"});
  EXPECT_EQ(options.valImages, "v.npy");
  EXPECT_EQ(options.valLabels, "l.npy");
  EXPECT_TRUE(options.valNpy);
  EXPECT_FALSE(options.augmentation.enabled());
  EXPECT_TRUE(options.normalization.empty());
}

TEST_F(RunCommandTest, BadFilesAreOneLine) {
  expectError({dir + "/missing.plan", "--data", data},
              dir + "/missing.plan: cannot read the file (No such file or "
                    "directory)");
  std::string garbage = dir + "/garbage.plan";
  std::ofstream(garbage) << "not a plan";
  expectError({garbage, "--data", data},
              garbage + ": not a dpc plan (no \"DPCP\" file identifier)");
  expectError({planPath, "--data", "idx:" + dir + "/nope," + train.labels},
              dir + "/nope: cannot open the file (No such file or "
                    "directory)");
  expectError({planPath, "--data", "fashion-mnist:" + dir + "/nowhere"},
              dir + "/nowhere/train-images-idx3-ubyte.gz: cannot open the "
                    "file (No such file or directory)");
  expectError(
      {planPath, "--data", data, "--checkpoint", dir + "/none", "--resume"},
      dir + "/none/checkpoint.dpcckpt: no checkpoint to resume from");
}

TEST_F(RunCommandTest, DataMustFitThePlan) {
  auto small = train::test::writeBandDataset(dir + "/small", 20, 6, 6, 4, 1);
  expectError({planPath, "--data", "idx:" + small.images + "," + small.labels},
              small.images + ": images are 1x6x6 but the plan expects 1x8x8");
  auto shifted =
      train::test::writeBandDataset(dir + "/shifted", 20, 8, 8, 4, 1, 3);
  Result r =
      run({planPath, "--data", "idx:" + shifted.images + "," + shifted.labels});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind(shifted.labels + ": label ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" is out of range for the plan's 4 classes\n"),
            std::string::npos)
      << r.err;
}

TEST_F(RunCommandTest, TrainsEndToEnd) {
  std::string metrics = dir + "/m.jsonl", plot = dir + "/p.svg";
  Result r = run({planPath, "--data", data, "--epochs", "2", "--seed", "5",
                  "--lr-schedule", "step:1:0.5", "--metrics=" + metrics,
                  "--plot", plot, "--checkpoint", dir + "/ckpt"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("epoch 1/2: train loss "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("epoch 2/2: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lr 0.05\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("final test accuracy: "), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(plot));
  EXPECT_TRUE(fs::exists(dir + "/ckpt/checkpoint.dpcckpt"));

  // Resuming with another seed is refused; resuming a finished run trains
  // nothing and reports the last accuracy.
  expectError({planPath, "--data", data, "--epochs", "2", "--seed", "6",
               "--checkpoint", dir + "/ckpt", "--resume"},
              dir + "/ckpt/checkpoint.dpcckpt: was trained with --seed 5, "
                    "not 6");
  r = run({planPath, "--data", data, "--epochs", "2", "--checkpoint",
           dir + "/ckpt", "--resume"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("epoch 1/2:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("final test accuracy: "), std::string::npos) << r.out;

  // A run that would end before the checkpoint is refused.
  expectError({planPath, "--data", data, "--epochs", "1", "--checkpoint",
               dir + "/ckpt", "--resume"},
              dir + "/ckpt/checkpoint.dpcckpt: has done 2 epochs, more than "
                    "this run's 1");

  // A checkpoint of another plan is refused.
  plan::test::MlpPlanOptions other;
  other.batch = 32;
  other.height = other.width = 8;
  other.hidden = 9;
  other.classes = 4;
  std::string otherPlan = dir + "/other.dpcplan";
  ASSERT_TRUE(
      plan::test::writeFile(otherPlan, plan::test::buildMlpPlan(other)));
  expectError({otherPlan, "--data", data, "--epochs", "3", "--checkpoint",
               dir + "/ckpt", "--resume"},
              dir + "/ckpt/checkpoint.dpcckpt: tensor 'w1' [8, 64] does not "
                    "match the plan's 'w1' [9, 64] (a checkpoint of another "
                    "plan?)");

  // A well-formed checkpoint whose tensors are named or typed otherwise
  // than the plan's: the error says which tensor and why.
  train::TrainingState saved = train::loadCheckpoint(dir + "/ckpt");
  train::TrainingState renamed = saved;
  renamed.tensors[0].name = "fc.weight";
  train::saveCheckpoint(dir + "/renamed", renamed);
  expectError({planPath, "--data", data, "--epochs", "3", "--checkpoint",
               dir + "/renamed", "--resume"},
              dir + "/renamed/checkpoint.dpcckpt: tensor 0 is 'fc.weight', "
                    "the plan's is 'w1' (a checkpoint of another plan?)");
  train::TrainingState retyped = saved;
  retyped.tensors[0].dtype = static_cast<int32_t>(plan::DType::I32);
  train::saveCheckpoint(dir + "/retyped", retyped);
  expectError({planPath, "--data", data, "--epochs", "3", "--checkpoint",
               dir + "/retyped", "--resume"},
              dir + "/retyped/checkpoint.dpcckpt: tensor 'w1' is I32, the "
                    "plan's is F32 (a checkpoint of another plan?)");
}

TEST_F(RunCommandTest, PlanTooBigForTheMachineIsOneLine) {
  // Images of 2^40 pixels, agreeing with the plan's sample_dims: their
  // input buffers alone are 64 TiB, refused before any is allocated.
  plan::test::MlpPlanOptions o;
  o.batch = 4;
  o.height = o.width = 8;
  o.hidden = 8;
  o.classes = 4;
  plan::PlanT big = plan::test::buildMlpPlanObject(o);
  big.sample_dims = {1, int64_t(1) << 20, int64_t(1) << 20};
  for (auto &step : big.steps)
    for (auto &tensor : step->tensors)
      if (tensor->name == "images")
        tensor->dims = {4, 1, int64_t(1) << 20, int64_t(1) << 20};
  std::string bigPlan = dir + "/big.dpcplan";
  ASSERT_TRUE(plan::test::writeFile(bigPlan, plan::test::packPlan(big)));
  Result r = run({bigPlan, "--data", data});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind(bigPlan + ": the plan needs 65536.00 GiB on its 1 "
                                  "CPU device(s) but ",
                        0),
            0u)
      << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST_F(RunCommandTest, Help) {
  Result r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("usage: dpc run PLAN", 0), 0u);
}

} // namespace
} // namespace dpc::runtime
