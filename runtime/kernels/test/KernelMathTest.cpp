//===- KernelMathTest.cpp - the shared CPU/CUDA math against references ---===//
//
// runtime/kernels/KernelMath.h holds the per-element math of every own
// kernel, compiled for the CPU here and for the GPU in runtime/cuda. Each
// function is checked against an independent reference: the textbook or
// PyTorch formula in double, a brute-force scan, or values PyTorch 1.13
// printed.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/test/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace dpc::kernels {
namespace {

namespace m = math;

/// Relative-or-absolute closeness for float results of double references.
void expectNear(double expected, float actual, double tolerance = 2e-6) {
  EXPECT_NEAR(actual, expected, tolerance * std::max(1.0, std::fabs(expected)));
}

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

TEST(KernelMathTest, FloorDivRoundsDown) {
  for (int64_t a = -20; a <= 20; ++a)
    for (int64_t b = 1; b <= 5; ++b)
      EXPECT_EQ(m::floorDiv(a, b),
                static_cast<int64_t>(std::floor(double(a) / double(b))))
          << a << " / " << b;
  EXPECT_EQ(m::minI64(-3, 2), -3);
  EXPECT_EQ(m::maxI64(-3, 2), 2);
}

TEST(KernelMathTest, ConvOutputSizeCountsWindows) {
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t stride = 1; stride <= 3; ++stride)
        for (int64_t pad = 0; pad <= 2; ++pad)
          for (int64_t dilation = 1; dilation <= 2; ++dilation) {
            // Brute force: windows whose last tap stays in the padded input.
            int64_t count = 0;
            for (int64_t o = 0; o < 100; ++o)
              if (o * stride + dilation * (k - 1) <= in + 2 * pad - 1)
                ++count;
            if (count == 0)
              continue;
            EXPECT_EQ(m::convOutputSize(in, k, stride, pad, pad, dilation),
                      count);
          }
}

TEST(KernelMathTest, WindowOutputSizeRefusesArgumentsOutOfRange) {
  // Each would overflow or divide by zero if computed: -1 instead.
  constexpr int64_t kHuge = int64_t(1) << 40;
  EXPECT_EQ(m::convOutputSize(28, 3, 1, kHuge, kHuge, 1), -1);
  EXPECT_EQ(m::convOutputSize(28, kHuge, 1, 0, 0, kHuge), -1);
  EXPECT_EQ(m::convOutputSize(28, 3, 0, 0, 0, 1), -1);
  EXPECT_EQ(m::convOutputSize(-1, 3, 1, 0, 0, 1), -1);
  EXPECT_EQ(m::convOutputSize(INT64_MAX, 1, 1, 0, 0, 1), -1);
  EXPECT_EQ(m::poolOutputSize(28, 2, 2, 0, INT64_MAX, 1, true), -1);
  EXPECT_EQ(m::poolOutputSize(28, 0, 2, 0, 0, 1, false), -1);
  EXPECT_EQ(m::poolOutputSize(28, 2, 2, -1, 0, 1, false), -1);
  // The largest arguments in range still compute.
  EXPECT_EQ(m::convOutputSize(m::kMaxWindowArgument, 1, 1, 0, 0, 1),
            m::kMaxWindowArgument);
  // A window that does not fit has no outputs (not 1, as truncating
  // division toward zero would say).
  EXPECT_EQ(m::convOutputSize(2, 3, 2, 0, 0, 1), 0);
}

TEST(KernelMathTest, PoolOutputSizeMatchesPyTorch) {
  // torch.nn.functional.max_pool2d(x, k, s, p, ceil_mode=c).shape[-1]
  struct Case {
    int64_t in, kernel, stride, pad;
    bool ceil;
    int64_t out;
  } cases[] = {{5, 2, 2, 0, false, 2},   {5, 2, 2, 0, true, 3},
               {6, 3, 2, 1, true, 4},    {7, 3, 2, 1, true, 4},
               {28, 2, 2, 0, false, 14}, {8, 3, 3, 1, true, 3},
               {4, 3, 2, 1, true, 3},    {1, 3, 2, 1, true, 1}};
  for (const Case &c : cases)
    EXPECT_EQ(
        m::poolOutputSize(c.in, c.kernel, c.stride, c.pad, c.pad, 1, c.ceil),
        c.out)
        << c.in << " " << c.kernel << " " << c.stride << " " << c.pad;
}

