//===- CheckpointTest.cpp - checkpoint files, schedules, metrics ----------===//

#include "runtime/train/Checkpoint.h"
#include "runtime/train/LrSchedule.h"
#include "runtime/train/Metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

namespace dpc::train {
namespace {

namespace fs = std::filesystem;

TrainingState sampleState() {
  TrainingState state;
  state.epochsDone = 3;
  state.stepsDone = 77;
  state.optimizerStep = 77;
  state.seed = 42;
  state.epochStepsDone = 5;
  state.epochLossSum = 11.25;
  state.epochCorrect = 96;
  state.epochSeen = 320;
  EpochMetrics m;
  m.epoch = 1;
  m.trainLoss = 0.5;
  m.testAcc = std::numeric_limits<double>::quiet_NaN();
  state.history.push_back(m);
  state.tensors.push_back({"w", 0, {2, 3}, std::vector<uint8_t>(24, 7)});
  state.tensors.push_back({"b", 4, {}, std::vector<uint8_t>(4, 1)});
  return state;
}

TEST(CheckpointTest, RoundTrips) {
  std::string dir = testing::TempDir() + "/dpc_ckpt_roundtrip/nested";
  fs::remove_all(dir);
  saveCheckpoint(dir, sampleState());
  EXPECT_FALSE(fs::exists(getCheckpointPath(dir) + ".tmp"));
  TrainingState loaded = loadCheckpoint(dir);
  EXPECT_EQ(loaded.epochsDone, 3);
  EXPECT_EQ(loaded.stepsDone, 77);
  EXPECT_EQ(loaded.optimizerStep, 77);
  EXPECT_EQ(loaded.seed, 42u);
  EXPECT_EQ(loaded.epochStepsDone, 5);
  EXPECT_EQ(loaded.epochLossSum, 11.25);
  EXPECT_EQ(loaded.epochCorrect, 96);
  EXPECT_EQ(loaded.epochSeen, 320);
  ASSERT_EQ(loaded.history.size(), 1u);
  EXPECT_EQ(loaded.history[0].trainLoss, 0.5);
  EXPECT_TRUE(std::isnan(loaded.history[0].testAcc));
  ASSERT_EQ(loaded.tensors.size(), 2u);
  EXPECT_EQ(loaded.tensors[0].name, "w");
  EXPECT_EQ(loaded.tensors[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(loaded.tensors[0].bytes, std::vector<uint8_t>(24, 7));
  EXPECT_EQ(loaded.tensors[1].dtype, 4);
}

/// A format-1 file (before mid-epoch checkpoints): format 2 without the
/// unfinished epoch's four fields, after the seed.
TEST(CheckpointTest, ReadsFormatOne) {
  std::string dir = testing::TempDir() + "/dpc_ckpt_format1";
  fs::remove_all(dir);
  saveCheckpoint(dir, sampleState());
  std::string path = getCheckpointPath(dir);
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  in.close();
  constexpr size_t kFieldsAt = 8 + 4 * 8, kFieldsSize = 4 * 8;
  bytes[7] = '1';
  bytes.erase(bytes.begin() + kFieldsAt,
              bytes.begin() + kFieldsAt + kFieldsSize);
  bytes.resize(bytes.size() - 8); // the checksum, written again below
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t byte : bytes)
    hash = (hash ^ byte) * 0x100000001b3ull;
  for (int i = 0; i < 8; ++i)
    bytes.push_back(static_cast<uint8_t>(hash >> (8 * i)));
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  TrainingState loaded = loadCheckpoint(dir);
  EXPECT_EQ(loaded.seed, 42u);
  EXPECT_EQ(loaded.epochStepsDone, 0);
  EXPECT_EQ(loaded.epochSeen, 0);
  ASSERT_EQ(loaded.tensors.size(), 2u);
  EXPECT_EQ(loaded.tensors[1].dtype, 4);
}

TEST(CheckpointTest, CorruptionIsOneLine) {
  std::string dir = testing::TempDir() + "/dpc_ckpt_corrupt";
  fs::remove_all(dir);
  std::string path = getCheckpointPath(dir);
  try {
    loadCheckpoint(dir);
    FAIL();
  } catch (const CheckpointError &error) {
    EXPECT_EQ(std::string(error.what()),
              path + ": no checkpoint to resume from");
  }
  saveCheckpoint(dir, sampleState());
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(30);
    file.put('\x55');
  }
  try {
    loadCheckpoint(dir);
    FAIL();
  } catch (const CheckpointError &error) {
    EXPECT_EQ(std::string(error.what()),
              path + ": corrupted checkpoint (checksum mismatch)");
  }
  std::ofstream(path, std::ios::trunc) << "something else entirely";
  try {
    loadCheckpoint(dir);
    FAIL();
  } catch (const CheckpointError &error) {
    EXPECT_EQ(std::string(error.what()), path + ": not a dpc checkpoint");
  }
}

TEST(LrScheduleTest, ParsesAndEvaluates) {
  LrSchedule constant = LrSchedule::parse("constant");
  EXPECT_EQ(constant.at(0.1, 5, 3, 10, 10), 0.1);

  LrSchedule step = LrSchedule::parse("step:2:0.5");
  EXPECT_DOUBLE_EQ(step.at(0.1, 0, 0, 10, 10), 0.1);
  EXPECT_DOUBLE_EQ(step.at(0.1, 1, 9, 10, 10), 0.1);
  EXPECT_DOUBLE_EQ(step.at(0.1, 2, 0, 10, 10), 0.05);
  EXPECT_DOUBLE_EQ(step.at(0.1, 5, 0, 10, 10), 0.025);

  LrSchedule cosine = LrSchedule::parse("cosine");
  EXPECT_DOUBLE_EQ(cosine.at(0.1, 0, 0, 10, 4), 0.1);
  EXPECT_NEAR(cosine.at(0.1, 2, 0, 10, 4), 0.05, 1e-12);
  EXPECT_LT(cosine.at(0.1, 3, 9, 10, 4), 0.002);

  LrSchedule warm = LrSchedule::parse("cosine:1");
  EXPECT_NEAR(warm.at(0.1, 0, 0, 10, 5), 0.01, 1e-12);
  EXPECT_NEAR(warm.at(0.1, 0, 9, 10, 5), 0.1, 1e-12);
  EXPECT_NEAR(warm.at(0.1, 1, 0, 10, 5), 0.1, 1e-12);

  for (const char *bad : {"", "linear", "step", "step:0:0.5", "step:2:x",
                          "step:2:-1", "cosine:a", "cosine:1:2", "constant:1"})
    EXPECT_THROW(LrSchedule::parse(bad), std::invalid_argument) << bad;
}

TEST(MetricsTest, JsonLineAndPlot) {
  EpochMetrics m;
  m.epoch = 2;
  m.trainLoss = 0.25;
  m.trainAcc = 0.875;
  m.testAcc = std::numeric_limits<double>::quiet_NaN();
  m.epochSeconds = 1.5;
  m.imagesPerSecond = 40000;
  m.lr = 0.1;
  EXPECT_EQ(toJsonLine(m),
            "{\"epoch\": 2, \"train_loss\": 0.25, \"train_acc\": 0.875, "
            "\"test_acc\": null, \"epoch_seconds\": 1.5, "
            "\"images_per_second\": 40000, \"lr\": 0.1}");
  std::string svg = renderSvgPlot({m}, 10);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("train loss"), std::string::npos);
  EXPECT_NE(svg.find("train acc"), std::string::npos);
  EXPECT_EQ(svg.find("test acc"), std::string::npos) << "no test points";
  EXPECT_NE(svg.find(">epoch<"), std::string::npos);
}

} // namespace
} // namespace dpc::train
