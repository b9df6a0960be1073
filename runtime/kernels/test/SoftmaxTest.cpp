//===- SoftmaxTest.cpp - softmax and log-softmax over the last axis -------===//

#include "runtime/kernels/Softmax.h"
#include "runtime/kernels/test/TestUtil.h"

namespace dpc::kernels::test {
namespace {

constexpr int64_t kRows = 4, kCols = 7;

std::vector<double> naiveSoftmax(const std::vector<float> &x, bool log) {
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < kRows; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < kCols; ++j)
      sum += std::exp(static_cast<double>(x[i * kCols + j]));
    for (int64_t j = 0; j < kCols; ++j) {
      double v = x[i * kCols + j];
      y[i * kCols + j] = log ? v - std::log(sum) : std::exp(v) / sum;
    }
  }
  return y;
}

TEST(SoftmaxTest, ForwardMatchesNaive) {
  auto x = randomVector(kRows * kCols, 1, -3.f, 3.f);
  std::vector<float> y(x.size());
  softmaxForward(kRows, kCols, x.data(), y.data());
  expectAllNear(y, naiveSoftmax(x, false), 1e-7, 1e-5, "softmax");
  logSoftmaxForward(kRows, kCols, x.data(), y.data());
  expectAllNear(y, naiveSoftmax(x, true), 1e-6, 1e-5, "log_softmax");
}

TEST(SoftmaxTest, LargeLogitsAreStable) {
  std::vector<float> x{1000.f, 1001.f, 999.f}, y(3);
  softmaxForward(1, 3, x.data(), y.data());
  for (float v : y)
    EXPECT_TRUE(std::isfinite(v));
  EXPECT_NEAR(y[0] + y[1] + y[2], 1.f, 1e-6);
  logSoftmaxForward(1, 3, x.data(), y.data());
  EXPECT_NEAR(y[1], -0.40760596f, 1e-5);
}

TEST(SoftmaxTest, BackwardMatchesFiniteDifferences) {
  for (bool log : {false, true}) {
    auto x = randomVector(kRows * kCols, 2, -2.f, 2.f);
    auto dy = randomVector(x.size(), 3);
    std::vector<float> y(x.size()), dx(x.size());
    auto forward = log ? logSoftmaxForward : softmaxForward;
    auto backward = log ? logSoftmaxBackward : softmaxBackward;
    forward(kRows, kCols, x.data(), y.data());
    backward(kRows, kCols, y.data(), dy.data(), dx.data());
    auto loss = [&] {
      forward(kRows, kCols, x.data(), y.data());
      return dot(dy, y);
    };
    expectAllNear(dx, numericGradient(x, loss), kGradAtol, kGradRtol,
                  log ? "log_softmax dx" : "softmax dx");
  }
}

} // namespace
} // namespace dpc::kernels::test
