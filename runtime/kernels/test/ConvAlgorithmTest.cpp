//===- ConvAlgorithmTest.cpp - Winograd convolutions against direct -------===//
//
// A convolution call with ConvAlgorithm::Winograd must run oneDNN's Winograd
// kernel where it has one (3x3, stride 1, f32, AVX-512) in every pass, and
// compute what the direct algorithm computes within Winograd's rounding;
// elsewhere it runs direct. Both are checked against double-precision loops.
//
// The tolerance: F(4x4, 3x3) multiplies in a transformed domain whose
// matrices hold entries up to 8 and 1/4 and sum 36 products per output
// tile, so each output carries rounding errors amplified some 10-100x over
// direct's (a few float epsilons of the output's largest magnitude, ~1e-7).
// Measured here (AVX-512, oneDNN 2.6): 6e-7 to 1.5e-6 of the largest
// |value| in every pass, against 2.4e-7 to 5.6e-7 for direct. The bound,
// 1e-5 of the largest |value|, leaves a 7x margin and is still 200x below
// bf16's rounding of each operand (2^-9).
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Conv.h"
#include "runtime/kernels/test/TestUtil.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dpc::kernels::test {
namespace {

constexpr double kWinogradTolerance = 1e-5;

/// Whether oneDNN 2.6 has its Winograd kernels on this CPU (avx512_core).
bool cpuHasWinograd() {
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
}

int64_t idx4(int64_t a, int64_t b, int64_t c, int64_t d, int64_t B, int64_t C,
             int64_t D) {
  return ((a * B + b) * C + c) * D + d;
}

/// The three passes in double, plain layouts, one group, no dilation.
struct Reference {
  std::vector<double> y, dx, dw;
};

Reference referencePasses(const Conv2dShape &s, const std::vector<float> &x,
                          const std::vector<float> &w,
                          const std::vector<float> &dy) {
  int64_t oh = s.outH(), ow = s.outW();
  Reference ref{std::vector<double>(s.n * s.k * oh * ow),
                std::vector<double>(x.size()), std::vector<double>(w.size())};
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t out = idx4(n, k, i, j, s.k, oh, ow);
          for (int64_t c = 0; c < s.c; ++c)
            for (int64_t r = 0; r < s.r; ++r)
              for (int64_t q = 0; q < s.s; ++q) {
                int64_t ih = i * s.strideH - s.padTop + r;
                int64_t iw = j * s.strideW - s.padLeft + q;
                if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w)
                  continue;
                int64_t in = idx4(n, c, ih, iw, s.c, s.h, s.w);
                int64_t wi = idx4(k, c, r, q, s.c, s.r, s.s);
                ref.y[out] += double(x[in]) * w[wi];
                ref.dx[in] += double(dy[out]) * w[wi];
                ref.dw[wi] += double(dy[out]) * x[in];
              }
        }
  return ref;
}

/// The largest |actual - expected| over the largest |expected|.
double relativeError(const std::vector<float> &actual,
                     const std::vector<double> &expected) {
  double error = 0, largest = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    error = std::max(error, std::fabs(actual[i] - expected[i]));
    largest = std::max(largest, std::fabs(expected[i]));
  }
  return error / largest;
}

struct Outputs {
  std::vector<float> y, dx, dw;
};

Outputs runPasses(KernelContext &ctx, const Conv2dShape &s,
                  const std::vector<float> &x, const std::vector<float> &w,
                  const std::vector<float> &dy) {
  Outputs out{std::vector<float>(dy.size()), std::vector<float>(x.size()),
              std::vector<float>(w.size())};
  conv2dForward(ctx, s, x.data(), w.data(), nullptr, out.y.data());
  conv2dBackwardData(ctx, s, dy.data(), w.data(), out.dx.data());
  conv2dBackwardWeights(ctx, s, x.data(), dy.data(), out.dw.data(), nullptr);
  return out;
}

Conv2dShape winogradShape(int64_t n, int64_t c, int64_t hw, int64_t k) {
  Conv2dShape s{n, c, hw, hw, k, 3, 3};
  s.padTop = s.padLeft = s.padBottom = s.padRight = 1;
  return s;
}

