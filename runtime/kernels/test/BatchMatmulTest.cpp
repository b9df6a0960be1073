//===- BatchMatmulTest.cpp - batched products against loops ---------------===//

#include "runtime/kernels/BatchMatmul.h"
#include "runtime/kernels/test/TestUtil.h"

namespace dpc::kernels::test {
namespace {

/// c[i] = op(a[i]) op(b[i]) in double, reading transposed operands from
/// their stored [.., cols, rows] layout.
std::vector<double> naiveBatchMatmul(const BatchMatmulShape &s,
                                     const std::vector<float> &a,
                                     const std::vector<float> &b) {
  std::vector<double> c(s.batch * s.m * s.n, 0.0);
  for (int64_t i = 0; i < s.batch; ++i)
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t col = 0; col < s.n; ++col)
        for (int64_t k = 0; k < s.k; ++k) {
          double x = s.transposeA ? a[(i * s.k + k) * s.m + r]
                                  : a[(i * s.m + r) * s.k + k];
          double y = s.transposeB ? b[(i * s.n + col) * s.k + k]
                                  : b[(i * s.k + k) * s.n + col];
          c[(i * s.m + r) * s.n + col] += x * y;
        }
  return c;
}

TEST(BatchMatmulTest, EveryTransposeMatchesNaive) {
  KernelContext ctx;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      BatchMatmulShape s{6, 5, 7, 3, ta, tb};
      auto a = randomVector(s.batch * s.m * s.k, 21);
      auto b = randomVector(s.batch * s.k * s.n, 22);
      std::vector<float> c(s.batch * s.m * s.n);
      batchMatmul(ctx, s, a.data(), b.data(), c.data());
      expectAllNear(c, naiveBatchMatmul(s, a, b), 1e-5, 1e-5,
                    ta ? (tb ? "c (aT bT)" : "c (aT b)")
                       : (tb ? "c (a bT)" : "c (a b)"));
    }
}

/// One index's product does not depend on how many others run beside it:
/// the replicas of a data-parallel step multiply different counts.
TEST(BatchMatmulTest, EachIndexIndependentOfTheBatch) {
  KernelContext ctx;
  BatchMatmulShape all{8, 16, 8, 16, false, true}, one = all;
  one.batch = 3;
  auto a = randomVector(all.batch * all.m * all.k, 23);
  auto b = randomVector(all.batch * all.k * all.n, 24);
  std::vector<float> c(all.batch * all.m * all.n), part(3 * all.m * all.n);
  batchMatmul(ctx, all, a.data(), b.data(), c.data());
  batchMatmul(ctx, one, a.data() + 5 * all.m * all.k,
              b.data() + 5 * all.k * all.n, part.data());
  for (size_t i = 0; i < part.size(); ++i)
    ASSERT_EQ(part[i], c[5 * all.m * all.n + i]) << "element " << i;
}

TEST(BatchMatmulTest, RejectsEmptyShapes) {
  KernelContext ctx;
  float x = 0;
  EXPECT_THROW(batchMatmul(ctx, {0, 1, 1, 1}, &x, &x, &x),
               std::invalid_argument);
}

} // namespace
} // namespace dpc::kernels::test
