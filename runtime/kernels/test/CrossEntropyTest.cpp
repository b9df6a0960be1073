//===- CrossEntropyTest.cpp - fused log-softmax + NLL ---------------------===//

#include "runtime/kernels/CrossEntropy.h"
#include "runtime/kernels/test/TestUtil.h"

#include <algorithm>
#include <cmath>

namespace dpc::kernels::test {
namespace {

TEST(CrossEntropyTest, LossDividesSumByGivenDivisor) {
  // 3 local rows, global batch 8: loss = sum of per-row NLL / 8.
  int64_t rows = 3, classes = 5;
  auto logits = randomVector(rows * classes, 1, -2.f, 2.f);
  std::vector<int32_t> labels{4, 0, 2};
  float loss = 0;
  int64_t correct = -1;
  crossEntropyForward(rows, classes, logits.data(), labels.data(), 8.f, &loss,
                      &correct);
  double sum = 0;
  for (int64_t i = 0; i < rows; ++i) {
    double z = 0;
    for (int64_t j = 0; j < classes; ++j)
      z += std::exp(static_cast<double>(logits[i * classes + j]));
    sum += std::log(z) - logits[i * classes + labels[i]];
  }
  EXPECT_NEAR(loss, sum / 8, 1e-6);
  EXPECT_GE(correct, 0);
}

TEST(CrossEntropyTest, CountsCorrectArgmax) {
  // Row 0 predicts 1 (label 1: correct), row 1 predicts 2 (label 0: wrong),
  // row 2 ties between 0 and 3 -> first max, 0 (label 0: correct), row 3
  // predicts 3 (label 3: correct).
  std::vector<float> logits{0, 5, 1, 0, //
                            1, 0, 3, 0, //
                            2, 1, 0, 2, //
                            0, 0, 0, 9};
  std::vector<int32_t> labels{1, 0, 0, 3};
  float loss;
  int64_t correct;
  crossEntropyForward(4, 4, logits.data(), labels.data(), 4.f, &loss, &correct);
  EXPECT_EQ(correct, 3);
}

TEST(CrossEntropyTest, ShardsAddUpToGlobalMean) {
  // Two replicas with 3 and 2 rows, each dividing by the global 5, sum to
  // the single-device mean loss and gradient.
  int64_t classes = 4;
  auto logits = randomVector(5 * classes, 2, -2.f, 2.f);
  std::vector<int32_t> labels{0, 3, 1, 2, 2};
  float full, a, b;
  crossEntropyForward(5, classes, logits.data(), labels.data(), 5.f, &full,
                      nullptr);
  crossEntropyForward(3, classes, logits.data(), labels.data(), 5.f, &a,
                      nullptr);
  crossEntropyForward(2, classes, logits.data() + 3 * classes,
                      labels.data() + 3, 5.f, &b, nullptr);
  EXPECT_NEAR(a + b, full, 1e-6);

  float one = 1.f;
  std::vector<float> gFull(logits.size()), gShard(logits.size());
  crossEntropyBackward(5, classes, logits.data(), labels.data(), &one, 5.f,
                       gFull.data());
  crossEntropyBackward(3, classes, logits.data(), labels.data(), &one, 5.f,
                       gShard.data());
  crossEntropyBackward(2, classes, logits.data() + 3 * classes,
                       labels.data() + 3, &one, 5.f,
                       gShard.data() + 3 * classes);
  expectAllNear(gShard, gFull, 0, 0, "dlogits");
}

TEST(CrossEntropyTest, BackwardMatchesFiniteDifferences) {
  int64_t rows = 3, classes = 6;
  float divisor = 7.f, dLoss = 1.7f;
  auto logits = randomVector(rows * classes, 3, -2.f, 2.f);
  std::vector<int32_t> labels{5, 0, 3};
  std::vector<float> dLogits(logits.size());
  crossEntropyBackward(rows, classes, logits.data(), labels.data(), &dLoss,
                       divisor, dLogits.data());
  auto lossFn = [&] {
    float loss;
    crossEntropyForward(rows, classes, logits.data(), labels.data(), divisor,
                        &loss, nullptr);
    return static_cast<double>(dLoss) * loss;
  };
  // The loss is a single float: a larger step beats its rounding.
  expectAllNear(dLogits, numericGradient(logits, lossFn, 3e-2f), 5e-4, 1e-2,
                "dlogits");
  // Rows of dlogits sum to zero (softmax minus one-hot).
  for (int64_t i = 0; i < rows; ++i) {
    double s = 0;
    for (int64_t j = 0; j < classes; ++j)
      s += dLogits[i * classes + j];
    EXPECT_NEAR(s, 0.0, 1e-6);
  }
}

// The fused kernel gives the bits of the two it replaces, and its gradient,
// from one exp per logit, is softmax - onehot computed in double to within
// float rounding: rows of 1, 10 and 1000 classes, large and equal logits.
TEST(CrossEntropyTest, ForwardBackwardIsBothKernelsAndTheSoftmaxGradient) {
  for (int64_t classes : {1, 10, 1000}) {
    int64_t rows = 5;
    float divisor = 9.f, dLoss = 1.3f;
    auto logits = randomVector(rows * classes, 4, -8.f, 8.f);
    for (int64_t j = 0; j < classes; ++j) {
      logits[2 * classes + j] += 80.f; // far from 0: max subtracted first
      logits[3 * classes + j] = 0.5f;  // a uniform row
    }
    std::vector<int32_t> labels(rows);
    for (int64_t i = 0; i < rows; ++i)
      labels[i] = static_cast<int32_t>((i * 7) % classes);
    float loss, fusedLoss;
    int64_t correct, fusedCorrect;
    std::vector<float> dLogits(logits.size()), fused(logits.size());
    crossEntropyForward(rows, classes, logits.data(), labels.data(), divisor,
                        &loss, &correct);
    crossEntropyBackward(rows, classes, logits.data(), labels.data(), &dLoss,
                         divisor, dLogits.data());
    crossEntropyForwardBackward(rows, classes, logits.data(), labels.data(),
                                &dLoss, divisor, &fusedLoss, &fusedCorrect,
                                fused.data());
    EXPECT_EQ(fusedLoss, loss);
    EXPECT_EQ(fusedCorrect, correct);
    EXPECT_EQ(fused, dLogits);
    double g = static_cast<double>(dLoss) / divisor;
    for (int64_t i = 0; i < rows; ++i) {
      const float *row = logits.data() + i * classes;
      double max = *std::max_element(row, row + classes), sum = 0.0;
      for (int64_t j = 0; j < classes; ++j)
        sum += std::exp(static_cast<double>(row[j]) - max);
      for (int64_t j = 0; j < classes; ++j) {
        double p = std::exp(static_cast<double>(row[j]) - max) / sum;
        double expected = (p - (j == labels[i] ? 1.0 : 0.0)) * g;
        EXPECT_NEAR(fused[i * classes + j], expected,
                    4e-7 * g + 2e-7 * std::abs(expected))
            << "row " << i << ", class " << j << " of " << classes;
      }
    }
  }
}

} // namespace
} // namespace dpc::kernels::test
