//===- LinearTest.cpp - linear and matmul against loops and differences ---===//

#include "runtime/kernels/Linear.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/test/TestUtil.h"

#include <algorithm>

namespace dpc::kernels::test {
namespace {

std::vector<float> naiveLinear(const LinearShape &s,
                               const std::vector<float> &x,
                               const std::vector<float> &w, const float *b) {
  std::vector<float> y(s.n * s.out);
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t o = 0; o < s.out; ++o) {
      double acc = b ? b[o] : 0.0;
      for (int64_t k = 0; k < s.in; ++k)
        acc += static_cast<double>(x[i * s.in + k]) * w[o * s.in + k];
      y[i * s.out + o] = static_cast<float>(acc);
    }
  return y;
}

class LinearTest : public ::testing::TestWithParam<bool> {};

TEST_P(LinearTest, ForwardMatchesNaive) {
  bool hasBias = GetParam();
  LinearShape s{3, 7, 5};
  KernelContext ctx;
  auto x = randomVector(s.n * s.in, 1), w = randomVector(s.out * s.in, 2),
       b = randomVector(s.out, 3);
  std::vector<float> y(s.n * s.out);
  const float *bias = hasBias ? b.data() : nullptr;
  linearForward(ctx, s, x.data(), w.data(), bias, y.data());
  expectAllNear(y, naiveLinear(s, x, w, bias), 1e-5, 1e-5, "y");
}

TEST_P(LinearTest, BackwardMatchesFiniteDifferences) {
  bool hasBias = GetParam();
  LinearShape s{2, 6, 4};
  KernelContext ctx;
  auto x = randomVector(s.n * s.in, 4), w = randomVector(s.out * s.in, 5),
       b = randomVector(s.out, 6), dy = randomVector(s.n * s.out, 7);
  std::vector<float> y(dy.size()), dx(x.size()), dw(w.size()), db(b.size());
  auto loss = [&] {
    linearForward(ctx, s, x.data(), w.data(), hasBias ? b.data() : nullptr,
                  y.data());
    return dot(dy, y);
  };
  linearBackwardData(ctx, s, dy.data(), w.data(), dx.data());
  linearBackwardWeights(ctx, s, x.data(), dy.data(), dw.data(),
                        hasBias ? db.data() : nullptr);
  expectAllNear(dx, numericGradient(x, loss), kGradAtol, kGradRtol, "dx");
  expectAllNear(dw, numericGradient(w, loss), kGradAtol, kGradRtol, "dw");
  if (hasBias)
    expectAllNear(db, numericGradient(b, loss), kGradAtol, kGradRtol, "db");
}

// The fused kernel (oneDNN's ReLU post-op), in f32 and in bf16, against
// the two calls it replaces.
TEST_P(LinearTest, ReluPostOpIsReluOfTheLinear) {
  bool hasBias = GetParam();
  for (Precision precision : {Precision::F32, Precision::BF16}) {
    LinearShape s{9, 33, 17};
    s.precision = precision;
    KernelContext ctx;
    auto x = randomVector(s.n * s.in, 8), w = randomVector(s.out * s.in, 9),
         b = randomVector(s.out, 10);
    const float *bias = hasBias ? b.data() : nullptr;
    std::vector<float> linear(s.n * s.out), unfused(linear.size()),
        fused(linear.size());
    linearForward(ctx, s, x.data(), w.data(), bias, linear.data());
    reluForward(static_cast<int64_t>(linear.size()), linear.data(),
                unfused.data());
    linearForward(ctx, s, x.data(), w.data(), bias, fused.data(),
                  /*relu=*/true);
    expectAllNear(fused, unfused, 1e-6, 1e-6, "relu(linear)");
    EXPECT_GT(std::count(fused.begin(), fused.end(), 0.f), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Bias, LinearTest, ::testing::Bool(),
                         [](const auto &info) {
                           return info.param ? "WithBias" : "NoBias";
                         });

TEST(MatmulTest, ForwardMatchesNaive) {
  MatmulShape s{3, 5, 4};
  KernelContext ctx;
  auto a = randomVector(s.n * s.k, 8), b = randomVector(s.k * s.m, 9);
  std::vector<float> c(s.n * s.m);
  matmulForward(ctx, s, a.data(), b.data(), c.data());
  std::vector<double> ref(c.size(), 0.0);
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t j = 0; j < s.m; ++j)
      for (int64_t k = 0; k < s.k; ++k)
        ref[i * s.m + j] +=
            static_cast<double>(a[i * s.k + k]) * b[k * s.m + j];
  expectAllNear(c, ref, 1e-5, 1e-5, "c");
}

TEST(MatmulTest, BackwardMatchesFiniteDifferences) {
  MatmulShape s{2, 5, 3};
  KernelContext ctx;
  auto a = randomVector(s.n * s.k, 10), b = randomVector(s.k * s.m, 11),
       dc = randomVector(s.n * s.m, 12);
  std::vector<float> c(dc.size()), da(a.size()), db(b.size());
  matmulBackward(ctx, s, a.data(), b.data(), dc.data(), da.data(), db.data());
  auto loss = [&] {
    matmulForward(ctx, s, a.data(), b.data(), c.data());
    return dot(dc, c);
  };
  expectAllNear(da, numericGradient(a, loss), kGradAtol, kGradRtol, "da");
  expectAllNear(db, numericGradient(b, loss), kGradAtol, kGradRtol, "db");
}

} // namespace
} // namespace dpc::kernels::test
