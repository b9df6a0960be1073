//===- LayerNormTest.cpp - layer norm against references ------------------===//

#include "runtime/kernels/LayerNorm.h"
#include "runtime/kernels/test/TestUtil.h"

#include <cmath>

namespace dpc::kernels::test {
namespace {

/// y, in double, from the definition: each row normalized with its own
/// mean and biased variance.
std::vector<double> naiveLayerNorm(const LayerNormShape &s,
                                   const std::vector<float> &x,
                                   const std::vector<float> &scale,
                                   const std::vector<float> &bias) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < s.rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < s.cols; ++c)
      mean += x[r * s.cols + c];
    mean /= s.cols;
    for (int64_t c = 0; c < s.cols; ++c)
      var += (x[r * s.cols + c] - mean) * (x[r * s.cols + c] - mean);
    var /= s.cols;
    for (int64_t c = 0; c < s.cols; ++c)
      y[r * s.cols + c] =
          (x[r * s.cols + c] - mean) / std::sqrt(var + s.epsilon) * scale[c] +
          bias[c];
  }
  return y;
}

TEST(LayerNormTest, ForwardMatchesTheDefinition) {
  LayerNormShape s{6, 10, 1e-5};
  auto x = randomVector(s.rows * s.cols, 1, -3.f, 5.f);
  auto scale = randomVector(s.cols, 2, 0.5f, 1.5f);
  auto bias = randomVector(s.cols, 3);
  std::vector<float> y(x.size());
  layerNormForward(s, x.data(), scale.data(), bias.data(), y.data());
  expectAllNear(y, naiveLayerNorm(s, x, scale, bias), 1e-5, 1e-5, "y");
  // Without a bias.
  layerNormForward(s, x.data(), scale.data(), nullptr, y.data());
  expectAllNear(y, naiveLayerNorm(s, x, scale, std::vector<float>(s.cols)),
                1e-5, 1e-5, "y without bias");
}

TEST(LayerNormTest, BackwardMatchesFiniteDifferences) {
  LayerNormShape s{4, 7, 1e-5};
  auto x = randomVector(s.rows * s.cols, 4, -2.f, 2.f);
  auto scale = randomVector(s.cols, 5, 0.5f, 1.5f);
  auto bias = randomVector(s.cols, 6);
  auto dy = randomVector(x.size(), 7);
  std::vector<float> dx(x.size()), dScale(s.cols), dBias(s.cols);
  std::vector<elements::RowStats> stats(s.rows);
  layerNormBackward(s, x.data(), dy.data(), scale.data(), stats.data(),
                    dx.data(), dScale.data(), dBias.data());
  // loss = sum(y * dy): its gradients are the backward's results.
  auto loss = [&] {
    std::vector<float> y(x.size());
    layerNormForward(s, x.data(), scale.data(), bias.data(), y.data());
    return dot(y, dy);
  };
  expectAllNear(dx, numericGradient(x, loss, 1e-3f), kGradAtol, kGradRtol,
                "dx");
  expectAllNear(dScale, numericGradient(scale, loss, 1e-3f), kGradAtol,
                kGradRtol, "dscale");
  expectAllNear(dBias, numericGradient(bias, loss, 1e-3f), kGradAtol, kGradRtol,
                "dbias");
  // The recomputed statistics are the forward's.
  for (int64_t r = 0; r < s.rows; ++r) {
    elements::RowStats forward =
        elements::layerNormStats(x.data() + r * s.cols, s.cols, s.epsilon);
    EXPECT_EQ(stats[r].mean, forward.mean);
    EXPECT_EQ(stats[r].invStd, forward.invStd);
  }
}

} // namespace
} // namespace dpc::kernels::test
