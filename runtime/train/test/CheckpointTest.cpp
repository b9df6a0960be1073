//===- CheckpointTest.cpp - checkpoint files, schedules, metrics ----------===//

#include "runtime/train/Checkpoint.h"
#include "runtime/train/LrSchedule.h"
#include "runtime/train/Metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
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
  state.partial = {5, 80, 12.5, 61, 0.25};
  for (int64_t epoch = 1; epoch <= 3; ++epoch) {
    EpochMetrics m;
    m.epoch = epoch;
    m.trainLoss = 0.5;
    m.testAcc = std::numeric_limits<double>::quiet_NaN();
    m.valLoss = 0.25 * double(epoch);
    m.valAcc = 0.75;
    state.history.push_back(m);
  }
  state.tensors.push_back({"w", 0, {2, 3}, std::vector<uint8_t>(24, 7)});
  state.tensors.push_back({"b", 4, {}, std::vector<uint8_t>(4, 1)});
  state.dataForm = {true, data::ImageLayout::NHWC, {{0.5f, 0.25f}, {2, 4}}};
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
  EXPECT_EQ(loaded.partial.stepsDone, 5);
  EXPECT_EQ(loaded.partial.samplesSeen, 80);
  EXPECT_EQ(loaded.partial.lossSum, 12.5);
  EXPECT_EQ(loaded.partial.correct, 61);
  EXPECT_EQ(loaded.partial.trainSeconds, 0.25);
  ASSERT_EQ(loaded.history.size(), 3u);
  EXPECT_EQ(loaded.history[0].trainLoss, 0.5);
  EXPECT_TRUE(std::isnan(loaded.history[0].testAcc));
  EXPECT_EQ(loaded.history[2].valLoss, 0.75);
  EXPECT_EQ(loaded.history[1].valAcc, 0.75);
  ASSERT_EQ(loaded.tensors.size(), 2u);
  EXPECT_EQ(loaded.tensors[0].name, "w");
  EXPECT_EQ(loaded.tensors[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(loaded.tensors[0].bytes, std::vector<uint8_t>(24, 7));
  EXPECT_EQ(loaded.tensors[1].dtype, 4);
  EXPECT_TRUE(loaded.dataForm.known);
  EXPECT_EQ(loaded.dataForm.layout, data::ImageLayout::NHWC);
  EXPECT_EQ(loaded.dataForm.normalization.mean,
            (std::vector<float>{0.5f, 0.25f}));
  EXPECT_EQ(loaded.dataForm.normalization.std, (std::vector<float>{2, 4}));
}

/// Rewrites a saved (current version) checkpoint as version `version`:
/// the digit, the fields older versions lack dropped, and the checksum.
void rewriteVersion(const std::string &path, char version) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  bytes.resize(bytes.size() - 8);
  bytes[7] = uint8_t(version);
  // Before version 4, no data form at the end: a layout, a channel count
  // and a mean and std per channel.
  if (version < '4') {
    uint64_t channels = 0, stored;
    for (;; ++channels) {
      std::memcpy(&stored, &bytes[bytes.size() - 8 * channels - 8], 8);
      if (stored == channels)
        break;
    }
    bytes.resize(bytes.size() - 8 * channels - 12);
  }
  size_t partialAt = 8 + 4 * 8, historyAt = partialAt + 5 * 8;
  uint64_t epochs;
  std::memcpy(&epochs, &bytes[historyAt], 8);
  // Before version 3, an epoch's metrics end at lr (no val_loss, val_acc):
  // drop those of each epoch, the last first.
  if (version < '3')
    for (uint64_t e = epochs; e-- > 0;) {
      size_t valAt = historyAt + 8 + e * 72 + 56;
      bytes.erase(bytes.begin() + valAt, bytes.begin() + valAt + 16);
    }
  // Version 1 lacks the partial epoch (5 fields after the seed).
  if (version < '2')
    bytes.erase(bytes.begin() + partialAt, bytes.begin() + historyAt);
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes)
    hash = (hash ^ b) * 0x100000001b3ull;
  const auto *p = reinterpret_cast<const uint8_t *>(&hash);
  bytes.insert(bytes.end(), p, p + 8);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

