//===- UtilityTest.cpp - fill, copy, scale, axpy, accumulate, sum ---------===//

#include "runtime/kernels/Utility.h"
#include "runtime/kernels/test/TestUtil.h"

namespace dpc::kernels::test {
namespace {

TEST(UtilityTest, ElementwiseUpdates) {
  auto x = randomVector(1000, 1), y0 = randomVector(1000, 2);
  std::vector<float> y = y0;
  axpy(y.size(), -0.5f, x.data(), y.data());
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_FLOAT_EQ(y[i], y0[i] - 0.5f * x[i]);
  y = y0;
  accumulate(y.size(), x.data(), y.data());
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_FLOAT_EQ(y[i], y0[i] + x[i]);
  y = y0;
  scale(y.size(), 3.f, y.data());
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_FLOAT_EQ(y[i], 3.f * y0[i]);
  copy(y.size(), x.data(), y.data());
  EXPECT_EQ(y, x);
  fill(y.size(), 2.5f, y.data());
  for (float v : y)
    ASSERT_EQ(v, 2.5f);
}

TEST(UtilityTest, SumReduceAcrossChunks) {
  // 10001 elements span three 4096-element chunks and a remainder.
  auto x = randomVector(10001, 3);
  double ref = 0;
  for (float v : x)
    ref += v;
  float sum = 0;
  sumReduce(x.size(), x.data(), &sum);
  EXPECT_NEAR(sum, ref, 1e-4);
  sumReduce(0, x.data(), &sum);
  EXPECT_EQ(sum, 0.f);
}

} // namespace
} // namespace dpc::kernels::test
