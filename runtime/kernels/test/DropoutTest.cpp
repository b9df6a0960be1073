//===- DropoutTest.cpp - Philox and dropout's mask ------------------------===//

#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/test/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace dpc::kernels::test {
namespace {

using math::DropoutMask;
using math::Philox4;

void expectWords(Philox4 actual, Philox4 expected) {
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(actual.v[i], expected.v[i]) << "word " << i;
}

// Random123's known-answer vectors (kat_vectors, philox4x32 10 rounds).
TEST(PhiloxTest, KnownAnswers) {
  expectWords(math::philox4x32({{0, 0, 0, 0}}, 0, 0),
              {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}});
  expectWords(math::philox4x32({{~0u, ~0u, ~0u, ~0u}}, ~0u, ~0u),
              {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}});
  expectWords(
      math::philox4x32({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                       0xa4093822u, 0x299f31d0u),
      {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}});
}

/// The mask element by element, from its definition in KernelMath.h.
std::vector<float> naiveDropout(const DropoutMask &m, int64_t rows,
                                int64_t cols, int64_t firstRow,
                                const std::vector<float> &x) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      Philox4 w = math::philox4x32(
          {{uint32_t(c / 4), uint32_t(firstRow + r), m.step, m.site}},
          uint32_t(m.seed), uint32_t(m.seed >> 32));
      bool keep = double(w.v[c % 4] >> 8) / 16777216.0 >= 0.3;
      y[r * cols + c] = keep ? x[r * cols + c] * float(1 / 0.7) : 0.f;
    }
  return y;
}

TEST(DropoutTest, MatchesItsDefinition) {
  // 7 columns: rows end mid-way through a draw of four.
  int64_t rows = 5, cols = 7;
  auto x = randomVector(rows * cols, 1);
  DropoutMask m = math::makeDropoutMask(0x123456789abcdefull, 3, 2, 0.3);
  std::vector<float> y(x.size());
  dropout(m, rows, cols, 11, x.data(), y.data());
  EXPECT_EQ(y, naiveDropout(m, rows, cols, 11, x));
}

TEST(DropoutTest, RatioAndScaleHoldStatistically) {
  int64_t rows = 64, cols = 1000;
  std::vector<float> ones(rows * cols, 1.f), y(ones.size());
  for (double ratio : {0.1, 0.5, 0.9}) {
    dropout(math::makeDropoutMask(7, 1, 0, ratio), rows, cols, 0, ones.data(),
            y.data());
    int64_t kept = 0;
    for (float v : y) {
      ASSERT_TRUE(v == 0.f || v == float(1 / (1 - ratio))) << v;
      kept += v != 0.f;
    }
    // Within 5 standard deviations of the binomial's mean.
    double n = double(ones.size()), mean = n * (1 - ratio);
    EXPECT_NEAR(double(kept), mean, 5 * std::sqrt(n * ratio * (1 - ratio)))
        << "ratio " << ratio;
  }
  dropout(math::makeDropoutMask(7, 1, 0, 1.0), rows, cols, 0, ones.data(),
          y.data());
  EXPECT_EQ(y, std::vector<float>(y.size(), 0.f));
  dropout(math::makeDropoutMask(7, 1, 0, 0.0), rows, cols, 0, ones.data(),
          y.data());
  EXPECT_EQ(y, ones);
}

TEST(DropoutTest, RowwiseKeepsOrDropsWholeRows) {
  int64_t rows = 200, cols = 9;
  std::vector<float> ones(rows * cols, 1.f), y(ones.size());
  DropoutMask m = math::makeDropoutMask(5, 2, 4, 0.5, /*rowwise=*/true);
  dropout(m, rows, cols, 0, ones.data(), y.data());
  int64_t kept = 0;
  for (int64_t r = 0; r < rows; ++r) {
    // Each row is its element 0's draw of the elementwise mask.
    Philox4 w = math::dropoutWords(m, r, 0);
    float expected = (w.v[0] >> 8) >= m.threshold ? 2.f : 0.f;
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(y[r * cols + c], expected) << "row " << r << " col " << c;
    kept += expected != 0.f;
  }
  EXPECT_NEAR(double(kept), rows * 0.5, 5 * std::sqrt(rows * 0.25));
}

