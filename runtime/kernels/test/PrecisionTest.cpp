//===- PrecisionTest.cpp - bf16 convolutions and matmuls against f32 ------===//
//
// A bf16 kernel call must equal the f32 kernel run on its operands rounded
// to bf16 (round to nearest even), up to f32 summation order: products of
// bf16 values are exact in f32, so that pins both the rounding of what it
// reads and the f32 accumulation and result. It must also differ from the
// unrounded f32 call (else no rounding happened) by no more than bf16's
// relative precision allows.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Linear.h"
#include "runtime/kernels/test/TestUtil.h"

#include <cstring>
#include <functional>

namespace dpc::kernels::test {
namespace {

float roundToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&value, &bits, sizeof bits);
  return value;
}

std::vector<float> roundedToBf16(std::vector<float> v) {
  for (float &x : v)
    x = roundToBf16(x);
  return v;
}

/// Runs `run(precision, inputs, output)` three ways and checks the bf16
/// result against f32 on rounded inputs (tight) and on the inputs as they
/// are (bf16's tolerance, and not equal).
void checkPrecision(
    const std::vector<std::vector<float>> &inputs, size_t outputSize,
    const std::function<void(Precision, const std::vector<std::vector<float>> &,
                             std::vector<float> &)> &run,
    const std::string &what) {
  std::vector<std::vector<float>> rounded;
  for (const auto &input : inputs)
    rounded.push_back(roundedToBf16(input));
  std::vector<float> bf16(outputSize), f32Rounded(outputSize), f32(outputSize);
  run(Precision::BF16, inputs, bf16);
  run(Precision::F32, rounded, f32Rounded);
  run(Precision::F32, inputs, f32);
  expectAllNear(bf16, f32Rounded, 1e-4, 1e-4, what + " vs f32 of rounded");
  // Each operand is off by at most 2^-9 relative: sums of a few hundred
  // products of values in [-1, 1] stay within a few hundredths.
  expectAllNear(bf16, f32, 5e-2, 2e-2, what + " vs f32");
  double largest = 0;
  for (size_t i = 0; i < outputSize; ++i)
    largest = std::max(largest, double(std::fabs(bf16[i] - f32[i])));
  EXPECT_GT(largest, 1e-4) << what << ": bf16 equals f32, nothing rounded";
}

struct ConvCase {
  const char *name;
  Conv2dShape shape;
};

std::ostream &operator<<(std::ostream &os, const ConvCase &c) {
  return os << c.name;
}

class ConvPrecisionTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvPrecisionTest, EveryPassRoundsOperandsAndAccumulatesInF32) {
  Conv2dShape s = GetParam().shape;
  KernelContext ctx;
  size_t xSize = s.n * s.c * s.h * s.w;
  size_t wSize = s.k * (s.c / s.groups) * s.r * s.s;
  size_t ySize = s.n * s.k * s.outH() * s.outW();
  auto x = randomVector(xSize, 1), w = randomVector(wSize, 2);
  auto bias = randomVector(s.k, 3), dy = randomVector(ySize, 4);
  auto with = [&](Precision p) {
    Conv2dShape shape = s;
    shape.precision = p;
    return shape;
  };
  checkPrecision(
      {x, w}, ySize,
      [&](Precision p, const auto &in, std::vector<float> &y) {
        conv2dForward(ctx, with(p), in[0].data(), in[1].data(), bias.data(),
                      y.data());
      },
      "forward");
  checkPrecision(
      {dy, w}, xSize,
      [&](Precision p, const auto &in, std::vector<float> &dx) {
        conv2dBackwardData(ctx, with(p), in[0].data(), in[1].data(), dx.data());
      },
      "backward-data");
  std::vector<float> dBias(s.k), dBiasF32(s.k);
  checkPrecision(
      {x, dy}, wSize,
      [&](Precision p, const auto &in, std::vector<float> &dw) {
        conv2dBackwardWeights(ctx, with(p), in[0].data(), in[1].data(),
                              dw.data(), dBias.data());
      },
      "backward-weights");
  // The bias gradient sums dy: the f32 sum of its bf16 values.
  conv2dBackwardWeights(ctx, with(Precision::F32), x.data(),
                        roundedToBf16(dy).data(),
                        std::vector<float>(wSize).data(), dBiasF32.data());
  conv2dBackwardWeights(ctx, with(Precision::BF16), x.data(), dy.data(),
                        std::vector<float>(wSize).data(), dBias.data());
  expectAllNear(dBias, dBiasF32, 1e-4, 1e-4, "bias gradient");
}

