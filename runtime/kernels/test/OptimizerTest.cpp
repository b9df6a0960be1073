//===- OptimizerTest.cpp - SGD and AdamW against hand-computed steps ------===//
//
// One parameter p0 = 1 receives the gradients 0.5, -0.3, 0.2 over three
// steps. Expected values follow torch.optim's update rules, worked out by
// hand (in double) in the comments.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Optimizer.h"
#include "runtime/kernels/test/TestUtil.h"

#include <limits>

namespace dpc::kernels::test {
namespace {

constexpr float kGrads[3] = {0.5f, -0.3f, 0.2f};

/// Runs three steps on a two-element buffer (both elements identical, to
/// catch indexing slips) and returns the parameter after each step.
std::vector<float> runSgd(const SgdParams &params, double lr) {
  // The buffer starts as garbage: step 1 must overwrite, not accumulate.
  std::vector<float> p{1.f, 1.f}, buf{123.f, 123.f}, out;
  for (int step = 1; step <= 3; ++step) {
    std::vector<float> g{kGrads[step - 1], kGrads[step - 1]};
    sgdUpdate(2, params, lr, step, p.data(), g.data(), buf.data());
    EXPECT_EQ(p[0], p[1]);
    out.push_back(p[0]);
  }
  return out;
}

TEST(SgdTest, MomentumWeightDecay) {
  // d = g + 0.1 p; buf = d (step 1) else 0.9 buf + d; p -= 0.1 buf
  //   step 1: d = 0.6,    buf = 0.6,     p = 0.94
  //   step 2: d = -0.206, buf = 0.334,   p = 0.9066
  //   step 3: d = 0.29066, buf = 0.59126, p = 0.847474
  auto p = runSgd({0.9, 0.0, 0.1, false}, 0.1);
  expectAllNear(p, std::vector<double>{0.94, 0.9066, 0.847474}, 1e-6, 1e-6,
                "p");
}

TEST(SgdTest, NesterovWeightDecay) {
  // As above, then d += 0.9 buf; p -= 0.1 d
  //   step 1: buf = 0.6,       d = 1.14,       p = 0.886
  //   step 2: buf = 0.3286,    d = 0.08434,    p = 0.877566
  //   step 3: buf = 0.5834966, d = 0.81290354, p = 0.796275646
  auto p = runSgd({0.9, 0.0, 0.1, true}, 0.1);
  expectAllNear(p, std::vector<double>{0.886, 0.877566, 0.796275646}, 1e-6,
                1e-6, "p");
}

TEST(SgdTest, DampeningNotAppliedOnFirstStep) {
  // buf = g (step 1, no dampening), then 0.9 buf + 0.5 g:
  //   buf = 0.5, 0.3, 0.37;  p = 0.95, 0.92, 0.883
  auto p = runSgd({0.9, 0.5, 0.0, false}, 0.1);
  expectAllNear(p, std::vector<double>{0.95, 0.92, 0.883}, 1e-6, 1e-6, "p");
}

TEST(SgdTest, PlainWithWeightDecay) {
  // p -= 0.1 (g + 0.1 p): 0.94, 0.9606, 0.930994
  std::vector<float> p{1.f};
  std::vector<float> out;
  for (int step = 1; step <= 3; ++step) {
    sgdUpdate(1, {0.0, 0.0, 0.1, false}, 0.1, step, p.data(), &kGrads[step - 1],
              nullptr);
    out.push_back(p[0]);
  }
  expectAllNear(out, std::vector<double>{0.94, 0.9606, 0.930994}, 1e-6, 1e-6,
                "p");
}

TEST(SgdTest, RejectsBadArguments) {
  float p = 1, g = 1, b = 0;
  EXPECT_THROW(sgdUpdate(1, {0.9, 0.0, 0.0, false}, 0.1, 0, &p, &g, &b),
               std::invalid_argument);
  EXPECT_THROW(sgdUpdate(1, {0.9, 0.0, 0.0, false}, 0.1, 1, &p, &g, nullptr),
               std::invalid_argument);
  EXPECT_THROW(sgdUpdate(1, {0.9, 0.1, 0.0, true}, 0.1, 1, &p, &g, &b),
               std::invalid_argument);
}

TEST(AdamWTest, ThreeStepsWithBiasCorrection) {
  // lr 0.01, betas (0.9, 0.999), eps 1e-8, weight decay 0.1:
  //   p *= 1 - lr*wd; m = 0.9 m + 0.1 g; v = 0.999 v + 0.001 g^2
  //   p -= lr / (1 - 0.9^t) * m / (sqrt(v) / sqrt(1 - 0.999^t) + eps)
  //   t=1: m = 0.05,   v = 2.5e-4,      p = 0.9890000002
  //   t=2: m = 0.015,  v = 3.3975e-4,   p = 0.9860960198939775
  //   t=3: m = 0.0335, v = 3.7941025e-4, p = 0.9816356470589943
  AdamWParams params{0.9, 0.999, 1e-8, 0.1};
  std::vector<float> p{1.f, 1.f}, m{0.f, 0.f}, v{0.f, 0.f};
  const double expectedP[3] = {0.9890000002, 0.9860960198939775,
                               0.9816356470589943};
  const double expectedM[3] = {0.05, 0.015, 0.0335};
  const double expectedV[3] = {2.5e-4, 3.3975e-4, 3.7941025e-4};
  for (int step = 1; step <= 3; ++step) {
    std::vector<float> g{kGrads[step - 1], kGrads[step - 1]};
    adamwUpdate(2, params, 0.01, step, p.data(), g.data(), m.data(), v.data());
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(p[i], expectedP[step - 1], 1e-6) << "step " << step;
      EXPECT_NEAR(m[i], expectedM[step - 1], 1e-7) << "step " << step;
      EXPECT_NEAR(v[i], expectedV[step - 1], 1e-9) << "step " << step;
    }
  }
}

TEST(AdamWTest, EpsIsAddedOutsideTheSquareRoot) {
  // Gradients of the order of eps make its placement visible. lr 0.1,
  // eps 1e-3, no weight decay, gradients 1e-3, -2e-3, 5e-4:
  //   t=1: denom = sqrt(1e-9)/sqrt(1e-3) + 1e-3 = 2e-3,  p = 0.95
  //   t=2: denom = 2.5813761e-3,                          p =
  //   0.9724278580726168 t=3: denom = 2.3227810e-3,                          p
  //   = 0.9802121395139826
  // (eps inside the root would give p = 0.9684... after step 1).
  AdamWParams params{0.9, 0.999, 1e-3, 0.0};
  const float grads[3] = {1e-3f, -2e-3f, 5e-4f};
  const double expected[3] = {0.95, 0.9724278580726168, 0.9802121395139826};
  float p = 1.f, m = 0.f, v = 0.f;
  for (int step = 1; step <= 3; ++step) {
    adamwUpdate(1, params, 0.1, step, &p, &grads[step - 1], &m, &v);
    EXPECT_NEAR(p, expected[step - 1], 2e-6) << "step " << step;
  }
}

TEST(AdamWTest, LearningRateIsARuntimeArgument) {
  // lr 0 leaves the parameter alone (no decay either) but still advances
  // the moments; the next step at lr 0.01 then moves it.
  AdamWParams params{0.9, 0.999, 1e-8, 0.1};
  float p = 1.f, m = 0.f, v = 0.f, g = 0.5f;
  adamwUpdate(1, params, 0.0, 1, &p, &g, &m, &v);
  EXPECT_EQ(p, 1.f);
  EXPECT_NEAR(m, 0.05f, 1e-7);
  adamwUpdate(1, params, 0.01, 2, &p, &g, &m, &v);
  EXPECT_LT(p, 0.99f);
}

/// The updates say whether they wrote NaN or infinity (into the parameter
/// or the optimizer state), on one thread and on the team (a million
/// elements), wherever it lands; finite extremes are not flagged.
TEST(OptimizerNonFiniteTest, UpdatesReportNaNOrInfinityWritten) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (int64_t size : {int64_t{5}, int64_t{1} << 20}) {
    for (int64_t at : {int64_t{0}, size - 1, size / 2}) {
      SCOPED_TRACE("size " + std::to_string(size) + ", at " +
                   std::to_string(at));
      std::vector<float> p(size, 1.f), g(size, 0.25f), buf(size, 0.f);
      EXPECT_FALSE(sgdUpdate(size, {}, 0.1, 1, p.data(), g.data(), nullptr));
      g[at] = kInf;
      EXPECT_TRUE(sgdUpdate(size, {}, 0.1, 2, p.data(), g.data(), nullptr));
      EXPECT_TRUE(std::isinf(p[at]));
      // A parameter that is infinite stays so, and is flagged again.
      g[at] = 0.f;
      EXPECT_TRUE(sgdUpdate(size, {}, 0.1, 3, p.data(), g.data(), nullptr));

      // Momentum: the buffer takes the NaN too.
      std::vector<float> q(size, 1.f);
      g[at] = std::nanf("");
      EXPECT_TRUE(sgdUpdate(size, {0.9, 0.0, 0.0, false}, 0.0, 1, q.data(),
                            g.data(), buf.data()));
      EXPECT_TRUE(std::isnan(buf[at]));

      // AdamW: the second moment overflows, the parameter (lr 0) does not.
      std::vector<float> r(size, 1.f), m(size, 0.f), v(size, 0.f);
      g[at] = 0.5f;
      EXPECT_FALSE(adamwUpdate(size, {}, 0.01, 1, r.data(), g.data(), m.data(),
                               v.data()));
      g[at] = 3e38f;
      EXPECT_TRUE(adamwUpdate(size, {}, 0.0, 2, r.data(), g.data(), m.data(),
                              v.data()));
      EXPECT_TRUE(std::isinf(v[at]));
      EXPECT_TRUE(std::isfinite(r[at]));
    }
  }
  float big = std::numeric_limits<float>::max(), g = 0.f;
  EXPECT_FALSE(sgdUpdate(1, {}, 0.1, 1, &big, &g, nullptr));
}

} // namespace
} // namespace dpc::kernels::test