struct WinogradCase {
  const char *name;
  Conv2dShape shape;
};

std::ostream &operator<<(std::ostream &os, const WinogradCase &c) {
  return os << c.name;
}

class WinogradTest : public ::testing::TestWithParam<WinogradCase> {};

TEST_P(WinogradTest, EveryPassRunsWinogradWithinItsRounding) {
  if (!cpuHasWinograd())
    GTEST_SKIP() << "no AVX-512: oneDNN 2.6 has no Winograd kernel here";
  Conv2dShape direct = GetParam().shape;
  Conv2dShape winograd = direct;
  winograd.algorithm = ConvAlgorithm::Winograd;
  KernelContext ctx;
  for (ConvPass pass :
       {ConvPass::Forward, ConvPass::BackwardData, ConvPass::BackwardWeights}) {
    EXPECT_NE(conv2dImplementation(ctx, winograd, pass).find("wino"),
              std::string::npos)
        << "pass " << int(pass) << " ran "
        << conv2dImplementation(ctx, winograd, pass);
    EXPECT_EQ(conv2dImplementation(ctx, direct, pass).find("wino"),
              std::string::npos);
  }
  const Conv2dShape &s = direct;
  auto x = randomVector(s.n * s.c * s.h * s.w, 1);
  auto w = randomVector(s.k * s.c * s.r * s.s, 2);
  auto dy = randomVector(s.n * s.k * s.outH() * s.outW(), 3);
  Reference ref = referencePasses(s, x, w, dy);
  Outputs byDirect = runPasses(ctx, direct, x, w, dy);
  Outputs byWinograd = runPasses(ctx, winograd, x, w, dy);
  for (auto [what, winogradOut, directOut, exact] :
       {std::tuple("y", &byWinograd.y, &byDirect.y, &ref.y),
        std::tuple("dx", &byWinograd.dx, &byDirect.dx, &ref.dx),
        std::tuple("dw", &byWinograd.dw, &byDirect.dw, &ref.dw)}) {
    double winogradError = relativeError(*winogradOut, *exact);
    double directError = relativeError(*directOut, *exact);
    EXPECT_LE(winogradError, kWinogradTolerance) << what;
    EXPECT_LE(directError, kWinogradTolerance) << what;
    // Another algorithm, so other rounding: equal results would mean the
    // call ran direct after all.
    EXPECT_NE(*winogradOut, *directOut) << what;
    char errors[64];
    std::snprintf(errors, sizeof errors, "winograd %.2g, direct %.2g",
                  winogradError, directError);
    RecordProperty(std::string(what) + "_error", errors);
  }
}

// The forward fused with its ReLU (Conv2dReluForward) keeps Winograd:
// oneDNN applies the post-op as it writes the output tiles.
TEST_P(WinogradTest, ReluPostOpRunsWinograd) {
  if (!cpuHasWinograd())
    GTEST_SKIP() << "no AVX-512: oneDNN 2.6 has no Winograd kernel here";
  Conv2dShape s = GetParam().shape;
  s.algorithm = ConvAlgorithm::Winograd;
  KernelContext ctx;
  EXPECT_NE(conv2dImplementation(ctx, s, ConvPass::Forward, /*relu=*/true)
                .find("wino"),
            std::string::npos);
  auto x = randomVector(s.n * s.c * s.h * s.w, 10);
  auto w = randomVector(s.k * s.c * s.r * s.s, 11);
  auto bias = randomVector(s.k, 12);
  std::vector<float> conv(s.n * s.k * s.outH() * s.outW()), fused(conv.size());
  conv2dForward(ctx, s, x.data(), w.data(), bias.data(), conv.data());
  conv2dForward(ctx, s, x.data(), w.data(), bias.data(), fused.data(),
                /*relu=*/true);
  for (float &v : conv)
    v = std::max(v, 0.f);
  EXPECT_EQ(fused, conv);
}

