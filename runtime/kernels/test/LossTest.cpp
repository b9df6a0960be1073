//===- LossTest.cpp - nn.loss's CPU loops against PyTorch -----------------===//
//
// Each case's loss and gradient are PyTorch's (float64, reduction="mean"),
// from tools/reference/make_loss_reference.py; a data-parallel split of
// the batch must add up to the same loss and gradient.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Loss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using dpc::plan::LossCode;
using dpc::plan::LossShape;
namespace kernels = dpc::kernels;

struct LossCase {
  std::string name;
  LossCode kind;
  std::vector<int64_t> dims;
  const float *output;
  const void *target;
  double loss;
  const float *grad;
  int64_t classAxis = 1;
  std::optional<int64_t> ignoreIndex;
  float labelSmoothing = 0, delta = 1;
  std::vector<float> weights;
};

std::vector<LossCase> referenceCases() {
  std::vector<LossCase> cases;
#include "runtime/kernels/test/LossReference.inc"
  return cases;
}

/// The shape of `rows` samples of `c` in a global batch of c.dims[0].
LossShape shapeOf(const LossCase &c, int64_t rows) {
  LossShape s;
  s.kind = c.kind;
  s.hasIgnoreIndex = c.ignoreIndex.has_value();
  s.ignoreIndex = c.ignoreIndex.value_or(0);
  s.labelSmoothing = c.labelSmoothing;
  s.delta = c.delta;
  s.numWeights = static_cast<int32_t>(c.weights.size());
  for (size_t i = 0; i < c.weights.size(); ++i)
    s.weights[i] = c.weights[i];
  std::vector<int64_t> dims = c.dims;
  dims[0] = rows;
  int64_t all = 1;
  for (int64_t d : dims)
    all *= d;
  if (s.isCrossEntropy()) {
    s.outer = s.inner = 1;
    for (int64_t d = 0; d < c.classAxis; ++d)
      s.outer *= dims[d];
    s.classes = dims[c.classAxis];
    for (size_t d = c.classAxis + 1; d < dims.size(); ++d)
      s.inner *= dims[d];
  } else {
    s.elements = s.outer = all;
    s.classes = s.inner = 1;
    s.lastDim = dims.back();
  }
  s.countDivisor =
      static_cast<double>(c.dims[0]) * (rows ? s.targets() / rows : 0);
  return s;
}

bool dividesByWeight(const LossCase &c) {
  return c.kind == LossCode::CrossEntropy &&
         (c.ignoreIndex || !c.weights.empty());
}

class LossReferenceTest : public testing::TestWithParam<LossCase> {};

TEST_P(LossReferenceTest, LossAndGradientArePyTorchs) {
  const LossCase &c = GetParam();
  LossShape s = shapeOf(c, c.dims[0]);
  double divisor = s.countDivisor;
  if (dividesByWeight(c))
    divisor = kernels::lossWeight(s, static_cast<const int32_t *>(c.target));
  double loss = kernels::lossSum(s, c.output, c.target) / divisor;
  EXPECT_NEAR(loss, c.loss, 1e-5 * std::max(1.0, std::fabs(c.loss)));
  int64_t size =
      s.isCrossEntropy() ? s.outer * s.classes * s.inner : s.elements;
  std::vector<float> grad(size, NAN);
  kernels::lossGradient(s, c.output, c.target, 1.0 / divisor, grad.data());
  for (int64_t i = 0; i < size; ++i)
    EXPECT_NEAR(grad[i], c.grad[i], 1e-6) << "element " << i;
}

/// Two replicas on an uneven split (1 and N - 1 samples, so that they hold
/// different numbers of ignored targets): each divides by the global
/// divisor (the all-reduced weight of the valid targets, or the global
/// count), and their losses and gradients add up to the whole batch's.
TEST_P(LossReferenceTest, UnevenReplicasAddUpToTheGlobalMean) {
  const LossCase &c = GetParam();
  int64_t split[2] = {1, c.dims[0] - 1};
  LossShape shards[2] = {shapeOf(c, split[0]), shapeOf(c, split[1])};
  auto outputSize = [](const LossShape &s) {
    return s.isCrossEntropy() ? s.outer * s.classes * s.inner : s.elements;
  };
  // Targets are 4 bytes, int32 classes or floats.
  const auto *targets = static_cast<const char *>(c.target);
  double divisor = shards[0].countDivisor;
  if (dividesByWeight(c))
    divisor =
        kernels::lossWeight(shards[0], static_cast<const int32_t *>(c.target)) +
        kernels::lossWeight(shards[1], reinterpret_cast<const int32_t *>(
                                           targets + 4 * shards[0].targets()));
  double loss = 0;
  std::vector<float> grad(outputSize(shards[0]) + outputSize(shards[1]));
  int64_t outputAt = 0, targetAt = 0;
  for (const LossShape &s : shards) {
    loss += kernels::lossSum(s, c.output + outputAt, targets + 4 * targetAt) /
            divisor;
    kernels::lossGradient(s, c.output + outputAt, targets + 4 * targetAt,
                          1.0 / divisor, grad.data() + outputAt);
    outputAt += outputSize(s);
    targetAt += s.targets();
  }
  EXPECT_NEAR(loss, c.loss, 1e-5 * std::max(1.0, std::fabs(c.loss)));
  for (size_t i = 0; i < grad.size(); ++i)
    EXPECT_NEAR(grad[i], c.grad[i], 1e-6) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(PyTorch, LossReferenceTest,
                         testing::ValuesIn(referenceCases()),
                         [](const testing::TestParamInfo<LossCase> &info) {
                           return info.param.name;
                         });

TEST(LossTest, CountsCorrectValidTargetsOnly) {
  // Logits [1, 2 classes, 3 positions]: argmax 1, 0, 1.
  const float logits[] = {0.f, 2.f, 0.f, 1.f, 1.f, 3.f};
  const int32_t targets[] = {1, -1, 0};
  LossShape s;
  s.outer = 1, s.classes = 2, s.inner = 3;
  s.hasIgnoreIndex = true, s.ignoreIndex = -1;
  EXPECT_EQ(kernels::lossCorrectCount(s, logits, targets), 1);
  EXPECT_EQ(kernels::lossWeight(s, targets), 2.0);
}

TEST(LossTest, RefusesAClassOutsideTheLogits) {
  const int32_t targets[] = {0, 2};
  LossShape s;
  s.outer = 2, s.classes = 2, s.inner = 1;
  try {
    kernels::checkClassTargets(s, targets);
    FAIL() << "no error";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "target 1 is class 2, outside the 2 classes");
  }
}

} // namespace
