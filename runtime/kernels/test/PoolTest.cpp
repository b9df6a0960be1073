//===- PoolTest.cpp - pooling against naive loops and finite differences --===//

#include "runtime/kernels/Pool.h"
#include "runtime/kernels/test/TestUtil.h"

#include <limits>

namespace dpc::kernels::test {
namespace {

Pool2dShape makePool(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k,
                     int64_t stride, int64_t pad) {
  Pool2dShape s{};
  s.n = n, s.c = c, s.h = h, s.w = w;
  s.kernelH = s.kernelW = k;
  s.strideH = s.strideW = stride;
  s.padTop = s.padLeft = s.padBottom = s.padRight = pad;
  s.dilationH = s.dilationW = 1;
  s.countIncludePad = true;
  return s;
}

/// Naive reference written from the definition: a window is the set of
/// padded-input positions it covers; max skips padding; the average divides
/// by the covered positions that are real (or, with count_include_pad,
/// inside the padded input).
std::vector<float> naivePool(const Pool2dShape &s, const std::vector<float> &x,
                             bool isMax) {
  int64_t oh = s.outH(), ow = s.outW();
  std::vector<float> y(s.n * s.c * oh * ow);
  for (int64_t p = 0; p < s.n * s.c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t real = 0, inPadded = 0;
        for (int64_t a = 0; a < s.kernelH; ++a)
          for (int64_t b = 0; b < s.kernelW; ++b) {
            int64_t ih = i * s.strideH - s.padTop + a * s.dilationH;
            int64_t iw = j * s.strideW - s.padLeft + b * s.dilationW;
            bool insidePadded = ih >= -s.padTop && ih < s.h + s.padBottom &&
                                iw >= -s.padLeft && iw < s.w + s.padRight;
            inPadded += insidePadded;
            if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w)
              continue;
            ++real;
            double v = x[(p * s.h + ih) * s.w + iw];
            best = std::max(best, v);
            sum += v;
          }
        int64_t divisor = s.countIncludePad ? inPadded : real;
        y[(p * oh + i) * ow + j] =
            static_cast<float>(isMax ? best : sum / divisor);
      }
  return y;
}

struct PoolCase {
  const char *name;
  Pool2dShape shape;
};

std::ostream &operator<<(std::ostream &os, const PoolCase &c) {
  return os << c.name;
}

std::vector<PoolCase> poolCases() {
  std::vector<PoolCase> cases;
  // Overlapping windows (kernel 3, stride 2) with padding.
  cases.push_back({"K3S2P1", makePool(2, 3, 5, 5, 3, 2, 1)});
  auto ceil = makePool(2, 3, 6, 6, 3, 2, 1);
  ceil.ceilMode = true;
  cases.push_back({"K3S2P1Ceil", ceil});
  auto excl = makePool(2, 3, 6, 5, 3, 2, 1);
  excl.ceilMode = true;
  excl.countIncludePad = false;
  cases.push_back({"K3S2P1CeilExcludePad", excl});
  auto asym = makePool(2, 3, 5, 6, 2, 1, 0);
  asym.kernelW = 3;
  asym.strideW = 2;
  asym.padTop = 1, asym.padRight = 1;
  cases.push_back({"AsymmetricPadStride1x2", asym});
  cases.push_back({"NonOverlappingK2S2", makePool(2, 3, 6, 6, 2, 2, 0)});
  return cases;
}

auto caseName = [](const auto &info) { return std::string(info.param.name); };

class MaxPoolTest : public ::testing::TestWithParam<PoolCase> {};
class AvgPoolTest : public ::testing::TestWithParam<PoolCase> {};

TEST_P(MaxPoolTest, ForwardMatchesNaive) {
  const auto &s = GetParam().shape;
  auto x = randomVector(s.n * s.c * s.h * s.w, 1);
  std::vector<float> y(s.n * s.c * s.outH() * s.outW());
  maxPool2dForward(s, x.data(), y.data());
  expectAllNear(y, naivePool(s, x, true), 0, 0, "y");
}

TEST_P(MaxPoolTest, BackwardMatchesFiniteDifferences) {
  const auto &s = GetParam().shape;
  auto x = distinctVector(s.n * s.c * s.h * s.w, 2);
  auto dy = randomVector(s.n * s.c * s.outH() * s.outW(), 3);
  std::vector<float> y(dy.size()), dx(x.size());
  maxPool2dBackward(s, x.data(), dy.data(), dx.data());
  auto loss = [&] {
    maxPool2dForward(s, x.data(), y.data());
    return dot(dy, y);
  };
  expectAllNear(dx, numericGradient(x, loss), kGradAtol, kGradRtol, "dx");
}

TEST_P(AvgPoolTest, ForwardMatchesNaive) {
  const auto &s = GetParam().shape;
  auto x = randomVector(s.n * s.c * s.h * s.w, 4);
  std::vector<float> y(s.n * s.c * s.outH() * s.outW());
  avgPool2dForward(s, x.data(), y.data());
  expectAllNear(y, naivePool(s, x, false), 1e-6, 1e-5, "y");
}

TEST_P(AvgPoolTest, BackwardMatchesFiniteDifferences) {
  const auto &s = GetParam().shape;
  auto x = randomVector(s.n * s.c * s.h * s.w, 5);
  auto dy = randomVector(s.n * s.c * s.outH() * s.outW(), 6);
  std::vector<float> y(dy.size()), dx(x.size());
  avgPool2dBackward(s, dy.data(), dx.data());
  auto loss = [&] {
    avgPool2dForward(s, x.data(), y.data());
    return dot(dy, y);
  };
  expectAllNear(dx, numericGradient(x, loss), kGradAtol, kGradRtol, "dx");
}

INSTANTIATE_TEST_SUITE_P(Shapes, MaxPoolTest, ::testing::ValuesIn(poolCases()),
                         caseName);
INSTANTIATE_TEST_SUITE_P(Shapes, AvgPoolTest, ::testing::ValuesIn(poolCases()),
                         caseName);

TEST(MaxPoolTest, DilatedForwardAndBackward) {
  auto s = makePool(2, 3, 7, 7, 3, 2, 1);
  s.dilationH = s.dilationW = 2;
  auto x = distinctVector(s.n * s.c * s.h * s.w, 7);
  auto dy = randomVector(s.n * s.c * s.outH() * s.outW(), 8);
  std::vector<float> y(dy.size()), dx(x.size());
  maxPool2dForward(s, x.data(), y.data());
  expectAllNear(y, naivePool(s, x, true), 0, 0, "y");
  maxPool2dBackward(s, x.data(), dy.data(), dx.data());
  auto loss = [&] {
    maxPool2dForward(s, x.data(), y.data());
    return dot(dy, y);
  };
  expectAllNear(dx, numericGradient(x, loss), kGradAtol, kGradRtol, "dx");
}

TEST(MaxPoolTest, TiesGoToFirstMaximumAndNaNPropagates) {
  // 3x3 of ones, kernel 2, stride 1: every window ties; PyTorch routes the
  // gradient to the first maximum in scan order (the window's top-left).
  auto s = makePool(1, 1, 3, 3, 2, 1, 0);
  std::vector<float> x(9, 1.f), dy(4, 1.f), dx(9), y(4);
  maxPool2dBackward(s, x.data(), dy.data(), dx.data());
  EXPECT_EQ(dx, (std::vector<float>{1, 1, 0, 1, 1, 0, 0, 0, 0}));
  x[4] = std::numeric_limits<float>::quiet_NaN();
  maxPool2dForward(s, x.data(), y.data());
  for (float v : y)
    EXPECT_TRUE(std::isnan(v));
}

TEST(PoolShapeTest, CeilModeMatchesPyTorch) {
  // torch: max_pool2d(5x5, k3, s2, p1) -> 3x3 with or without ceil_mode;
  // 6x6 -> 3x3, with ceil_mode 4x4; 6x6, k2 s2 p0 ceil -> 3x3 (the window
  // that would start at 6 is dropped).
  auto s = makePool(1, 1, 5, 5, 3, 2, 1);
  EXPECT_EQ(s.outH(), 3);
  s.ceilMode = true;
  EXPECT_EQ(s.outH(), 3);
  s = makePool(1, 1, 6, 6, 3, 2, 1);
  EXPECT_EQ(s.outH(), 3);
  s.ceilMode = true;
  EXPECT_EQ(s.outH(), 4);
  s = makePool(1, 1, 6, 6, 2, 2, 0);
  s.ceilMode = true;
  EXPECT_EQ(s.outH(), 3);
  s = makePool(1, 1, 5, 5, 2, 2, 0);
  EXPECT_EQ(s.outH(), 2);
  s.ceilMode = true;
  EXPECT_EQ(s.outH(), 3);
  // 5, k2 s2 p1 ceil: the 4th window would start at 6 - 1 = 5, inside the
  // end padding, so PyTorch drops it: 3, not 4.
  s = makePool(1, 1, 5, 5, 2, 2, 1);
  s.ceilMode = true;
  EXPECT_EQ(s.outH(), 3);
}

TEST(AvgPoolTest, CeilModeDivisorsOnOnes) {
  // avg_pool2d(ones(6x6), 3, 2, 1, ceil_mode=True): a corner window covers
  // 2x2 real of 3x3 padded -> 4/9; the last ceil window (rows 5..7) is
  // clipped to the end padding -> 1 real of 2 counted per axis -> 1/4.
  auto s = makePool(1, 1, 6, 6, 3, 2, 1);
  s.ceilMode = true;
  std::vector<float> x(36, 1.f), y(16);
  avgPool2dForward(s, x.data(), y.data());
  EXPECT_FLOAT_EQ(y[0], 4.f / 9.f);
  EXPECT_FLOAT_EQ(y[5], 1.f);
  EXPECT_FLOAT_EQ(y[3], 2.f / 6.f);
  EXPECT_FLOAT_EQ(y[15], 1.f / 4.f);
  s.countIncludePad = false;
  avgPool2dForward(s, x.data(), y.data());
  for (float v : y)
    EXPECT_FLOAT_EQ(v, 1.f);
}

TEST(GlobalAvgPoolTest, ForwardAndBackward) {
  int64_t n = 2, c = 3, h = 5, w = 4;
  auto x = randomVector(n * c * h * w, 9);
  auto dy = randomVector(n * c, 10);
  std::vector<float> y(n * c), dx(x.size());
  globalAvgPool2dForward(n, c, h, w, x.data(), y.data());
  std::vector<double> ref(n * c, 0.0);
  for (size_t i = 0; i < x.size(); ++i)
    ref[i / (h * w)] += x[i] / double(h * w);
  expectAllNear(y, ref, 1e-6, 1e-6, "y");
  globalAvgPool2dBackward(n, c, h, w, dy.data(), dx.data());
  auto loss = [&] {
    globalAvgPool2dForward(n, c, h, w, x.data(), y.data());
    return dot(dy, y);
  };
  expectAllNear(dx, numericGradient(x, loss), kGradAtol, kGradRtol, "dx");
}

TEST(AvgPoolTest, RejectsDilation) {
  auto s = makePool(1, 1, 5, 5, 3, 2, 1);
  s.dilationH = 2;
  std::vector<float> buf(100);
  EXPECT_THROW(avgPool2dForward(s, buf.data(), buf.data()),
               std::invalid_argument);
}

} // namespace
} // namespace dpc::kernels::test