TEST(CheckpointTest, ReadsVersionsOneToThreeAndRefusesNewer) {
  std::string dir = testing::TempDir() + "/dpc_ckpt_versions";
  fs::remove_all(dir);
  std::string path = getCheckpointPath(dir);
  saveCheckpoint(dir, sampleState());
  rewriteVersion(path, '1');
  TrainingState loaded = loadCheckpoint(dir);
  EXPECT_EQ(loaded.stepsDone, 77);
  EXPECT_EQ(loaded.partial.stepsDone, 0);
  ASSERT_EQ(loaded.tensors.size(), 2u);
  EXPECT_EQ(loaded.tensors[1].name, "b");

  saveCheckpoint(dir, sampleState());
  rewriteVersion(path, '2');
  loaded = loadCheckpoint(dir);
  EXPECT_EQ(loaded.partial.stepsDone, 5);
  ASSERT_EQ(loaded.history.size(), 3u);
  EXPECT_EQ(loaded.history[2].trainLoss, 0.5);
  EXPECT_TRUE(std::isnan(loaded.history[2].valLoss));
  EXPECT_EQ(loaded.tensors[0].bytes, std::vector<uint8_t>(24, 7));
  EXPECT_FALSE(loaded.dataForm.known);

  saveCheckpoint(dir, sampleState());
  rewriteVersion(path, '3');
  loaded = loadCheckpoint(dir);
  EXPECT_EQ(loaded.history[2].valLoss, 0.75);
  EXPECT_EQ(loaded.tensors[1].bytes, std::vector<uint8_t>(4, 1));
  EXPECT_FALSE(loaded.dataForm.known);

  saveCheckpoint(dir, sampleState());
  rewriteVersion(path, '9');
  try {
    loadCheckpoint(dir);
    FAIL();
  } catch (const CheckpointError &error) {
    EXPECT_EQ(std::string(error.what()),
              path + ": checkpoint format version 9 is not one this dpc "
                     "reads (1 to 4)");
  }
}

TEST(CheckpointTest, DataFormIsTakenAndConflictsAreRefused) {
  TrainingState state = sampleState();
  data::ImageLayout layout = data::ImageLayout::Auto;
  data::Normalization normalization;
  reconcileDataForm(state, layout, normalization, "c.dpcckpt");
  EXPECT_EQ(layout, data::ImageLayout::NHWC);
  EXPECT_EQ(normalization.std, (std::vector<float>{2, 4}));

  normalization = {{0.5f}, {3}};
  try {
    reconcileDataForm(state, layout, normalization, "c.dpcckpt");
    FAIL();
  } catch (const CheckpointError &error) {
    EXPECT_EQ(std::string(error.what()),
              "c.dpcckpt: was trained with --normalize 0.5,0.25:2,4, not "
              "with 0.5:3 (leave --normalize out to use the checkpoint's)");
  }
  layout = data::ImageLayout::NCHW;
  normalization = {};
  try {
    reconcileDataForm(state, layout, normalization, "c.dpcckpt");
    FAIL();
  } catch (const CheckpointError &error) {
    EXPECT_EQ(std::string(error.what()),
              "c.dpcckpt: was trained with --layout nhwc, not nchw (leave "
              "--layout out to use the checkpoint's)");
  }
  // Before version 4 nothing is known: the flags stand, and are recorded.
  TrainingState old;
  normalization = {{0.5f}, {3}};
  reconcileDataForm(old, layout, normalization, "c.dpcckpt");
  EXPECT_TRUE(old.dataForm.known);
  EXPECT_EQ(old.dataForm.layout, data::ImageLayout::NCHW);
  EXPECT_EQ(old.dataForm.normalization.std, (std::vector<float>{3}));
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

/// The message of the CheckpointError that loading `state` back throws.
std::string reloadError(const TrainingState &state) {
  // One directory per test: ctest runs them in parallel processes.
  std::string dir =
      testing::TempDir() + "/dpc_ckpt_invalid_" +
      testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(dir);
  saveCheckpoint(dir, state);
  try {
    loadCheckpoint(dir);
  } catch (const CheckpointError &error) {
    std::string message = error.what();
    std::string prefix = getCheckpointPath(dir) + ": ";
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
    return message.substr(prefix.size());
  }
  return "";
}

TEST(CheckpointTest, CountersMustAgree) {
  TrainingState state = sampleState();
  state.stepsDone = -5;
  EXPECT_EQ(reloadError(state), "invalid checkpoint (negative epochs, steps or "
                                "optimizer steps done)");
  state = sampleState();
  state.epochsDone = 4;
  EXPECT_EQ(reloadError(state),
            "invalid checkpoint (4 epochs done but the metrics of 3)");
  state = sampleState();
  state.history[1].epoch = 7;
  EXPECT_EQ(reloadError(state),
            "invalid checkpoint (metrics entry 1 is epoch 7, not 2)");
  state = sampleState();
  state.stepsDone = 2;
  state.optimizerStep = 2;
  EXPECT_EQ(reloadError(state), "invalid checkpoint (3 epochs done in 2 "
                                "steps)");
  state = sampleState();
  state.optimizerStep = 78;
  EXPECT_EQ(reloadError(state),
            "invalid checkpoint (78 optimizer steps in 77 steps)");
}

TEST(CheckpointTest, TensorsMustBeWhatTheirDtypeAndDimsSay) {
  TrainingState state = sampleState();
  state.tensors[0].bytes.resize(20);
  EXPECT_EQ(reloadError(state), "invalid checkpoint (tensor 'w' [2, 3] holds "
                                "20 bytes, not 24)");
  state = sampleState();
  state.tensors[1].dtype = 99;
  EXPECT_EQ(reloadError(state),
            "invalid checkpoint (tensor 'b' has unknown dtype 99)");
  state = sampleState();
  state.tensors[0].dims = {int64_t(1) << 32, int64_t(1) << 32};
  EXPECT_EQ(reloadError(state), "invalid checkpoint (tensor 'w' has invalid "
                                "dims [4294967296, 4294967296])");
  state = sampleState();
  state.tensors[0].name.clear();
  EXPECT_EQ(reloadError(state), "invalid checkpoint (a tensor has no name)");
}

/// `value`'s little-endian bytes.
template <typename T> std::string raw(T value) {
  return std::string(reinterpret_cast<const char *>(&value), sizeof(T));
}

/// A checkpoint file of `body` after the magic, with a valid checksum.
void writeRawCheckpoint(const std::string &dir, const std::string &body) {
  fs::create_directories(dir);
  std::string bytes = "DPCCKPT1" + body;
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes)
    hash = (hash ^ c) * 0x100000001b3ull;
  std::ofstream(getCheckpointPath(dir), std::ios::binary) << bytes + raw(hash);
}

