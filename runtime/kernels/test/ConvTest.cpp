//===- ConvTest.cpp - convolutions against a naive loop and differences ---===//

#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/test/TestUtil.h"

#include <algorithm>

namespace dpc::kernels::test {
namespace {

/// Elements of a convolution's input, weights and output (3-D: with the
/// depth; 2-D: depth 1).
int64_t inputSize(const Conv2dShape &s) { return s.n * s.c * s.d * s.h * s.w; }
int64_t weightSize(const Conv2dShape &s) {
  return s.k * (s.c / s.groups) * s.t * s.r * s.s;
}
int64_t outputSize(const Conv2dShape &s) {
  return s.n * s.k * s.outD() * s.outH() * s.outW();
}

/// Direct nine-loop convolution (a 2-D one of depth 1): the second
/// implementation.
std::vector<float> naiveConv(const Conv2dShape &s, const std::vector<float> &x,
                             const std::vector<float> &w, const float *bias) {
  int64_t od = s.outD(), oh = s.outH(), ow = s.outW();
  int64_t cg = s.c / s.groups, kg = s.k / s.groups;
  std::vector<float> y(outputSize(s));
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t o = 0; o < od * oh * ow; ++o) {
        int64_t l = o / (oh * ow), i = o / ow % oh, j = o % ow;
        double acc = bias ? bias[k] : 0.0;
        int64_t g = k / kg;
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t e = 0; e < s.t; ++e)
            for (int64_t r = 0; r < s.r; ++r)
              for (int64_t q = 0; q < s.s; ++q) {
                int64_t id = l * s.strideD - s.padFront + e * s.dilationD;
                int64_t ih = i * s.strideH - s.padTop + r * s.dilationH;
                int64_t iw = j * s.strideW - s.padLeft + q * s.dilationW;
                if (id < 0 || id >= s.d || ih < 0 || ih >= s.h || iw < 0 ||
                    iw >= s.w)
                  continue;
                int64_t channel = n * s.c + g * cg + c;
                acc += static_cast<double>(
                           x[((channel * s.d + id) * s.h + ih) * s.w + iw]) *
                       w[(((k * cg + c) * s.t + e) * s.r + r) * s.s + q];
              }
        y[(n * s.k + k) * od * oh * ow + o] = static_cast<float>(acc);
      }
  return y;
}

struct ConvCase {
  const char *name;
  Conv2dShape shape;
  bool bias;
};

/// Names the case in gtest's failure messages.
std::ostream &operator<<(std::ostream &os, const ConvCase &c) {
  return os << c.name;
}

class ConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTest, ForwardMatchesNaive) {
  const auto &[name, s, hasBias] = GetParam();
  KernelContext ctx;
  auto x = randomVector(inputSize(s), 1);
  auto w = randomVector(weightSize(s), 2);
  auto b = randomVector(s.k, 3);
  std::vector<float> y(outputSize(s));
  conv2dForward(ctx, s, x.data(), w.data(), hasBias ? b.data() : nullptr,
                y.data());
  expectAllNear(y, naiveConv(s, x, w, hasBias ? b.data() : nullptr), 1e-5, 1e-5,
                "y");
}

TEST_P(ConvTest, BackwardMatchesFiniteDifferences) {
  const auto &[name, s, hasBias] = GetParam();
  KernelContext ctx;
  auto x = randomVector(inputSize(s), 4);
  auto w = randomVector(weightSize(s), 5);
  auto b = randomVector(s.k, 6);
  auto dy = randomVector(outputSize(s), 7);
  std::vector<float> y(dy.size());
  auto loss = [&] {
    conv2dForward(ctx, s, x.data(), w.data(), hasBias ? b.data() : nullptr,
                  y.data());
    return dot(dy, y);
  };

  std::vector<float> dx(x.size()), dw(w.size()), db(b.size());
  conv2dBackwardData(ctx, s, dy.data(), w.data(), dx.data());
  conv2dBackwardWeights(ctx, s, x.data(), dy.data(), dw.data(),
                        hasBias ? db.data() : nullptr);
  expectAllNear(dx, numericGradient(x, loss), kGradAtol, kGradRtol, "dx");
  expectAllNear(dw, numericGradient(w, loss), kGradAtol, kGradRtol, "dw");
  if (hasBias)
    expectAllNear(db, numericGradient(b, loss), kGradAtol, kGradRtol, "db");
}

