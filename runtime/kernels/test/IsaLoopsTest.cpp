//===- IsaLoopsTest.cpp - every ISA build computes the same bits ----------===//
//
// IsaLoops.cpp is built for AVX-512, AVX2 and baseline x86-64; whichever
// the CPU runs must give, bit for bit, the scalar KernelMath result (NaN
// for NaN, whatever its sign), so that a plan trains the same on any
// machine.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/IsaLoops.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/test/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace dpc::kernels {
namespace {

bool runs(const IsaLoops &loops) {
  __builtin_cpu_init();
  std::string isa = loops.isa;
  return isa == "baseline" ||
         (isa == "avx2" && __builtin_cpu_supports("avx2")) ||
         (isa == "avx512" && __builtin_cpu_supports("avx512f"));
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

TEST(IsaLoopsTest, EveryBuildGivesTheScalarBits) {
  std::vector<float> x = test::randomVector(10007, 5, -100.f, 100.f);
  for (float special : {0.f, -0.f, 88.7f, -88.7f, 87.4f, -87.4f, 1e-30f,
                        INFINITY, -INFINITY, NAN})
    x.push_back(special);
  std::vector<uint32_t> expected;
  for (float v : x)
    expected.push_back(bitsOf(math::sigmoidForward(v)));
  int tested = 0;
  for (const IsaLoops *loops :
       {&isa_avx512::loops, &isa_avx2::loops, &isa_baseline::loops}) {
    if (!runs(*loops))
      continue;
    ++tested;
    std::vector<float> y(x.size());
    loops->sigmoidForward(int64_t(x.size()), x.data(), y.data());
    std::vector<uint32_t> got;
    for (float v : y)
      got.push_back(bitsOf(v));
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) // the sign of a NaN may differ
        EXPECT_TRUE(std::isnan(y[i])) << loops->isa;
      else
        EXPECT_EQ(got[i], expected[i])
            << loops->isa << ": sigmoid(" << x[i] << ") is " << y[i];
    }
  }
  EXPECT_GE(tested, 1);
  EXPECT_TRUE(runs(getIsaLoops())) << getIsaLoops().isa;
}

/// The optimizer updates too: each build's parameters and state are the
/// scalar steps' bits, and each says whether it wrote NaN or infinity.
TEST(IsaLoopsTest, EveryBuildUpdatesLikeTheScalarSteps) {
  const int64_t size = 1003; // a vector tail in every build
  std::vector<float> param0 = test::randomVector(size, 7, -2.f, 2.f);
  std::vector<float> grad = test::randomVector(size, 8, -1.f, 1.f);
  std::vector<float> state0 = test::randomVector(size, 9, 0.f, 1.f);
  SgdScalars sgd{0.1f, 0.9f, 0.75f, 0.01f, false, false};
  math::AdamWScalars adamw =
      math::adamwScalars(0.01, 0.9, 0.999, 1e-8, 0.01, 3);
  // The scalar results.
  std::vector<float> sgdParam = param0, sgdBuf = state0, adamParam = param0,
                     adamM = state0, adamV = state0;
  for (int64_t i = 0; i < size; ++i) {
    math::sgdStep(sgdParam[i], grad[i], sgdBuf[i], sgd.lr, sgd.momentum,
                  sgd.oneMinusDampening, sgd.weightDecay, sgd.nesterov,
                  sgd.firstStep);
    math::adamwStep(adamParam[i], grad[i], adamM[i], adamV[i],
                    adamw.decayFactor, adamw.beta1, adamw.oneMinusBeta1,
                    adamw.beta2, adamw.oneMinusBeta2, adamw.eps, adamw.stepSize,
                    adamw.biasCorrection2Sqrt);
  }
  auto bits = [](const std::vector<float> &values) {
    std::vector<uint32_t> out;
    for (float v : values)
      out.push_back(bitsOf(v));
    return out;
  };
  for (const IsaLoops *loops :
       {&isa_avx512::loops, &isa_avx2::loops, &isa_baseline::loops}) {
    if (!runs(*loops))
      continue;
    SCOPED_TRACE(loops->isa);
    std::vector<float> p = param0, buf = state0;
    EXPECT_FALSE(
        loops->sgdUpdate(size, sgd, p.data(), grad.data(), buf.data()));
    EXPECT_EQ(bits(p), bits(sgdParam));
    EXPECT_EQ(bits(buf), bits(sgdBuf));
    std::vector<float> q = param0, m = state0, v = state0;
    EXPECT_FALSE(loops->adamwUpdate(size, adamw, q.data(), grad.data(),
                                    m.data(), v.data()));
    EXPECT_EQ(bits(q), bits(adamParam));
    EXPECT_EQ(bits(m), bits(adamM));
    EXPECT_EQ(bits(v), bits(adamV));

    // NaN in the last (tail) element's gradient is reported.
    std::vector<float> bad = grad;
    bad[size - 1] = NAN;
    p = param0, buf = state0;
    EXPECT_TRUE(loops->sgdUpdate(size, sgd, p.data(), bad.data(), nullptr));
    q = param0, m = state0, v = state0;
    EXPECT_TRUE(loops->adamwUpdate(size, adamw, q.data(), bad.data(), m.data(),
                                   v.data()));
  }
}

