//===- BatchNormTest.cpp - batch norm: statistics, running update, grads --===//

#include "runtime/kernels/BatchNorm.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/test/TestUtil.h"

#include <algorithm>

namespace dpc::kernels::test {
namespace {

constexpr BatchNormShape kShape{2, 3, 5, 5};

TEST(BatchNormTest, TrainingForwardMatchesNaive) {
  const auto s = kShape;
  int64_t plane = s.h * s.w, count = s.n * plane;
  auto x = randomVector(s.n * s.c * plane, 1, -2.f, 3.f);
  auto gamma = randomVector(s.c, 2), beta = randomVector(s.c, 3);
  std::vector<float> y(x.size()), mean(s.c), invStd(s.c);
  BatchNormParams params;
  batchNormTrainingForward(s, params, x.data(), gamma.data(), beta.data(),
                           y.data(), mean.data(), invStd.data(), nullptr,
                           nullptr);
  std::vector<double> refY(x.size()), refMean(s.c), refInvStd(s.c);
  for (int64_t c = 0; c < s.c; ++c) {
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t j = 0; j < plane; ++j)
        sum += x[(n * s.c + c) * plane + j];
    double mu = sum / count;
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t j = 0; j < plane; ++j)
        sq += std::pow(x[(n * s.c + c) * plane + j] - mu, 2);
    double is = 1.0 / std::sqrt(sq / count + params.eps);
    refMean[c] = mu;
    refInvStd[c] = is;
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t j = 0; j < plane; ++j) {
        int64_t i = (n * s.c + c) * plane + j;
        refY[i] = (x[i] - mu) * is * gamma[c] + beta[c];
      }
  }
  expectAllNear(y, refY, 1e-5, 1e-5, "y");
  expectAllNear(mean, refMean, 1e-6, 1e-6, "saveMean");
  expectAllNear(invStd, refInvStd, 1e-6, 1e-6, "saveInvStd");
}

TEST(BatchNormTest, RunningStatsUseUnbiasedVariance) {
  // One channel, four values {1, 2, 3, 6}: mean 3, biased variance 14/4,
  // unbiased variance 14/3. PyTorch with momentum 0.1 from (0, 1):
  //   running_mean = 0.9*0 + 0.1*3        = 0.3
  //   running_var  = 0.9*1 + 0.1*14/3     = 1.3666667
  // and after a second identical step:
  //   running_mean = 0.9*0.3 + 0.3        = 0.57
  //   running_var  = 0.9*1.3666667 + 0.4666667 = 1.6966667
  BatchNormShape s{2, 1, 1, 2};
  std::vector<float> x{1, 2, 3, 6}, gamma{1}, beta{0}, y(4), mean(1), invStd(1),
      runMean{0.f}, runVar{1.f};
  BatchNormParams params; // eps 1e-5, momentum 0.1
  batchNormTrainingForward(s, params, x.data(), gamma.data(), beta.data(),
                           y.data(), mean.data(), invStd.data(), runMean.data(),
                           runVar.data());
  EXPECT_NEAR(mean[0], 3.f, 1e-6);
  EXPECT_NEAR(invStd[0], 1.0 / std::sqrt(3.5 + 1e-5), 1e-6);
  EXPECT_NEAR(runMean[0], 0.3f, 1e-6);
  EXPECT_NEAR(runVar[0], 1.3666667f, 1e-6);
  batchNormTrainingForward(s, params, x.data(), gamma.data(), beta.data(),
                           y.data(), mean.data(), invStd.data(), runMean.data(),
                           runVar.data());
  EXPECT_NEAR(runMean[0], 0.57f, 1e-6);
  EXPECT_NEAR(runVar[0], 1.6966667f, 1e-6);
}

TEST(BatchNormTest, RunningStatsCustomMomentumPerChannel) {
  // Two channels, n = 3, spatial 1: channel 0 {0, 3, 6}: mean 3, unbiased
  // var 9; channel 1 {1, 1, 4}: mean 2, unbiased var 3. Momentum 0.25.
  BatchNormShape s{3, 2, 1, 1};
  std::vector<float> x{0, 1, 3, 1, 6, 4}, gamma{1, 1}, beta{0, 0}, y(6),
      mean(2), invStd(2), runMean{1.f, -1.f}, runVar{2.f, 0.5f};
  BatchNormParams params{1e-5f, 0.25f};
  batchNormTrainingForward(s, params, x.data(), gamma.data(), beta.data(),
                           y.data(), mean.data(), invStd.data(), runMean.data(),
                           runVar.data());
  EXPECT_NEAR(runMean[0], 0.75f * 1 + 0.25f * 3, 1e-6);
  EXPECT_NEAR(runMean[1], 0.75f * -1 + 0.25f * 2, 1e-6);
  EXPECT_NEAR(runVar[0], 0.75f * 2 + 0.25f * 9, 1e-6);
  EXPECT_NEAR(runVar[1], 0.75f * 0.5f + 0.25f * 3, 1e-6);
}