// The fused kernel (oneDNN's ReLU post-op) against the two calls it
// replaces. oneDNN may pick another implementation for a primitive with a
// post-op (it does for the grouped, dilated case), which sums in another
// order: within rounding, not bit for bit.
TEST_P(ConvTest, ReluPostOpIsReluOfTheConvolution) {
  const auto &[name, s, hasBias] = GetParam();
  KernelContext ctx;
  auto x = randomVector(inputSize(s), 8);
  auto w = randomVector(weightSize(s), 9);
  auto b = randomVector(s.k, 10);
  const float *bias = hasBias ? b.data() : nullptr;
  std::vector<float> conv(outputSize(s)), unfused(conv.size()),
      fused(conv.size());
  conv2dForward(ctx, s, x.data(), w.data(), bias, conv.data());
  reluForward(static_cast<int64_t>(conv.size()), conv.data(), unfused.data());
  conv2dForward(ctx, s, x.data(), w.data(), bias, fused.data(), /*relu=*/true);
  expectAllNear(fused, unfused, 1e-6, 1e-6, "relu(conv)");
  EXPECT_GT(std::count(fused.begin(), fused.end(), 0.f), 0);
}

// A call site keeps its bound primitive: later calls with other buffers
// and another batch compute what a call without one does.
TEST_P(ConvTest, CallSiteRebindsBuffersAndBatches) {
  const auto &[name, shape, hasBias] = GetParam();
  KernelContext plain, bound;
  CallSite site;
  for (int64_t n : {shape.n, int64_t(1), shape.n}) {
    Conv2dShape s = shape;
    s.n = n;
    auto x = randomVector(inputSize(s), 11 + n);
    auto w = randomVector(weightSize(s), 12);
    auto dy = randomVector(outputSize(s), 13);
    std::vector<float> y(dy.size()), dx(x.size()), dw(w.size());
    std::vector<float> y2(y), dx2(dx), dw2(dw);
    conv2dForward(plain, s, x.data(), w.data(), nullptr, y.data());
    conv2dBackwardData(plain, s, dy.data(), w.data(), dx.data());
    conv2dBackwardWeights(plain, s, x.data(), dy.data(), dw.data(), nullptr);
    bound.setCallSite(&site);
    conv2dForward(bound, s, x.data(), w.data(), nullptr, y2.data());
    bound.setCallSite(nullptr);
    CallSite backward; // one site per call, as the executor keeps them
    bound.setCallSite(&backward);
    conv2dBackwardData(bound, s, dy.data(), w.data(), dx2.data());
    bound.setCallSite(nullptr);
    conv2dBackwardWeights(bound, s, x.data(), dy.data(), dw2.data(), nullptr);
    EXPECT_EQ(y, y2) << "n = " << n;
    EXPECT_EQ(dx, dx2) << "n = " << n;
    EXPECT_EQ(dw, dw2) << "n = " << n;
  }
}

Conv2dShape makeShape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k,
                      int64_t r, int64_t s) {
  Conv2dShape shape{};
  shape.n = n, shape.c = c, shape.h = h, shape.w = w;
  shape.k = k, shape.r = r, shape.s = s;
  return shape;
}