TEST(KernelMathTest, AvgPoolWindowCountsItsDivisor) {
  for (int64_t in = 1; in <= 7; ++in)
    for (int64_t k = 1; k <= 3; ++k)
      for (int64_t stride = 1; stride <= 2; ++stride)
        for (int64_t pad = 0; pad <= k / 2; ++pad)
          for (bool includePad : {false, true}) {
            int64_t outSize =
                m::poolOutputSize(in, k, stride, pad, pad, 1, true);
            for (int64_t o = 0; o < outSize; ++o) {
              auto w = m::avgPoolWindow(o, in, k, stride, pad, pad, includePad);
              // Brute force over the window's taps.
              int64_t inside = 0, padded = 0, first = -1, last = -1;
              for (int64_t t = 0; t < k; ++t) {
                int64_t i = o * stride - pad + t;
                if (i >= -pad && i < in + pad)
                  ++padded;
                if (i >= 0 && i < in) {
                  ++inside;
                  first = first < 0 ? i : first;
                  last = i;
                }
              }
              EXPECT_EQ(w.count, includePad ? padded : inside);
              if (inside > 0) {
                EXPECT_EQ(w.begin, first);
                EXPECT_EQ(w.end, last + 1);
              }
            }
          }
}

TEST(KernelMathTest, MaxPoolWindowArgMaxScansLikePyTorch) {
  const int64_t h = 5, w = 6;
  std::vector<float> plane = test::randomVector(h * w, 7);
  plane[8] = plane[9] = 5.f; // a tie: the first one wins
  for (int64_t stride = 1; stride <= 2; ++stride)
    for (int64_t pad = 0; pad <= 1; ++pad)
      for (int64_t dilation = 1; dilation <= 2; ++dilation)
        for (int64_t oh = 0; oh < 3; ++oh)
          for (int64_t ow = 0; ow < 3; ++ow) {
            int64_t best = -1;
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                int64_t ih = oh * stride - pad + kh * dilation;
                int64_t iw = ow * stride - pad + kw * dilation;
                if (ih < 0 || ih >= h || iw < 0 || iw >= w)
                  continue;
                if (best < 0 || plane[ih * w + iw] > plane[best])
                  best = ih * w + iw;
              }
            EXPECT_EQ(m::maxPoolWindowArgMax(plane.data(), h, w, oh, ow, 3, 3,
                                             stride, stride, pad, pad, dilation,
                                             dilation),
                      best);
          }
  // A window of padding only has no maximum; NaN wins and stops the scan.
  EXPECT_EQ(
      m::maxPoolWindowArgMax(plane.data(), h, w, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
      -1);
  plane[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(
      m::maxPoolWindowArgMax(plane.data(), h, w, 0, 0, 3, 3, 1, 1, 0, 0, 1, 1),
      7);
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

/// Units in the last place between `got` and the float nearest `exact`.
double ulpError(float got, double exact) {
  float nearest = static_cast<float>(exact);
  float ulp = std::nextafter(std::fabs(nearest), INFINITY) -
              std::fabs(nearest); // subnormal spacing below 2^-126
  return std::fabs(double(got) - exact) / ulp;
}

TEST(KernelMathTest, ExpStraightIsWithinTwoUlpOfExp) {
  double worst = 0;
  float worstX = 0;
  // Every 97th float of the range where e^x is a float, subnormals too.
  for (float x = -103.9f; x < 88.72f;) {
    double error = ulpError(m::expStraight(x), std::exp(double(x)));
    if (error > worst)
      worst = error, worstX = x;
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    // By the sign bit (-0 < 0 is false): towards -0, then on from +0.
    if (bits & 0x80000000u)
      bits = bits - 0x80000000u < 97 ? 0 : bits - 97;
    else
      bits += 97;
    std::memcpy(&x, &bits, 4);
  }
  EXPECT_LE(worst, 2.0) << "at x = " << worstX;
  EXPECT_EQ(m::expStraight(0.f), 1.f);
  EXPECT_EQ(m::expStraight(89.f), INFINITY);
  EXPECT_EQ(m::expStraight(INFINITY), INFINITY);
  EXPECT_EQ(m::expStraight(88.8f), INFINITY);
  EXPECT_EQ(m::expStraight(-105.f), 0.f);
  EXPECT_EQ(m::expStraight(-INFINITY), 0.f);
  EXPECT_TRUE(std::isnan(m::expStraight(NAN)));
  EXPECT_TRUE(std::isnan(m::sigmoidForward(NAN)));
  EXPECT_EQ(m::sigmoidForward(-110.f), 0.f);
  EXPECT_EQ(m::sigmoidForward(100.f), 1.f);
}

TEST(KernelMathTest, ActivationsMatchTheirDefinitions) {
  std::vector<float> xs = test::randomVector(200, 3, -8.f, 8.f);
  xs.push_back(0.f);
  std::vector<float> dys = test::randomVector(xs.size(), 4);
  for (size_t i = 0; i < xs.size(); ++i) {
    double x = xs[i], dy = dys[i];
    EXPECT_EQ(m::reluForward(xs[i]), x > 0 ? xs[i] : 0.f);
    EXPECT_EQ(m::reluBackward(dys[i], m::reluForward(xs[i])),
              x > 0 ? dys[i] : 0.f);
    double sig = 1.0 / (1.0 + std::exp(-x));
    expectNear(sig, m::sigmoidForward(xs[i]));
    float sigF = static_cast<float>(sig);
    expectNear(dy * double(sigF) * (1.0 - sigF),
               m::sigmoidBackward(dys[i], sigF));
    double th = std::tanh(x);
    expectNear(th, m::tanhForward(xs[i]));
    float thF = static_cast<float>(th);
    expectNear(dy * (1.0 - double(thF) * thF), m::tanhBackward(dys[i], thF));
  }
}

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

TEST(KernelMathTest, BatchNormFormulas) {
  std::vector<float> x = test::randomVector(64, 11, -2.f, 3.f);
  std::vector<float> dy = test::randomVector(64, 12);
  double n = x.size(), sum = 0, sumSq = 0;
  for (float v : x)
    sum += v, sumSq += double(v) * v;
  // Two-pass textbook moments.
  double mean = sum / n, var = 0;
  for (float v : x)
    var += (v - mean) * (v - mean);
  var /= n;
  double gotMean, gotVar;
  m::batchNormMoments(sum, sumSq, n, gotMean, gotVar);
  EXPECT_NEAR(gotMean, mean, 1e-12);
  EXPECT_NEAR(gotVar, var, 1e-10);
  m::batchNormMoments(0, 0, 0, gotMean, gotVar);
  EXPECT_EQ(gotMean, 0.0);
  EXPECT_EQ(gotVar, 0.0);
  m::batchNormMoments(3, 3.0 - 1e-12, 3, gotMean, gotVar); // rounds below 0
  EXPECT_GE(gotVar, 0.0);
  EXPECT_NEAR(m::unbiasedVariance(var, n), var * n / (n - 1), 1e-12);
  EXPECT_EQ(m::unbiasedVariance(0.5, 1), 0.5);
  // torch: running = (1 - momentum) * running + momentum * batch
  expectNear(0.9 * 2.0 + 0.1 * 4.0, m::runningStatUpdate(2.f, 4.f, 0.1f));

  float eps = 1e-5f, scale = 1.5f, shift = -0.25f;
  double invStd = 1.0 / std::sqrt(var + eps);
  float meanF = float(mean), invStdF = float(invStd);
  for (size_t i = 0; i < x.size(); ++i)
    expectNear((x[i] - mean) * invStd * scale + shift,
               m::batchNormApply(x[i], meanF, invStdF, scale, shift), 1e-5);
  // dx of y = scale * xhat + shift (Ioffe & Szegedy), in double.
  double sumDy = 0, dot = 0;
  for (size_t i = 0; i < x.size(); ++i)
    sumDy += dy[i], dot += dy[i] * (x[i] - mean);
  float meanDy = float(sumDy / n), projScale = float(dot / n * invStd * invStd);
  for (size_t i = 0; i < x.size(); ++i) {
    double xhat = (x[i] - mean) * invStd;
    double expected =
        scale * invStd * (dy[i] - sumDy / n - xhat * dot * invStd / n);
    expectNear(expected,
               m::batchNormBackwardInput(dy[i], x[i], meanF, invStdF, scale,
                                         meanDy, projScale),
               1e-4);
  }
}

//===----------------------------------------------------------------------===//
// Optimizers: torch.optim's update rules, in double, over several steps
//===----------------------------------------------------------------------===//

TEST(KernelMathTest, SgdStepFollowsTorchOptim) {
  struct Config {
    double momentum, dampening, weightDecay;
    bool nesterov;
  } configs[] = {{0, 0, 0, false},
                 {0.9, 0, 0, false},
                 {0.9, 0, 1e-2, true},
                 {0.8, 0.1, 0, false},
                 {0, 0, 5e-3, false}};
  std::vector<float> grads = test::randomVector(5, 21);
  for (const Config &c : configs) {
    float param = 0.7f, buf = 0.f;
    double refParam = 0.7, refBuf = 0;
    double lr = 0.05;
    for (int step = 1; step <= 5; ++step) {
      double d = grads[step - 1];
      d += c.weightDecay * refParam;
      if (c.momentum != 0) {
        refBuf = step == 1 ? d : c.momentum * refBuf + (1 - c.dampening) * d;
        d = c.nesterov ? d + c.momentum * refBuf : refBuf;
      }
      refParam -= lr * d;
      m::sgdStep(param, grads[step - 1], buf, float(lr), float(c.momentum),
                 float(1 - c.dampening), float(c.weightDecay), c.nesterov,
                 step == 1);
      expectNear(refParam, param, 1e-5);
    }
  }
}

TEST(KernelMathTest, AdamWStepFollowsTorchOptim) {
  double lr = 1e-2, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 1e-2;
  std::vector<float> grads = test::randomVector(10, 31);
  float param = -0.3f, expAvg = 0.f, expAvgSq = 0.f;
  double refParam = -0.3, refAvg = 0, refAvgSq = 0;
  for (int step = 1; step <= 10; ++step) {
    double g = grads[step - 1];
    // torch.optim.AdamW (amsgrad off).
    refParam *= 1 - lr * wd;
    refAvg = beta1 * refAvg + (1 - beta1) * g;
    refAvgSq = beta2 * refAvgSq + (1 - beta2) * g * g;
    double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
    refParam -=
        lr / bc1 * refAvg / (std::sqrt(refAvgSq) / std::sqrt(bc2) + eps);

    m::AdamWScalars k = m::adamwScalars(lr, beta1, beta2, eps, wd, step);
    expectNear(1 - lr * wd, k.decayFactor, 1e-7);
    expectNear(lr / bc1, k.stepSize, 1e-7);
    expectNear(std::sqrt(bc2), k.biasCorrection2Sqrt, 1e-7);
    m::adamwStep(param, grads[step - 1], expAvg, expAvgSq, k.decayFactor,
                 k.beta1, k.oneMinusBeta1, k.beta2, k.oneMinusBeta2, k.eps,
                 k.stepSize, k.biasCorrection2Sqrt);
    expectNear(refAvg, expAvg, 1e-5);
    expectNear(refAvgSq, expAvgSq, 1e-5);
    expectNear(refParam, param, 1e-5);
  }
}

//===----------------------------------------------------------------------===//
// Rows: softmax, log-softmax, cross-entropy
//===----------------------------------------------------------------------===//

TEST(KernelMathTest, RowReductionsAndSoftmaxGradients) {
  for (float offset : {0.f, 80.f, -50.f}) { // large logits stay accurate
    std::vector<float> row = test::randomVector(10, 41, -4.f, 4.f);
    for (float &v : row)
      v += offset;
    row[6] = row[3] = 9.f + offset; // tie: the first maximum is the argmax
    std::vector<float> dy = test::randomVector(10, 42);
    double maxRef = -1e30, lse = 0;
    for (float v : row)
      maxRef = std::max(maxRef, double(v));
    for (float v : row)
      lse += std::exp(double(v) - maxRef);
    lse = std::log(lse) + maxRef;
    EXPECT_EQ(m::rowMax(row.data(), 10), float(maxRef));
    EXPECT_EQ(m::rowArgMax(row.data(), 10), 3);
    m::RowLogSumExp r = m::rowLogSumExp(row.data(), 10);
    std::vector<float> y(10), logY(10);
    double dotRef = 0, sumDy = 0;
    for (int j = 0; j < 10; ++j) {
      expectNear(row[j] - lse, m::logSoftmax(row[j], r), 1e-6);
      logY[j] = m::logSoftmax(row[j], r);
      y[j] = std::exp(logY[j]);
      dotRef += double(dy[j]) * y[j];
      sumDy += dy[j];
    }
    for (int j = 0; j < 10; ++j) {
      // d softmax: y * (dy - sum(dy * y)); d log_softmax: dy - softmax *
      // sum(dy); cross-entropy: (softmax - onehot) * g.
      expectNear(y[j] * (dy[j] - dotRef),
                 m::softmaxBackward(y[j], dy[j], float(dotRef)), 1e-5);
      expectNear(dy[j] - std::exp(double(row[j]) - lse) * sumDy,
                 m::logSoftmaxBackward(logY[j], dy[j], float(sumDy)), 1e-5);
      double g = 0.125;
      expectNear((std::exp(double(row[j]) - lse) - (j == 3)) * g,
                 m::crossEntropyGrad(row[j], r, j == 3, float(g)), 1e-6);
    }
  }
}

} // namespace
} // namespace dpc::kernels