TEST(DropoutTest, SpanSharesOneDrawPerChannel) {
  // Dropout2d on [N, 3, 2, 2]: each sample's channel (4 elements) kept or
  // dropped whole, as draw c of the element-wise mask; AlphaDropout's
  // affine form: kept x scale + shift, dropped fill.
  int64_t rows = 50, channels = 3, plane = 4, cols = channels * plane;
  auto x = randomVector(rows * cols, 3);
  DropoutMask m = math::makeDropoutMask(9, 1, 2, 0.5);
  DropoutMask elementwise = m;
  m.span = plane;
  m.scale = 0.75f, m.shift = 0.25f, m.fill = -1.5f;
  std::vector<float> y(x.size());
  dropout(m, rows, cols, 0, x.data(), y.data());
  int64_t kept = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) {
      bool keep =
          (math::dropoutWords(elementwise, r, c).v[c % 4] >> 8) >= m.threshold;
      kept += keep;
      for (int64_t j = 0; j < plane; ++j) {
        int64_t i = r * cols + c * plane + j;
        ASSERT_EQ(y[i], keep ? x[i] * 0.75f + 0.25f : -1.5f)
            << "row " << r << " channel " << c;
      }
    }
  EXPECT_NEAR(double(kept), rows * channels * 0.5,
              5 * std::sqrt(rows * channels * 0.25));
}

TEST(DropoutTest, UniformScalesEachElementByItsDraw) {
  // RReLU's slopes: x (low + (high - low) u), u the element's draw, in
  // [low, high) and spread over it.
  int64_t rows = 40, cols = 7;
  std::vector<float> ones(rows * cols, 1.f), y(ones.size());
  DropoutMask m = math::makeDropoutMask(3, 1, 0, 0.0);
  DropoutMask elementwise = m;
  m.uniform = true;
  m.shift = 0.125f, m.scale = 0.25f;
  dropout(m, rows, cols, 0, ones.data(), y.data());
  double sum = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      uint32_t word = math::dropoutWords(elementwise, r, c).v[c % 4];
      float slope = float(word >> 8) / 16777216.f * 0.25f + 0.125f;
      ASSERT_EQ(y[r * cols + c], slope) << "row " << r << " col " << c;
      ASSERT_GE(slope, 0.125f);
      ASSERT_LT(slope, 0.375f);
      sum += slope;
    }
  EXPECT_NEAR(sum / double(rows * cols), 0.25, 0.02);
}

TEST(DropoutTest, MaskIsAFunctionOfKeyAndGlobalRow) {
  int64_t rows = 8, cols = 33;
  auto x = randomVector(rows * cols, 2);
  DropoutMask m = math::makeDropoutMask(42, 5, 1, 0.5);
  std::vector<float> whole(x.size()), parts(x.size());
  dropout(m, rows, cols, 0, x.data(), whole.data());
  // The same rows split 3 + 5 (two devices, or two micro-batches).
  dropout(m, 3, cols, 0, x.data(), parts.data());
  dropout(m, 5, cols, 3, x.data() + 3 * cols, parts.data() + 3 * cols);
  EXPECT_EQ(parts, whole);
  // Another step, site or seed draws another mask.
  for (DropoutMask other : {math::makeDropoutMask(42, 6, 1, 0.5),
                            math::makeDropoutMask(42, 5, 2, 0.5),
                            math::makeDropoutMask(43, 5, 1, 0.5)}) {
    std::vector<float> y(x.size());
    dropout(other, rows, cols, 0, x.data(), y.data());
    EXPECT_NE(y, whole);
  }
}

} // namespace
} // namespace dpc::kernels::test
