//===- ElementwiseTest.cpp - activations, broadcasting ops, padding -------===//

#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/test/TestUtil.h"

namespace dpc::kernels::test {
namespace {

using UnaryFn = void (*)(int64_t, const float *, float *);
using UnaryGradFn = void (*)(int64_t, const float *, const float *, float *);

struct ActivationCase {
  const char *name;
  UnaryFn forward;
  UnaryGradFn backward;
  double (*reference)(double);
};

std::ostream &operator<<(std::ostream &os, const ActivationCase &c) {
  return os << c.name;
}

class ActivationTest : public ::testing::TestWithParam<ActivationCase> {};

TEST_P(ActivationTest, ForwardMatchesReference) {
  const auto &p = GetParam();
  auto x = randomVector(150, 1, -4.f, 4.f);
  std::vector<float> y(x.size());
  std::vector<double> ref(x.size());
  p.forward(x.size(), x.data(), y.data());
  for (size_t i = 0; i < x.size(); ++i)
    ref[i] = p.reference(x[i]);
  expectAllNear(y, ref, 1e-6, 1e-6, "y");
}

TEST_P(ActivationTest, BackwardMatchesFiniteDifferences) {
  const auto &p = GetParam();
  // Kept away from relu's kink at 0 by more than the step.
  auto x = distinctVector(150, 2, 0.04f);
  auto dy = randomVector(x.size(), 3);
  std::vector<float> y(x.size()), dx(x.size());
  p.forward(x.size(), x.data(), y.data());
  p.backward(x.size(), y.data(), dy.data(), dx.data());
  auto loss = [&] {
    p.forward(x.size(), x.data(), y.data());
    return dot(dy, y);
  };
  expectAllNear(dx, numericGradient(x, loss), kGradAtol, kGradRtol, "dx");
}

INSTANTIATE_TEST_SUITE_P(
    Ops, ActivationTest,
    ::testing::Values(ActivationCase{"Relu", reluForward, reluBackward,
                                     [](double x) { return x > 0 ? x : 0.0; }},
                      ActivationCase{
                          "Sigmoid", sigmoidForward, sigmoidBackward,
                          [](double x) { return 1 / (1 + std::exp(-x)); }},
                      ActivationCase{"Tanh", tanhForward, tanhBackward,
                                     [](double x) { return std::tanh(x); }}),
    [](const auto &info) { return std::string(info.param.name); });

/// The activations whose backward reads x, with parameters.
struct InputActivationCase {
  const char *name;
  math::InputActivation kind;
  math::ActivationParams params;
  double (*reference)(double x, double a, double b);
};

std::ostream &operator<<(std::ostream &os, const InputActivationCase &c) {
  return os << c.name;
}

class InputActivationTest
    : public ::testing::TestWithParam<InputActivationCase> {};

TEST_P(InputActivationTest, ForwardMatchesReference) {
  const auto &p = GetParam();
  auto x = randomVector(400, 1, -8.f, 8.f);
  std::vector<float> y(x.size());
  std::vector<double> ref(x.size());
  inputActivationForward(p.kind, p.params, x.size(), x.data(), y.data());
  for (size_t i = 0; i < x.size(); ++i)
    ref[i] = p.reference(x[i], p.params.a, p.params.b);
  expectAllNear(y, ref, 1e-6, 1e-6, "y");
}

TEST_P(InputActivationTest, BackwardMatchesFiniteDifferences) {
  const auto &p = GetParam();
  // -8 to 8, every value 0.02 away from the kinks (0, 6, +-3, -2).
  auto x = distinctVector(400, 2, 0.04f);
  auto dy = randomVector(x.size(), 3);
  std::vector<float> y(x.size()), dx(x.size());
  inputActivationBackward(p.kind, p.params, x.size(), x.data(), dy.data(),
                          dx.data());
  auto loss = [&] {
    inputActivationForward(p.kind, p.params, x.size(), x.data(), y.data());
    return dot(dy, y);
  };
  expectAllNear(dx, numericGradient(x, loss, 5e-3f), kGradAtol, kGradRtol,
                "dx");
}

double clampReference(double v, double lo, double hi) {
  return std::min(std::max(v, lo), hi);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, InputActivationTest,
    ::testing::Values(
        InputActivationCase{"Relu6",
                            math::InputActivation::Clip,
                            {0.f, 6.f},
                            [](double x, double a, double b) {
                              return clampReference(x, a, b);
                            }},
        InputActivationCase{"HardTanh",
                            math::InputActivation::Clip,
                            {-1.f, 1.f},
                            [](double x, double a, double b) {
                              return clampReference(x, a, b);
                            }},
        InputActivationCase{"HardSigmoidTorch",
                            math::InputActivation::HardSigmoid,
                            {1.f / 6, 0.5f},
                            [](double x, double a, double b) {
                              return clampReference(a * x + b, 0, 1);
                            }},
        InputActivationCase{"HardSigmoidOnnx",
                            math::InputActivation::HardSigmoid,
                            {0.2f, 0.4f},
                            [](double x, double a, double b) {
                              return clampReference(double(float(a)) * x + b, 0,
                                                    1);
                            }},
        InputActivationCase{"HardSwish",
                            math::InputActivation::HardSwish,
                            {},
                            [](double x, double, double) {
                              return x * clampReference(x + 3, 0, 6) / 6;
                            }},
        InputActivationCase{"Gelu",
                            math::InputActivation::Gelu,
                            {},
                            [](double x, double, double) {
                              return 0.5 * x *
                                     (1 + std::erf(x / std::sqrt(2.0)));
                            }},
        InputActivationCase{"GeluTanh",
                            math::InputActivation::GeluTanh,
                            {},
                            [](double x, double, double) {
                              double k = std::sqrt(2 / M_PI) *
                                         (x + 0.044715 * x * x * x);
                              return 0.5 * x * (1 + std::tanh(k));
                            }},
        InputActivationCase{
            "Erf",
            math::InputActivation::Erf,
            {},
            [](double x, double, double) { return std::erf(x); }},
        InputActivationCase{
            "LeakyRelu",
            math::InputActivation::LeakyRelu,
            {0.1f},
            [](double x, double a, double) { return x > 0 ? x : x * a; }},
        InputActivationCase{"Elu",
                            math::InputActivation::Elu,
                            {0.7f},
                            [](double x, double a, double b) {
                              return x > 0 ? x : a * std::expm1(x);
                            }},
        InputActivationCase{"Selu",
                            math::InputActivation::Selu,
                            {1.6732632f, 1.0507010f},
                            [](double x, double a, double b) {
                              return b * (x > 0 ? x : a * std::expm1(x));
                            }},
        InputActivationCase{"Celu",
                            math::InputActivation::Celu,
                            {0.8f},
                            [](double x, double a, double b) {
                              return x > 0 ? x : a * std::expm1(x / a);
                            }},
        InputActivationCase{"Softplus",
                            math::InputActivation::Softplus,
                            {2.f, 20.f},
                            [](double x, double a, double b) {
                              return std::log1p(std::exp(a * x)) / a;
                            }},
        InputActivationCase{"Mish",
                            math::InputActivation::Mish,
                            {},
                            [](double x, double a, double b) {
                              return x * std::tanh(std::log1p(std::exp(x)));
                            }},
        InputActivationCase{
            "Abs",
            math::InputActivation::Abs,
            {},
            [](double x, double a, double b) { return std::fabs(x); }},
        InputActivationCase{"LogSigmoid",
                            math::InputActivation::LogSigmoid,
                            {},
                            [](double x, double a, double b) {
                              return -std::log1p(std::exp(-x));
                            }},
        InputActivationCase{
            "Exp",
            math::InputActivation::Exp,
            {},
            [](double x, double, double) { return std::exp(x); }},
        InputActivationCase{
            "Sin",
            math::InputActivation::Sin,
            {},
            [](double x, double, double) { return std::sin(x); }},
        InputActivationCase{
            "Cos",
            math::InputActivation::Cos,
            {},
            [](double x, double, double) { return std::cos(x); }},
        // Piecewise constant: the test's points are 0.02 from every
        // integer, further than the finite differences reach.
        InputActivationCase{
            "Sign",
            math::InputActivation::Sign,
            {},
            [](double x, double, double) { return double((x > 0) - (x < 0)); }},
        InputActivationCase{
            "Floor",
            math::InputActivation::Floor,
            {},
            [](double x, double, double) { return std::floor(x); }},
        InputActivationCase{
            "Ceil",
            math::InputActivation::Ceil,
            {},
            [](double x, double, double) { return std::ceil(x); }}),
    [](const auto &info) { return std::string(info.param.name); });

// Log (of positive x only) against log x and dy / x in double.
TEST(LogTest, MatchesItsDefinition) {
  auto x = randomVector(300, 6, 1e-3f, 8.f);
  auto dy = randomVector(x.size(), 7);
  std::vector<float> y(x.size()), dx(x.size());
  inputActivationForward(math::InputActivation::Log, {}, x.size(), x.data(),
                         y.data());
  inputActivationBackward(math::InputActivation::Log, {}, x.size(), x.data(),
                          dy.data(), dx.data());
  std::vector<double> ref(x.size()), dref(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ref[i] = std::log(double(x[i]));
    dref[i] = double(dy[i]) / x[i];
  }
  expectAllNear(y, ref, 1e-6, 1e-6, "y");
  expectAllNear(dx, dref, 0, 1e-6, "dx");
}

// Sqrt and Pow (of positive x only) against their definitions in double,
// and their gradients against finite differences.
TEST(PowerTest, SqrtAndPowMatchTheirDefinitions) {
  struct Case {
    math::InputActivation kind;
    float exponent;
  };
  for (Case c : {Case{math::InputActivation::Sqrt, 0.5f},
                 Case{math::InputActivation::Pow, 0.75f},
                 Case{math::InputActivation::Pow, -1.5f},
                 Case{math::InputActivation::Pow, 2.5f}}) {
    SCOPED_TRACE(c.exponent);
    auto x = randomVector(300, 8, 0.1f, 4.f);
    auto dy = randomVector(x.size(), 9);
    math::ActivationParams params{c.exponent};
    std::vector<float> y(x.size()), dx(x.size());
    inputActivationForward(c.kind, params, x.size(), x.data(), y.data());
    inputActivationBackward(c.kind, params, x.size(), x.data(), dy.data(),
                            dx.data());
    std::vector<double> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      ref[i] = std::pow(double(x[i]), double(c.exponent));
    expectAllNear(y, ref, 0, 1e-6, "y");
    auto loss = [&] {
      inputActivationForward(c.kind, params, x.size(), x.data(), y.data());
      return dot(dy, y);
    };
    expectAllNear(dx, numericGradient(x, loss, 1e-3f), kGradAtol, kGradRtol,
                  "dx");
  }
  // Exponent 0: x^0 = 1 everywhere, and a zero gradient (PyTorch's).
  std::vector<float> x = {0.f, 2.f, -3.f}, dy = {1.f, 1.f, 1.f}, dx(3);
  inputActivationBackward(math::InputActivation::Pow, {0.f}, 3, x.data(),
                          dy.data(), dx.data());
  EXPECT_EQ(dx, std::vector<float>(3, 0.f));
}

// Reciprocal (Div by a tensor) against 1 / x and -dy / x^2 in double: near
// 0 a finite difference would measure its curvature, not its slope.
TEST(ReciprocalTest, MatchesItsDefinition) {
  auto x = randomVector(300, 4, -4.f, 4.f);
  for (float &v : x)
    v = std::copysign(std::max(std::fabs(v), 1e-3f), v);
  auto dy = randomVector(x.size(), 5);
  std::vector<float> y(x.size()), dx(x.size());
  reciprocalForward(x.size(), x.data(), y.data());
  reciprocalBackward(x.size(), y.data(), dy.data(), dx.data());
  std::vector<double> ref(x.size()), dref(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ref[i] = 1.0 / x[i];
    dref[i] = -double(dy[i]) / (double(x[i]) * x[i]);
  }
  expectAllNear(y, ref, 0, 1e-7, "y");
  expectAllNear(dx, dref, 0, 1e-6, "dx");
}

TEST(ActivationTest, InPlace) {
  auto x = randomVector(64, 4);
  auto ref = x;
  reluForward(x.size(), x.data(), x.data());
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(x[i], ref[i] > 0 ? ref[i] : 0.f);
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

struct BroadcastCase {
  const char *name;
  std::vector<int64_t> lhs, rhs;
};

std::ostream &operator<<(std::ostream &os, const BroadcastCase &c) {
  return os << c.name;
}

int64_t product(const std::vector<int64_t> &dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// Index of rhs read by output element i, computed from numpy's rule
/// directly on the unpadded dims (independent of BroadcastShape).
int64_t rhsIndex(const BroadcastCase &c, int64_t i) {
  std::vector<int64_t> idx(c.lhs.size());
  for (int d = static_cast<int>(c.lhs.size()) - 1; d >= 0; --d) {
    idx[d] = i % c.lhs[d];
    i /= c.lhs[d];
  }
  int64_t j = 0;
  size_t off = c.lhs.size() - c.rhs.size();
  for (size_t d = 0; d < c.rhs.size(); ++d)
    j = j * c.rhs[d] + (c.rhs[d] == 1 ? 0 : idx[d + off]);
  return j;
}

class BroadcastTest : public ::testing::TestWithParam<BroadcastCase> {};

TEST_P(BroadcastTest, ForwardMatchesNumpyRule) {
  const auto &c = GetParam();
  auto shape = makeBroadcastShape(c.lhs, c.rhs);
  auto a = randomVector(product(c.lhs), 5), b = randomVector(product(c.rhs), 6);
  std::vector<float> sum(a.size()), prod(a.size());
  std::vector<double> refSum(a.size()), refProd(a.size());
  addForward(shape, a.data(), b.data(), sum.data());
  mulForward(shape, a.data(), b.data(), prod.data());
  for (size_t i = 0; i < a.size(); ++i) {
    refSum[i] = a[i] + b[rhsIndex(c, i)];
    refProd[i] = a[i] * b[rhsIndex(c, i)];
  }
  expectAllNear(sum, refSum, 1e-6, 1e-6, "add");
  expectAllNear(prod, refProd, 1e-6, 1e-6, "mul");
  // The fused residual join: the ReLU of the add's own bits.
  std::vector<float> joined(a.size());
  addReluForward(shape, a.data(), b.data(), joined.data());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(joined[i], math::reluForward(sum[i])) << "at " << i;
}

/// The fused backward of a join: two gradients summed, then masked by the
/// ReLU's output, bit for bit as the two kernels; in place over an addend
/// too (the compiler may put DX on an addend's bytes). And the forward join
/// at the same sizes, one row that every thread takes a share of.
TEST(AddReluBackwardTest, IsTheSumMaskedByTheReluOutput) {
  for (int64_t size : {int64_t{36}, int64_t{3} << 20}) {
    auto y = randomVector(size, 10), a = randomVector(size, 11),
         b = randomVector(size, 12);
    y[0] = 0.f, y[1] = -0.f; // the ReLU's zero output masks
    std::vector<float> sum(size), expected(size), dx(size);
    auto shape = makeBroadcastShape({size / 4, 4}, {size / 4, 4});
    addForward(shape, a.data(), b.data(), sum.data());
    reluBackward(size, y.data(), sum.data(), expected.data());
    addReluBackward(size, y.data(), a.data(), b.data(), dx.data());
    EXPECT_EQ(dx, expected) << size;
    EXPECT_EQ(dx[0], 0.f);
    std::vector<float> inPlace = a;
    addReluBackward(size, y.data(), inPlace.data(), b.data(), inPlace.data());
    EXPECT_EQ(inPlace, expected) << size;
    std::vector<float> joined(size);
    addReluForward(shape, a.data(), b.data(), joined.data());
    for (int64_t i = 0; i < size; ++i)
      ASSERT_EQ(joined[i], math::reluForward(sum[i])) << "at " << i;
  }
}

TEST_P(BroadcastTest, BackwardMatchesFiniteDifferences) {
  const auto &c = GetParam();
  auto shape = makeBroadcastShape(c.lhs, c.rhs);
  auto a = randomVector(product(c.lhs), 7), b = randomVector(product(c.rhs), 8),
       dy = randomVector(a.size(), 9);
  std::vector<float> y(a.size()), da(a.size()), db(b.size());

  auto addLoss = [&] {
    addForward(shape, a.data(), b.data(), y.data());
    return dot(dy, y);
  };
  addBackward(shape, dy.data(), da.data(), db.data());
  expectAllNear(da, numericGradient(a, addLoss), kGradAtol, kGradRtol,
                "add da");
  expectAllNear(db, numericGradient(b, addLoss), kGradAtol, kGradRtol,
                "add db");

  auto mulLoss = [&] {
    mulForward(shape, a.data(), b.data(), y.data());
    return dot(dy, y);
  };
  mulBackward(shape, a.data(), b.data(), dy.data(), da.data(), db.data());
  expectAllNear(da, numericGradient(a, mulLoss), kGradAtol, kGradRtol,
                "mul da");
  expectAllNear(db, numericGradient(b, mulLoss), kGradAtol, kGradRtol,
                "mul db");
}

// torch.maximum and minimum: the larger (smaller) element, and the
// gradient routed to it, half to each on a tie (PyTorch's rule), rhs's
// summed over what it was broadcast along: against the definition, with
// ties planted (rhs's values copied into lhs where they meet).
TEST_P(BroadcastTest, MaximumAndMinimumRouteTheGradientToTheWinner) {
  const auto &c = GetParam();
  auto shape = makeBroadcastShape(c.lhs, c.rhs);
  auto a = randomVector(product(c.lhs), 13),
       b = randomVector(product(c.rhs), 14), dy = randomVector(a.size(), 15);
  for (size_t i = 0; i < a.size(); i += 3)
    a[i] = b[rhsIndex(c, i)];
  for (bool minimum : {false, true}) {
    SCOPED_TRACE(minimum ? "minimum" : "maximum");
    std::vector<float> y(a.size()), da(a.size()), db(b.size());
    extremumForward(minimum, shape, a.data(), b.data(), y.data());
    extremumBackward(minimum, shape, a.data(), b.data(), dy.data(), da.data(),
                     db.data());
    std::vector<double> refDa(a.size()), refDb(b.size(), 0.0);
    for (size_t i = 0; i < a.size(); ++i) {
      float r = b[rhsIndex(c, i)];
      ASSERT_EQ(y[i], minimum ? std::min(a[i], r) : std::max(a[i], r));
      double aShare = a[i] == r ? 0.5 : ((a[i] > r) != minimum ? 1.0 : 0.0);
      refDa[i] = dy[i] * aShare;
      refDb[rhsIndex(c, i)] += dy[i] * (1.0 - aShare);
    }
    expectAllNear(da, refDa, 0, 0, "da");
    expectAllNear(db, refDb, 1e-6, 1e-6, "db");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BroadcastTest,
    ::testing::Values(
        BroadcastCase{"Same", {2, 3, 4}, {2, 3, 4}},
        BroadcastCase{"LinearBias", {2, 3}, {3}},
        BroadcastCase{"ConvBias", {2, 3, 4, 5}, {3, 1, 1}},
        BroadcastCase{"Scalar", {2, 3, 4, 5}, {}},
        BroadcastCase{"Mixed", {2, 3, 4, 5}, {2, 1, 4, 1}},
        BroadcastCase{"RowVector", {3, 4}, {1, 4}},
        // Runs of dims that merge into one (makeBroadcastShape's
        // merge).
        BroadcastCase{"TrailingRun", {2, 3, 4, 5}, {4, 5}},
        BroadcastCase{"LeadingRun", {2, 3, 4, 5}, {2, 3, 1, 1}},
        // Rank 5 and 6, merged to 4 dims or fewer.
        BroadcastCase{"Rank5Same", {2, 2, 4, 4, 3}, {2, 2, 4, 4, 3}},
        BroadcastCase{"Rank5Attention", {2, 3, 4, 3, 5}, {1, 3, 1, 3, 5}},
        BroadcastCase{"Rank6UnitDims", {2, 1, 3, 1, 4, 5}, {1, 3, 1, 1, 5}}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(BroadcastShapeTest, RejectsIncompatible) {
  EXPECT_THROW(makeBroadcastShape({2, 3}, {2}), std::invalid_argument);
  EXPECT_THROW(makeBroadcastShape({2, 3}, {1, 2, 3}), std::invalid_argument);
  // Five runs of matched and broadcast dims do not merge into four.
  EXPECT_THROW(makeBroadcastShape({2, 3, 4, 5, 6}, {2, 1, 4, 1, 6}),
               std::invalid_argument);
  auto s = makeBroadcastShape({2, 3}, {3});
  EXPECT_EQ(s.out[2], 2);
  EXPECT_EQ(s.rhs[2], 1);
  EXPECT_EQ(s.rhs[3], 3);
  // Rank 5 merges: [1, 2, 3, 4, 5] against [5] is [24, 5] against [1, 5].
  auto merged = makeBroadcastShape({1, 2, 3, 4, 5}, {5});
  EXPECT_EQ(merged.out[2], 24);
  EXPECT_EQ(merged.rhs[2], 1);
  EXPECT_EQ(merged.out[3], 5);
  EXPECT_EQ(merged.rhs[3], 5);
}

//===----------------------------------------------------------------------===//
// Padding
//===----------------------------------------------------------------------===//

TEST(PadTest, ForwardAndBackward) {
  Pad2dShape s{2, 3, 4, 5, 1, 2, 0, 3};
  auto x = randomVector(s.n * s.c * s.h * s.w, 10);
  std::vector<float> y(s.n * s.c * s.outH() * s.outW());
  pad2dForward(s, -7.5f, x.data(), y.data());
  int64_t oh = s.outH(), ow = s.outW();
  for (int64_t p = 0; p < s.n * s.c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t ih = i - s.padTop, iw = j - s.padLeft;
        bool inside = ih >= 0 && ih < s.h && iw >= 0 && iw < s.w;
        float expected = inside ? x[(p * s.h + ih) * s.w + iw] : -7.5f;
        ASSERT_EQ(y[(p * oh + i) * ow + j], expected)
            << p << " " << i << " " << j;
      }
  auto dy = randomVector(y.size(), 11);
  std::vector<float> dx(x.size());
  pad2dBackward(s, dy.data(), dx.data());
  auto loss = [&] {
    pad2dForward(s, -7.5f, x.data(), y.data());
    return dot(dy, y);
  };
  expectAllNear(dx, numericGradient(x, loss), kGradAtol, kGradRtol, "dx");
}

} // namespace
} // namespace dpc::kernels::test