TEST(BatchNormTest, InferenceForwardUsesRunningStats) {
  const auto s = kShape;
  auto x = randomVector(s.n * s.c * s.h * s.w, 4);
  auto gamma = randomVector(s.c, 5), beta = randomVector(s.c, 6);
  std::vector<float> runMean{0.5f, -0.25f, 0.f}, runVar{2.f, 0.5f, 1.f};
  std::vector<float> y(x.size());
  BatchNormParams params;
  batchNormInferenceForward(s, params, x.data(), gamma.data(), beta.data(),
                            runMean.data(), runVar.data(), y.data());
  std::vector<double> ref(x.size());
  int64_t plane = s.h * s.w;
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t c = (i / plane) % s.c;
    ref[i] =
        (x[i] - runMean[c]) / std::sqrt(runVar[c] + 1e-5) * gamma[c] + beta[c];
  }
  expectAllNear(y, ref, 1e-5, 1e-5, "y");
}

// The fused batch norm + ReLU kernels against the unfused calls, bit for
// bit: forward (training and inference) and backward, whose DX may be the
// ReLU output's own buffer.
TEST(BatchNormTest, FusedReluMatchesTheSeparateCallsBitForBit) {
  const auto s = kShape;
  int64_t size = s.n * s.c * s.h * s.w;
  auto x = randomVector(size, 7), dz = randomVector(size, 8);
  auto gamma = randomVector(s.c, 9), beta = randomVector(s.c, 10);
  BatchNormParams params;
  std::vector<float> mean(s.c), invStd(s.c), runMean(s.c), runVar(s.c, 1.f);
  std::vector<float> mean2(mean), invStd2(invStd), runMean2(runMean),
      runVar2(runVar);
  std::vector<float> y(size), z(size), fused(size);
  batchNormTrainingForward(s, params, x.data(), gamma.data(), beta.data(),
                           y.data(), mean.data(), invStd.data(), runMean.data(),
                           runVar.data());
  reluForward(size, y.data(), z.data());
  batchNormTrainingForward(s, params, x.data(), gamma.data(), beta.data(),
                           fused.data(), mean2.data(), invStd2.data(),
                           runMean2.data(), runVar2.data(), /*relu=*/true);
  EXPECT_EQ(fused, z);
  EXPECT_EQ(runMean2, runMean);
  EXPECT_GT(std::count(z.begin(), z.end(), 0.f), 0);

  std::vector<float> yInf(size), zInf(size), fusedInf(size);
  batchNormInferenceForward(s, params, x.data(), gamma.data(), beta.data(),
                            runMean.data(), runVar.data(), yInf.data());
  reluForward(size, yInf.data(), zInf.data());
  batchNormInferenceForward(s, params, x.data(), gamma.data(), beta.data(),
                            runMean.data(), runVar.data(), fusedInf.data(),
                            /*relu=*/true);
  EXPECT_EQ(fusedInf, zInf);

  std::vector<float> dy(size), dx(size), dScale(s.c), dShift(s.c);
  reluBackward(size, z.data(), dz.data(), dy.data());
  batchNormBackward(s, x.data(), dy.data(), gamma.data(), mean.data(),
                    invStd.data(), dx.data(), dScale.data(), dShift.data());
  std::vector<float> dScale2(s.c), dShift2(s.c), inPlace(z);
  batchNormBackward(s, x.data(), dz.data(), gamma.data(), mean.data(),
                    invStd.data(), inPlace.data(), dScale2.data(),
                    dShift2.data(), /*reluY=*/inPlace.data());
  EXPECT_EQ(inPlace, dx);
  EXPECT_EQ(dScale2, dScale);
  EXPECT_EQ(dShift2, dShift);
}

TEST(BatchNormTest, TrainingBackwardMatchesFiniteDifferences) {
  const auto s = kShape;
  auto x = randomVector(s.n * s.c * s.h * s.w, 7);
  auto gamma = randomVector(s.c, 8, 0.5f, 1.5f), beta = randomVector(s.c, 9);
  auto dy = randomVector(x.size(), 10);
  std::vector<float> y(x.size()), mean(s.c), invStd(s.c);
  BatchNormParams params;
  auto loss = [&] {
    batchNormTrainingForward(s, params, x.data(), gamma.data(), beta.data(),
                             y.data(), mean.data(), invStd.data(), nullptr,
                             nullptr);
    return dot(dy, y);
  };
  loss(); // saved statistics for the unperturbed x
  std::vector<float> dx(x.size()), dGamma(s.c), dBeta(s.c);
  batchNormBackward(s, x.data(), dy.data(), gamma.data(), mean.data(),
                    invStd.data(), dx.data(), dGamma.data(), dBeta.data());
  // The batch statistics depend on x: a smaller step keeps truncation low.
  expectAllNear(dx, numericGradient(x, loss, 3e-3f), kGradAtol, kGradRtol,
                "dx");
  expectAllNear(dGamma, numericGradient(gamma, loss), kGradAtol, kGradRtol,
                "dGamma");
  expectAllNear(dBeta, numericGradient(beta, loss), kGradAtol, kGradRtol,
                "dBeta");
}