// Activations in nChw16c, as planned layouts hand them over: the same
// computation on the same bytes, so the same results as plain buffers.
TEST_P(WinogradTest, BlockedActivationsMatchPlain) {
  Conv2dShape plain = GetParam().shape;
  plain.algorithm = ConvAlgorithm::Winograd;
  if (plain.c % 16 || plain.k % 16)
    GTEST_SKIP() << "nChw16c needs channels in multiples of 16";
  Conv2dShape blocked = plain;
  blocked.blockedX = blocked.blockedY = true;
  const Conv2dShape &s = plain;
  auto x = randomVector(s.n * s.c * s.h * s.w, 4);
  auto w = randomVector(s.k * s.c * s.r * s.s, 5);
  auto dy = randomVector(s.n * s.k * s.outH() * s.outW(), 6);
  KernelContext ctx;
  Outputs fromPlain = runPasses(ctx, plain, x, w, dy);
  // nChw16c of [n, c, h, w]: element (n, c, h, w) at
  // ((n * c/16 + c/16) * h * w + h * w_ + w) * 16 + c % 16.
  auto toBlocked = [](const std::vector<float> &v, int64_t n, int64_t c,
                      int64_t hw) {
    std::vector<float> out(v.size());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < c; ++j)
        for (int64_t p = 0; p < hw; ++p)
          out[((i * (c / 16) + j / 16) * hw + p) * 16 + j % 16] =
              v[(i * c + j) * hw + p];
    return out;
  };
  int64_t inHw = s.h * s.w, outHw = s.outH() * s.outW();
  Outputs fromBlocked = runPasses(ctx, blocked, toBlocked(x, s.n, s.c, inHw), w,
                                  toBlocked(dy, s.n, s.k, outHw));
  EXPECT_EQ(fromBlocked.y, toBlocked(fromPlain.y, s.n, s.k, outHw));
  EXPECT_EQ(fromBlocked.dx, toBlocked(fromPlain.dx, s.n, s.c, inHw));
  EXPECT_EQ(fromBlocked.dw, fromPlain.dw);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, WinogradTest,
    ::testing::Values(
        // Tiles of 4 that fit the output, and ones that overhang it.
        WinogradCase{"c64_k64_8x8", winogradShape(2, 64, 8, 64)},
        WinogradCase{"c32_k48_9x9", winogradShape(3, 32, 9, 48)},
        // Channels off the 16-wide vector: oneDNN pads them.
        WinogradCase{"c24_k40_6x6", winogradShape(2, 24, 6, 40)}),
    [](const auto &info) { return std::string(info.param.name); });

// Where oneDNN has no Winograd kernel (a strided, a 5x5 convolution; a bf16
// call never asks), a Winograd call runs direct: the same bits.
TEST(WinogradFallbackTest, UnsupportedShapesRunDirect) {
  Conv2dShape strided = winogradShape(2, 16, 8, 16);
  strided.strideH = strided.strideW = 2;
  Conv2dShape wide{2, 16, 8, 8, 16, 5, 5};
  wide.padTop = wide.padLeft = wide.padBottom = wide.padRight = 2;
  for (const Conv2dShape &direct : {strided, wide}) {
    Conv2dShape winograd = direct;
    winograd.algorithm = ConvAlgorithm::Winograd;
    KernelContext ctx;
    for (ConvPass pass :
         {ConvPass::Forward, ConvPass::BackwardData, ConvPass::BackwardWeights})
      EXPECT_EQ(conv2dImplementation(ctx, winograd, pass),
                conv2dImplementation(ctx, direct, pass));
    auto x = randomVector(direct.n * direct.c * direct.h * direct.w, 7);
    auto w = randomVector(direct.k * direct.c * direct.r * direct.s, 8);
    auto dy =
        randomVector(direct.n * direct.k * direct.outH() * direct.outW(), 9);
    Outputs a = runPasses(ctx, direct, x, w, dy);
    Outputs b = runPasses(ctx, winograd, x, w, dy);
    EXPECT_EQ(a.y, b.y);
    EXPECT_EQ(a.dx, b.dx);
    EXPECT_EQ(a.dw, b.dw);
  }
}

} // namespace
} // namespace dpc::kernels::test