TEST(CheckpointTest, CountsBeyondTheFileAreTruncation) {
  // Counts whose byte sizes wrap around 64 bits (2^58 epochs of 56 bytes,
  // a rank of 2^61 dims of 8) must not pass for a file a few bytes long.
  std::string dir = testing::TempDir() + "/dpc_ckpt_counts";
  std::string counters =
      raw<int64_t>(0) + raw<int64_t>(0) + raw<int64_t>(0) + raw<uint64_t>(0);
  for (const std::string &body :
       {counters + raw<uint64_t>(uint64_t(1) << 58) + raw<uint64_t>(0),
        counters + raw<uint64_t>(0) + raw<uint64_t>(uint64_t(1) << 60),
        counters + raw<uint64_t>(0) + raw<uint64_t>(1) + raw<uint64_t>(1) +
            "w" + raw<int32_t>(0) + raw<uint64_t>(uint64_t(1) << 61) +
            raw<uint64_t>(0)}) {
    writeRawCheckpoint(dir, body);
    try {
      loadCheckpoint(dir);
      ADD_FAILURE() << "no error";
    } catch (const CheckpointError &error) {
      EXPECT_EQ(std::string(error.what()),
                getCheckpointPath(dir) + ": corrupted checkpoint (truncated)");
    }
  }
}

TEST(CheckpointTest, ResumingPastTheEndOfTheRunIsRefused) {
  TrainingState state = sampleState();
  checkResumable(state, 3, -1, "c");
  checkResumable(state, 5, 77, "c");
  try {
    checkResumable(state, 2, -1, "c");
    ADD_FAILURE() << "no error";
  } catch (const CheckpointError &error) {
    EXPECT_EQ(std::string(error.what()),
              "c: has done 3 epochs, more than this run's 2");
  }
  try {
    checkResumable(state, 5, 50, "c");
    ADD_FAILURE() << "no error";
  } catch (const CheckpointError &error) {
    EXPECT_EQ(std::string(error.what()),
              "c: has done 77 steps, more than this run's --steps 50");
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
  EXPECT_EQ(svg.find("val "), std::string::npos) << "no validation set";

  // With a validation set: its loss and accuracy, in the line and the plot.
  m.valLoss = 0.5;
  m.valAcc = 0.625;
  EXPECT_EQ(toJsonLine(m),
            "{\"epoch\": 2, \"train_loss\": 0.25, \"train_acc\": 0.875, "
            "\"test_acc\": null, \"epoch_seconds\": 1.5, "
            "\"images_per_second\": 40000, \"lr\": 0.1, \"val_loss\": 0.5, "
            "\"val_acc\": 0.625}");
  svg = renderSvgPlot({m}, 10);
  EXPECT_NE(svg.find("val loss"), std::string::npos);
  EXPECT_NE(svg.find("val acc"), std::string::npos);
}

} // namespace
} // namespace dpc::train