std::vector<ConvCase> convCases() {
  std::vector<ConvCase> cases;
  cases.push_back({"Basic3x3Pad1", makeShape(2, 3, 5, 5, 4, 3, 3), true});
  cases.back().shape.padTop = cases.back().shape.padLeft =
      cases.back().shape.padBottom = cases.back().shape.padRight = 1;
  cases.push_back({"NoBias1x1", makeShape(2, 3, 5, 5, 2, 1, 1), false});

  // Stride 2, asymmetric padding, dilation 2, two groups, all at once.
  Conv2dShape hard = makeShape(2, 4, 7, 6, 6, 3, 2);
  hard.strideH = hard.strideW = 2;
  hard.padTop = 2, hard.padLeft = 1, hard.padBottom = 1, hard.padRight = 0;
  hard.dilationH = hard.dilationW = 2;
  hard.groups = 2;
  cases.push_back({"Stride2Dilation2Groups2AsymPad", hard, true});

  Conv2dShape strided = makeShape(2, 3, 5, 5, 3, 3, 3);
  strided.strideH = strided.strideW = 2;
  strided.padTop = strided.padLeft = strided.padBottom = strided.padRight = 1;
  cases.push_back({"Stride2Pad1", strided, true});

  Conv2dShape depthwise = makeShape(2, 3, 5, 5, 3, 3, 3);
  depthwise.groups = 3;
  depthwise.dilationH = 2;
  cases.push_back({"DepthwiseDilatedH", depthwise, false});

  // 3-D: a depth of 4 under a 2-deep kernel, padded.
  Conv2dShape volume = makeShape(2, 3, 4, 5, 4, 3, 3);
  volume.spatialDims = 3, volume.d = 4, volume.t = 2;
  volume.padFront = volume.padBack = 1;
  volume.padTop = volume.padLeft = volume.padBottom = volume.padRight = 1;
  cases.push_back({"Volumetric", volume, true});

  // 3-D strided, asymmetrically padded, dilated and grouped along each axis.
  Conv2dShape hardVolume = makeShape(2, 4, 5, 4, 6, 2, 3);
  hardVolume.spatialDims = 3, hardVolume.d = 5, hardVolume.t = 3;
  hardVolume.strideD = 2, hardVolume.strideW = 2;
  hardVolume.padFront = 2, hardVolume.padBack = 1, hardVolume.padLeft = 1;
  hardVolume.dilationD = 2, hardVolume.dilationH = 2;
  hardVolume.groups = 2;
  cases.push_back({"VolumetricStridedDilatedGrouped", hardVolume, false});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvTest, ::testing::ValuesIn(convCases()),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

TEST(ConvShapeTest, OutputSize) {
  Conv2dShape s = makeShape(1, 1, 7, 6, 1, 3, 2);
  s.strideH = s.strideW = 2;
  s.padTop = 2, s.padLeft = 1, s.padBottom = 1, s.padRight = 0;
  s.dilationH = s.dilationW = 2;
  // (7 + 3 - 5) / 2 + 1 = 3 and (6 + 1 - 3) / 2 + 1 = 3.
  EXPECT_EQ(s.outH(), 3);
  EXPECT_EQ(s.outW(), 3);
}

TEST(ConvShapeTest, RejectsBadGroups) {
  KernelContext ctx;
  Conv2dShape s = makeShape(1, 3, 5, 5, 4, 3, 3);
  s.groups = 2;
  std::vector<float> buf(1000);
  EXPECT_THROW(
      conv2dForward(ctx, s, buf.data(), buf.data(), nullptr, buf.data()),
      std::invalid_argument);
}

// What a context holds on its own (oneDNN's scratchpad, reordered and cast
// operands) is reported to its observer as it grows, and given back when
// the context goes: a device counts it as library memory.
TEST(KernelContextMemoryTest, ObserverSeesOwnBuffersComeAndGo) {
  int64_t held = 0, peak = 0;
  {
    KernelContext ctx;
    ctx.setMemoryObserver([&](int64_t delta) {
      held += delta;
      peak = std::max(peak, held);
    });
    // Winograd's transformed tiles need scratch: a 3x3, stride-1 call.
    Conv2dShape s = makeShape(8, 32, 14, 14, 32, 3, 3);
    s.padTop = s.padLeft = s.padBottom = s.padRight = 1;
    s.algorithm = plan::ConvAlgorithm::Winograd;
    auto x = randomVector(s.n * s.c * s.h * s.w, 1);
    auto w = randomVector(s.k * s.c * s.r * s.s, 2);
    std::vector<float> y(s.n * s.k * s.outH() * s.outW()), dx(x.size());
    conv2dForward(ctx, s, x.data(), w.data(), nullptr, y.data());
    conv2dBackwardData(ctx, s, y.data(), w.data(), dx.data());
    EXPECT_GT(held, 0);
  }
  EXPECT_GT(peak, 0);
  EXPECT_EQ(held, 0);
}

} // namespace
} // namespace dpc::kernels::test