/// The batch-norm loops over a run of 16-lane blocks: each build's sums,
/// outputs and gradients are the bits of the scalar formulas in (n, h, w)
/// order, with and without the fused ReLU's mask.
TEST(IsaLoopsTest, EveryBuildNormalizesLikeTheScalarFormulas) {
  const int64_t images = 3, plane = 7, blocks = 2, lanes = kBatchNormLanes;
  // Two blocks per image, then a gap (a third block the run leaves alone).
  const int64_t stride = (blocks + 1) * plane * lanes;
  const int64_t size = images * stride;
  std::vector<float> x = test::randomVector(size, 11, -3.f, 5.f);
  std::vector<float> dy = test::randomVector(size, 12, -1.f, 1.f);
  std::vector<float> reluY = test::randomVector(size, 13, -1.f, 1.f);
  const int64_t channels = blocks * lanes;
  std::vector<float> mean = test::randomVector(channels, 14, -1.f, 1.f);
  std::vector<BatchNormApplyLanes> apply(blocks);
  std::vector<BatchNormGradLanes> grad(blocks);
  std::vector<float> constants =
      test::randomVector(7 * channels, 15, 0.1f, 2.f);
  for (int64_t k = 0; k < blocks; ++k)
    for (int64_t l = 0; l < lanes; ++l) {
      int64_t c = k * lanes + l;
      apply[k].mean[l] = grad[k].mean[l] = mean[c];
      apply[k].invStd[l] = grad[k].invStd[l] = constants[c];
      apply[k].scale[l] = grad[k].scale[l] = constants[channels + c];
      apply[k].shift[l] = constants[2 * channels + c] - 1.f;
      grad[k].meanDy[l] = constants[3 * channels + c] - 1.f;
      grad[k].projScale[l] = constants[4 * channels + c] - 1.f;
    }
  auto at = [&](int64_t i, int64_t c, int64_t j) {
    return i * stride + (c / lanes) * plane * lanes + j * lanes + c % lanes;
  };
  // The scalar results, channel by channel.
  std::vector<double> sum(channels), sumSq(channels);
  std::vector<double> sumDy[2], sumDyXmu[2];
  std::vector<float> y[2], dx[2];
  for (int masked = 0; masked < 2; ++masked) {
    sumDy[masked].assign(channels, 0.0), sumDyXmu[masked].assign(channels, 0.0);
    y[masked].assign(size, 0.f), dx[masked].assign(size, 0.f);
  }
  for (int64_t c = 0; c < channels; ++c) {
    const BatchNormApplyLanes &a = apply[c / lanes];
    const BatchNormGradLanes &g = grad[c / lanes];
    int64_t l = c % lanes;
    for (int64_t i = 0; i < images; ++i)
      for (int64_t j = 0; j < plane; ++j) {
        int64_t e = at(i, c, j);
        double v = x[e];
        sum[c] += v;
        sumSq[c] += v * v;
        for (int masked = 0; masked < 2; ++masked) {
          float v = math::batchNormApply(x[e], a.mean[l], a.invStd[l],
                                         a.scale[l], a.shift[l]);
          y[masked][e] = masked ? math::reluForward(v) : v;
          float d = masked ? math::reluBackward(dy[e], reluY[e]) : dy[e];
          sumDy[masked][c] += d;
          sumDyXmu[masked][c] += static_cast<double>(d) * (x[e] - mean[c]);
          dx[masked][e] = math::batchNormBackwardInput(
              d, x[e], g.mean[l], g.invStd[l], g.scale[l], g.meanDy[l],
              g.projScale[l]);
        }
      }
  }
  BatchNormBlock run{images, plane, stride, blocks};
  for (const IsaLoops *loops :
       {&isa_avx512::loops, &isa_avx2::loops, &isa_baseline::loops}) {
    if (!runs(*loops))
      continue;
    SCOPED_TRACE(loops->isa);
    std::vector<double> s(channels, -1.0), q(channels, -1.0);
    loops->batchNormStatistics(run, x.data(), s.data(), q.data());
    EXPECT_EQ(s, sum);
    EXPECT_EQ(q, sumSq);
    for (int masked = 0; masked < 2; ++masked) {
      SCOPED_TRACE(masked ? "with the ReLU" : "without the ReLU");
      const float *mask = masked ? reluY.data() : nullptr;
      std::vector<float> out(size, 0.f), gradIn(size, 0.f);
      loops->batchNormApply(run, apply.data(), masked, x.data(), out.data());
      EXPECT_EQ(out, y[masked]);
      loops->batchNormGradStatistics(run, mean.data(), x.data(), dy.data(),
                                     mask, s.data(), q.data());
      EXPECT_EQ(s, sumDy[masked]);
      EXPECT_EQ(q, sumDyXmu[masked]);
      loops->batchNormGradApply(run, grad.data(), x.data(), dy.data(), mask,
                                gradIn.data());
      EXPECT_EQ(gradIn, dx[masked]);
    }
  }
}

} // namespace
} // namespace dpc::kernels