/// SyncBatchNorm: a batch split into parts, each part's sums added up (the
/// all-reduce) and applied per part, must train exactly like the whole batch:
/// the forward bit for bit (the f64 sums round to the same mean and inverse
/// standard deviation), so that no ReLU after it can flip; the backward to
/// rounding.
void expectSplitMatchesWhole(int64_t firstRows) {
  const BatchNormShape whole{5, 3, 4, 4};
  int64_t plane = whole.h * whole.w, rowSize = whole.c * plane;
  auto x = randomVector(whole.n * rowSize, 11, -1.f, 3.f);
  auto dy = randomVector(x.size(), 12);
  auto gamma = randomVector(whole.c, 13), beta = randomVector(whole.c, 14);
  BatchNormParams params;
  params.momentum = 0.3f;

  std::vector<float> y(x.size()), mean(whole.c), invStd(whole.c),
      runMean(whole.c, 0.5f), runVar(whole.c, 2.f);
  batchNormTrainingForward(whole, params, x.data(), gamma.data(), beta.data(),
                           y.data(), mean.data(), invStd.data(), runMean.data(),
                           runVar.data());
  std::vector<float> dx(x.size()), dGamma(whole.c), dBeta(whole.c);
  batchNormBackward(whole, x.data(), dy.data(), gamma.data(), mean.data(),
                    invStd.data(), dx.data(), dGamma.data(), dBeta.data());

  const BatchNormShape parts[] = {
      {firstRows, whole.c, whole.h, whole.w},
      {whole.n - firstRows, whole.c, whole.h, whole.w}};
  const int64_t offsets[] = {0, firstRows * rowSize};
  std::vector<double> sum(whole.c), sumSq(whole.c), count(1);
  for (int p = 0; p < 2; ++p) {
    std::vector<double> pSum(whole.c), pSumSq(whole.c), pCount(1);
    batchNormStatistics(parts[p], x.data() + offsets[p], pSum.data(),
                        pSumSq.data(), pCount.data());
    for (int64_t c = 0; c < whole.c; ++c) {
      sum[c] += pSum[c];
      sumSq[c] += pSumSq[c];
    }
    count[0] += pCount[0];
  }
  EXPECT_EQ(count[0], double(whole.n * plane));

  std::vector<float> splitY(x.size()), splitDx(x.size());
  std::vector<float> sumDy(whole.c), sumDyXhat(whole.c);
  std::vector<std::vector<float>> partMean, partInvStd;
  for (int p = 0; p < 2; ++p) {
    std::vector<float> pMean(whole.c), pInvStd(whole.c),
        pRunMean(whole.c, 0.5f), pRunVar(whole.c, 2.f);
    batchNormApply(parts[p], params, x.data() + offsets[p], gamma.data(),
                   beta.data(), pRunMean.data(), pRunVar.data(), sum.data(),
                   sumSq.data(), count.data(), splitY.data() + offsets[p],
                   pMean.data(), pInvStd.data());
    // Every replica ends with the global running statistics.
    expectAllNear(pRunMean, runMean, 1e-5, 1e-5, "runningMean");
    expectAllNear(pRunVar, runVar, 1e-5, 1e-5, "runningVar");
    EXPECT_EQ(pMean, mean);
    EXPECT_EQ(pInvStd, invStd);
    std::vector<float> pSumDy(whole.c), pSumDyXhat(whole.c);
    batchNormGradStatistics(parts[p], x.data() + offsets[p],
                            dy.data() + offsets[p], pMean.data(),
                            pInvStd.data(), pSumDy.data(), pSumDyXhat.data());
    for (int64_t c = 0; c < whole.c; ++c) {
      sumDy[c] += pSumDy[c];
      sumDyXhat[c] += pSumDyXhat[c];
    }
    partMean.push_back(pMean);
    partInvStd.push_back(pInvStd);
  }
  for (int p = 0; p < 2; ++p)
    batchNormGradApply(parts[p], x.data() + offsets[p], dy.data() + offsets[p],
                       gamma.data(), partMean[p].data(), partInvStd[p].data(),
                       sumDy.data(), sumDyXhat.data(), count.data(),
                       splitDx.data() + offsets[p]);
  EXPECT_EQ(splitY, y);
  expectAllNear(splitDx, dx, 1e-5, 1e-5, "dx");
  // The summed local sums are the whole batch's parameter gradients.
  expectAllNear(sumDyXhat, dGamma, 1e-5, 1e-5, "dGamma");
  expectAllNear(sumDy, dBeta, 1e-5, 1e-5, "dBeta");
}

TEST(BatchNormTest, SyncedStatisticsOfUnevenSplitMatchWholeBatch) {
  expectSplitMatchesWhole(3);
}

TEST(BatchNormTest, SyncedStatisticsWithEmptyPartMatchWholeBatch) {
  expectSplitMatchesWhole(5);
  expectSplitMatchesWhole(0);
}

} // namespace
} // namespace dpc::kernels::test
