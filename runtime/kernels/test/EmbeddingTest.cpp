//===- EmbeddingTest.cpp - table lookups and their gradient ---------------===//

#include "runtime/kernels/Embedding.h"
#include "runtime/kernels/test/TestUtil.h"

#include <stdexcept>

namespace dpc::kernels::test {
namespace {

TEST(EmbeddingTest, PicksRowsAndAddsTheirGradients) {
  EmbeddingShape s{5, 4, 3}; // 5 indices into 4 rows of 3
  auto table = randomVector(s.rows * s.dim, 1);
  std::vector<int32_t> indices = {2, 0, 2, 3, 2};
  std::vector<float> y(s.count * s.dim);
  embeddingForward(s, table.data(), indices.data(), y.data());
  for (int64_t i = 0; i < s.count; ++i)
    for (int64_t d = 0; d < s.dim; ++d)
      EXPECT_EQ(y[i * s.dim + d], table[indices[i] * s.dim + d]);

  // The gradient of sum(y * dy): row 2 gets three rows of dy, row 1 none.
  auto dy = randomVector(y.size(), 2);
  std::vector<float> dTable(table.size(), 7.f); // overwritten, not added to
  embeddingBackward(s, indices.data(), dy.data(), dTable.data());
  std::vector<double> expected(table.size(), 0.0);
  for (int64_t i = 0; i < s.count; ++i)
    for (int64_t d = 0; d < s.dim; ++d)
      expected[indices[i] * s.dim + d] += dy[i * s.dim + d];
  expectAllNear(dTable, expected, 1e-6, 1e-6, "dtable");
}

TEST(EmbeddingTest, RefusesIndicesOutsideTheTable) {
  EmbeddingShape s{2, 4, 3};
  std::vector<float> table(12), y(6);
  for (int32_t bad : {-1, 4}) {
    std::vector<int32_t> indices = {1, bad};
    EXPECT_THROW(embeddingForward(s, table.data(), indices.data(), y.data()),
                 std::out_of_range);
    EXPECT_THROW(embeddingBackward(s, indices.data(), y.data(), table.data()),
                 std::out_of_range);
  }
}

} // namespace
} // namespace dpc::kernels::test
