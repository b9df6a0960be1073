//===- InitTest.cpp - dpc run --init
//---------------------------------------===//

#include "runtime/train/Init.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/test/TestPlans.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dpc;

namespace {

std::vector<std::vector<float>> readAll(const rt::Executor &executor) {
  std::vector<std::vector<float>> values;
  for (size_t i = 0; i < executor.getNumPersistent(); ++i) {
    values.emplace_back(executor.getPersistentBytes(i) / sizeof(float));
    executor.readPersistent(i, values.back().data());
  }
  return values;
}

std::shared_ptr<const plan::LoadedPlan> mlpPlan() {
  plan::test::MlpPlanOptions options;
  options.hidden = 256; // fc1: [256, 784], fc2: [10, 256]
  return plan::LoadedPlan::fromBytes(plan::test::buildMlpPlan(options),
                                     "mlp.plan");
}

TEST(InitTest, ParsesSchemes) {
  EXPECT_EQ(train::parseInitScheme("kaiming").kind,
            train::InitScheme::KaimingNormal);
  EXPECT_EQ(train::parseInitScheme("xavier").kind,
            train::InitScheme::XavierUniform);
  train::InitScheme normal = train::parseInitScheme("normal:0.01");
  EXPECT_EQ(normal.kind, train::InitScheme::Normal);
  EXPECT_DOUBLE_EQ(normal.std, 0.01);
  for (const char *bad : {"normal:", "normal:-1", "normal:0.1x", "he", ""})
    EXPECT_THROW(train::parseInitScheme(bad), std::invalid_argument) << bad;
}

TEST(InitTest, DrawsWeightsWithTheSchemesSpreadAndKeepsVectors) {
  auto plan = mlpPlan();
  rt::Executor model(plan), kaiming(plan), again(plan), other(plan);
  train::initializeParameters(kaiming, train::parseInitScheme("kaiming"), 7);
  train::initializeParameters(again, train::parseInitScheme("kaiming"), 7);
  train::initializeParameters(other, train::parseInitScheme("kaiming"), 8);
  auto before = readAll(model), after = readAll(kaiming);
  EXPECT_EQ(after, readAll(again)) << "the seed fixes the draw";
  EXPECT_NE(after, readAll(other));

  const plan::Plan &p = plan->get();
  int weights = 0;
  for (size_t i = 0; i < after.size(); ++i) {
    const auto *tensor = p.persistent()->Get(i);
    if (tensor->kind() != plan::PersistentKind::Parameter ||
        tensor->dims()->size() < 2) {
      EXPECT_EQ(after[i], before[i]) << tensor->name()->str();
      continue;
    }
    ++weights;
    double fanIn = tensor->dims()->Get(1), sum = 0, squares = 0;
    for (float v : after[i])
      sum += v, squares += double(v) * v;
    double n = after[i].size(), mean = sum / n;
    double std = std::sqrt(squares / n - mean * mean);
    EXPECT_NEAR(mean, 0.0, 4 * std::sqrt(2.0 / fanIn) / std::sqrt(n));
    EXPECT_NEAR(std / std::sqrt(2.0 / fanIn), 1.0, 0.05)
        << tensor->name()->str();
  }
  EXPECT_EQ(weights, 2);
}

TEST(InitTest, XavierStaysInItsBound) {
  auto plan = mlpPlan();
  rt::Executor executor(plan);
  train::initializeParameters(executor, train::parseInitScheme("xavier"), 1);
  auto values = readAll(executor);
  const plan::Plan &p = plan->get();
  for (size_t i = 0; i < values.size(); ++i) {
    const auto *tensor = p.persistent()->Get(i);
    if (tensor->kind() != plan::PersistentKind::Parameter ||
        tensor->dims()->size() < 2)
      continue;
    double bound =
        std::sqrt(6.0 / (tensor->dims()->Get(0) + tensor->dims()->Get(1)));
    float largest = 0;
    for (float v : values[i]) {
      EXPECT_LE(std::fabs(v), bound);
      largest = std::max(largest, std::fabs(v));
    }
    EXPECT_GT(largest, 0.9 * bound); // it fills the interval
  }
}

// hash:SEED is tools/reference/make_zoo.py's hash_init, bit for bit: these
// values are what numpy computes there (float.hex of its first elements).
TEST(InitTest, HashInitMatchesTheZooGenerator) {
  struct Case {
    const char *name;
    std::vector<int64_t> dims;
    uint64_t seed;
    float first[3];
  } cases[] = {
      {"fc1.weight",
       {4, 3},
       0,
       {-0x1.0135dep-3f, 0x1.5f5274p-4f, 0x1.769a0cp-2f}},
      {"bn1.weight", {3}, 0, {0x1.b86caap-1f, 0x1.530c7ap+0f, 0x1.11b64cp+0f}},
      {"fc1.bias", {3}, 7, {-0x1.3cf246p-2f, -0x1.a256f6p-3f, -0x1.3e159ap-3f}},
      {"conv.weight",
       {2, 2, 3, 3},
       0,
       {-0x1.2c60acp-3f, 0x1.351810p-4f, 0x1.5f88bcp-3f}},
  };
  for (const Case &c : cases)
    for (uint64_t k = 0; k < 3; ++k)
      EXPECT_EQ(train::hashInitValue(c.name, c.dims, k, c.seed), c.first[k])
          << c.name << "[" << k << "]";
}

TEST(InitTest, HashInitSetsEveryParameterFromItsName) {
  auto plan = mlpPlan();
  rt::Executor hashed(plan), again(plan), other(plan);
  train::initializeParameters(hashed, train::parseInitScheme("hash:3"), 1);
  // The run's seed plays no part; SEED does.
  train::initializeParameters(again, train::parseInitScheme("hash:3"), 2);
  train::initializeParameters(other, train::parseInitScheme("hash:4"), 1);
  auto values = readAll(hashed);
  EXPECT_EQ(values, readAll(again));
  EXPECT_NE(values, readAll(other));
  const plan::Plan &p = plan->get();
  for (size_t i = 0; i < values.size(); ++i) {
    const auto *tensor = p.persistent()->Get(i);
    if (tensor->kind() != plan::PersistentKind::Parameter)
      continue;
    std::vector<int64_t> dims(tensor->dims()->begin(), tensor->dims()->end());
    for (size_t k = 0; k < values[i].size(); k += 97)
      ASSERT_EQ(values[i][k],
                train::hashInitValue(tensor->name()->str(), dims, k, 3));
  }
  for (const char *bad : {"hash:", "hash:-1", "hash:1x", "hash"})
    EXPECT_THROW(train::parseInitScheme(bad), std::invalid_argument) << bad;
}

} // namespace
