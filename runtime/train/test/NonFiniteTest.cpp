//===- NonFiniteTest.cpp - NaN and infinity in the training state --------===//

#include "runtime/train/NonFinite.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/test/TestPlans.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace dpc::train {
namespace {

using plan::test::MlpPlanOptions;

TEST(NonFiniteTest, FindsTheFirstNaNOrInfinityOfEachFloatType) {
  std::vector<float> f32(10000, 1.5f);
  EXPECT_EQ(findNonFinite(int32_t(plan::DType::F32), f32.data(), 10000), -1);
  f32[9000] = std::numeric_limits<float>::infinity();
  f32[9001] = std::nanf("");
  EXPECT_EQ(findNonFinite(int32_t(plan::DType::F32), f32.data(), 10000), 9000);
  // The largest finite value and subnormals are finite.
  std::vector<float> edge = {std::numeric_limits<float>::max(),
                             -std::numeric_limits<float>::max(),
                             std::numeric_limits<float>::denorm_min(), -0.0f};
  EXPECT_EQ(findNonFinite(int32_t(plan::DType::F32), edge.data(), 4), -1);
  std::vector<double> f64(7, 0.0);
  f64[6] = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(findNonFinite(int32_t(plan::DType::F64), f64.data(), 7), 6);
  // f16 0x7e00 is NaN, bf16 0xff80 is -infinity, 0x7bff the largest f16.
  std::vector<uint16_t> half = {0x3c00, 0x7bff, 0x7e00};
  EXPECT_EQ(findNonFinite(int32_t(plan::DType::F16), half.data(), 3), 2);
  std::vector<uint16_t> brain = {0x3f80, 0xff80};
  EXPECT_EQ(findNonFinite(int32_t(plan::DType::BF16), brain.data(), 2), 1);
  std::vector<int32_t> ints(4, -1);
  EXPECT_EQ(findNonFinite(int32_t(plan::DType::I32), ints.data(), 4), -1);
}

/// Runs one train step of `options`' MLP on `batch`.
void trainStep(rt::Executor &executor, const MlpPlanOptions &options,
               plan::test::Batch &batch, float lr = 0.1f) {
  executor.setInput(0, "images", batch.images.data(),
                    batch.images.size() * sizeof(float));
  executor.setInput(0, "labels", batch.labels.data(),
                    batch.labels.size() * sizeof(int32_t));
  executor.setInput(0, "lr", &lr, sizeof(lr));
  executor.run(0, options.batch);
}

std::vector<std::vector<uint8_t>> readState(const rt::Executor &executor) {
  std::vector<std::vector<uint8_t>> state;
  for (size_t i = 0; i < executor.getNumPersistent(); ++i) {
    state.emplace_back(executor.getPersistentBytes(i));
    executor.readPersistent(i, state.back().data());
  }
  return state;
}

/// An infinite learning rate makes the step's update non-finite. skip-step puts
/// back every replica's state (momentum included) and the optimizer step, bit
/// for bit, and training goes on from there.
TEST(NonFiniteTest, SkipStepUndoesTheUpdateOnEveryReplica) {
  MlpPlanOptions options = plan::test::smallMlp({4, 4}, /*momentum=*/0.9);
  auto loaded = plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(options),
                                            "mlp.plan");
  rt::Executor executor(loaded);
  NonFiniteGuard guard(executor, 0, OnNonFinite::SkipStep);
  guard.keepState();

  plan::test::Batch good = plan::test::randomBatch(options, 8, 1);
  trainStep(executor, options, good);
  EXPECT_FALSE(guard.check());
  std::vector<std::vector<uint8_t>> before = readState(executor);
  int64_t stepBefore = executor.getOptimizerStep();

  plan::test::Batch other = plan::test::randomBatch(options, 8, 2);
  trainStep(executor, options, other, std::numeric_limits<float>::infinity());
  std::optional<NonFiniteValue> bad = guard.check();
  ASSERT_TRUE(bad);
  EXPECT_NE(readState(executor), before);
  EXPECT_EQ(bad->kind, "parameter");
  EXPECT_EQ(bad->describe().rfind("parameter '" + bad->tensor + "' holds ", 0),
            0u)
      << bad->describe();
  guard.restoreState();
  EXPECT_EQ(readState(executor), before);
  EXPECT_EQ(executor.getOptimizerStep(), stepBefore);

  trainStep(executor, options, good);
  EXPECT_FALSE(guard.check());
  EXPECT_NE(readState(executor), before);
}

/// Stop: only the check; the state it found stays for the error message.
TEST(NonFiniteTest, StopNamesTheFirstBadTensor) {
  MlpPlanOptions options = plan::test::smallMlp();
  auto loaded = plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(options),
                                            "mlp.plan");
  rt::Executor executor(loaded);
  NonFiniteGuard guard(executor, 0, OnNonFinite::Stop);
  EXPECT_FALSE(guard.check());
  std::vector<float> w1(executor.getPersistentBytes(0) / sizeof(float), 0.5f);
  w1[3] = -std::numeric_limits<float>::infinity();
  executor.writePersistent(0, w1.data());
  std::optional<NonFiniteValue> bad = guard.check();
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->describe(),
            "parameter '" + loaded->get().persistent()->Get(0)->name()->str() +
                "' holds -inf at index 3");
}

/// The CPU's updates check what they write: the executor names the
/// parameters and momentum buffers of device 0 (the primary copies, not
/// device 1's), and its flag tells a bad update from a good one, with no
/// scan; the guard then finds the tensor.
TEST(NonFiniteTest, UpdatesFlagWhatTheyWriteOnThePrimaryDevice) {
  MlpPlanOptions options = plan::test::smallMlp({4, 4}, /*momentum=*/0.9);
  auto loaded = plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(options),
                                            "mlp.plan");
  rt::Executor executor(loaded);
  const auto *states = loaded->get().persistent();
  std::vector<size_t> expected;
  for (size_t i = 0; i < states->size(); ++i)
    if (states->Get(i)->device() == 0 &&
        states->Get(i)->kind() != plan::PersistentKind::Buffer)
      expected.push_back(i);
  ASSERT_EQ(expected.size(), 8u); // 4 parameters, 4 momentum buffers
  EXPECT_EQ(executor.getCheckedPersistent(0), expected);

  NonFiniteGuard guard(executor, 0, OnNonFinite::Stop);
  EXPECT_FALSE(guard.check());
  plan::test::Batch good = plan::test::randomBatch(options, 8, 1);
  trainStep(executor, options, good);
  EXPECT_FALSE(executor.wroteNonFinite(0));
  EXPECT_FALSE(guard.check());
  trainStep(executor, options, good, std::numeric_limits<float>::infinity());
  EXPECT_TRUE(executor.wroteNonFinite(0));
  std::optional<NonFiniteValue> bad = guard.check();
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->kind, "parameter");
}

} // namespace
} // namespace dpc::train