Conv2dShape stridedShape() {
  Conv2dShape s{4, 16, 9, 9, 32, 3, 3};
  s.strideH = s.strideW = 2;
  s.padTop = s.padLeft = s.padBottom = s.padRight = 1;
  return s;
}

Conv2dShape groupedShape() {
  Conv2dShape s{2, 8, 6, 6, 8, 3, 3};
  s.groups = 2;
  s.padTop = s.padLeft = s.padBottom = s.padRight = 1;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvPrecisionTest,
    ::testing::Values(ConvCase{"lenet_conv2", {3, 6, 14, 14, 16, 5, 5}},
                      ConvCase{"strided_3x3", stridedShape()},
                      ConvCase{"grouped", groupedShape()},
                      ConvCase{"pointwise", {2, 64, 4, 4, 24, 1, 1}}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(LinearPrecisionTest, EveryPassRoundsOperandsAndAccumulatesInF32) {
  KernelContext ctx;
  LinearShape s{12, 200, 24};
  auto x = randomVector(s.n * s.in, 1), w = randomVector(s.out * s.in, 2);
  auto bias = randomVector(s.out, 3), dy = randomVector(s.n * s.out, 4);
  auto with = [&](Precision p) {
    LinearShape shape = s;
    shape.precision = p;
    return shape;
  };
  checkPrecision(
      {x, w}, s.n * s.out,
      [&](Precision p, const auto &in, std::vector<float> &y) {
        linearForward(ctx, with(p), in[0].data(), in[1].data(), bias.data(),
                      y.data());
      },
      "forward");
  checkPrecision(
      {dy, w}, s.n * s.in,
      [&](Precision p, const auto &in, std::vector<float> &dx) {
        linearBackwardData(ctx, with(p), in[0].data(), in[1].data(), dx.data());
      },
      "backward-data");
  std::vector<float> dBias(s.out);
  checkPrecision(
      {x, dy}, s.out * s.in,
      [&](Precision p, const auto &in, std::vector<float> &dw) {
        linearBackwardWeights(ctx, with(p), in[0].data(), in[1].data(),
                              dw.data(), dBias.data());
      },
      "backward-weights");
}

TEST(MatmulPrecisionTest, BothGradientsRoundOperandsAndAccumulateInF32) {
  KernelContext ctx;
  MatmulShape s{10, 150, 14};
  auto a = randomVector(s.n * s.k, 1), b = randomVector(s.k * s.m, 2);
  auto dc = randomVector(s.n * s.m, 3);
  auto with = [&](Precision p) {
    MatmulShape shape = s;
    shape.precision = p;
    return shape;
  };
  checkPrecision(
      {a, b}, s.n * s.m,
      [&](Precision p, const auto &in, std::vector<float> &c) {
        matmulForward(ctx, with(p), in[0].data(), in[1].data(), c.data());
      },
      "forward");
  checkPrecision(
      {b, dc}, s.n * s.k,
      [&](Precision p, const auto &in, std::vector<float> &da) {
        matmulBackward(ctx, with(p), a.data(), in[0].data(), in[1].data(),
                       da.data(), nullptr);
      },
      "da");
  checkPrecision(
      {a, dc}, s.k * s.m,
      [&](Precision p, const auto &in, std::vector<float> &db) {
        matmulBackward(ctx, with(p), in[0].data(), b.data(), in[1].data(),
                       nullptr, db.data());
      },
      "db");
}

} // namespace
} // namespace dpc::kernels::test
