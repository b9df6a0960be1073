//===- SharedCastTest.cpp - a bf16 copy shared between calls --------------===//
//
// The MLP's first layer casts its input batch to bf16 once per step: the
// forward keeps the copy in a cast slot, the weight gradient reads it
// there; a convolution's backward-data keeps its DY's copy for its
// backward-weights (runtime/abi/SharedCast.h). Reading the kept copy must
// give the bits the call's own cast gives, must really skip the cast, and
// must not be fooled into reading a copy of another tensor.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Linear.h"
#include "runtime/kernels/test/TestUtil.h"

#include <algorithm>

namespace dpc::kernels::test {
namespace {

LinearShape bf16Shape(CastSlot cast = {}) {
  LinearShape s{16, 40, 24};
  s.precision = Precision::BF16;
  s.xCast = cast;
  return s;
}

/// dW of `x` and `dy` by a call that casts x for itself, in a fresh context.
std::vector<float> ownCastWeightGradient(const std::vector<float> &x,
                                         const std::vector<float> &dy) {
  LinearShape s = bf16Shape();
  KernelContext ctx;
  std::vector<float> dw(s.out * s.in), db(s.out);
  linearBackwardWeights(ctx, s, x.data(), dy.data(), dw.data(), db.data());
  return dw;
}

TEST(SharedCastTest, WeightGradientReadsTheForwardsCopyBitForBit) {
  LinearShape s = bf16Shape();
  KernelContext ctx;
  auto x = randomVector(s.n * s.in, 1), w = randomVector(s.out * s.in, 2),
       dy = randomVector(s.n * s.out, 3), other = randomVector(s.n * s.in, 4);
  std::vector<float> y(s.n * s.out), dw(s.out * s.in), db(s.out);
  linearForward(ctx, bf16Shape({1, false}), x.data(), w.data(), nullptr,
                y.data(), /*relu=*/true);
  // A bf16 call between them casts another X through the context's own
  // buffer: the slot is apart from it.
  linearForward(ctx, s, other.data(), w.data(), nullptr, y.data());
  linearBackwardWeights(ctx, bf16Shape({1, true}), x.data(), dy.data(),
                        dw.data(), db.data());
  EXPECT_EQ(dw, ownCastWeightGradient(x, dy));
}

TEST(SharedCastTest, ReuseReadsTheKeptCopyWithoutCastingAgain) {
  KernelContext ctx;
  LinearShape s = bf16Shape();
  auto x = randomVector(s.n * s.in, 5), w = randomVector(s.out * s.in, 6),
       dy = randomVector(s.n * s.out, 7);
  std::vector<float> y(s.n * s.out), dw(s.out * s.in), db(s.out);
  std::vector<float> original = x;
  linearForward(ctx, bf16Shape({2, false}), x.data(), w.data(), nullptr,
                y.data());
  // The same buffer with new values, which the compiler never lets happen
  // between a fill and a reuse: the reuse still sees the kept copy.
  std::vector<float> changed = randomVector(x.size(), 8);
  std::copy(changed.begin(), changed.end(), x.begin());
  linearBackwardWeights(ctx, bf16Shape({2, true}), x.data(), dy.data(),
                        dw.data(), db.data());
  EXPECT_EQ(dw, ownCastWeightGradient(original, dy));
  EXPECT_NE(dw, ownCastWeightGradient(x, dy));
}

TEST(SharedCastTest, ReuseOfAnotherTensorCastsItsOwn) {
  KernelContext ctx;
  LinearShape s = bf16Shape();
  auto x = randomVector(s.n * s.in, 9), w = randomVector(s.out * s.in, 10),
       dy = randomVector(s.n * s.out, 11), x2 = randomVector(s.n * s.in, 12);
  std::vector<float> y(s.n * s.out), dw(s.out * s.in), db(s.out);
  linearForward(ctx, bf16Shape({1, false}), x.data(), w.data(), nullptr,
                y.data());
  linearBackwardWeights(ctx, bf16Shape({1, true}), x2.data(), dy.data(),
                        dw.data(), db.data());
  EXPECT_EQ(dw, ownCastWeightGradient(x2, dy));
  // Nor of a slot nothing filled.
  linearBackwardWeights(ctx, bf16Shape({3, true}), x.data(), dy.data(),
                        dw.data(), db.data());
  EXPECT_EQ(dw, ownCastWeightGradient(x, dy));
}

/// A ResNet-like 3x3 convolution in bf16 with nChw16c activations (as the
/// layout assignment gives ResNet's), dy's cast slot `cast`.
Conv2dShape bf16ConvShape(CastSlot cast = {}) {
  Conv2dShape s{4, 16, 8, 8, 32, 3, 3};
  s.padTop = s.padLeft = s.padBottom = s.padRight = 1;
  s.blockedX = s.blockedY = true;
  s.precision = Precision::BF16;
  s.dyCast = cast;
  return s;
}

/// dW of `x` and `dy` by a call that casts dy for itself, in a fresh
/// context.
std::vector<float> ownCastConvWeightGradient(const std::vector<float> &x,
                                             const std::vector<float> &dy) {
  Conv2dShape s = bf16ConvShape();
  KernelContext ctx;
  std::vector<float> dw(s.k * s.c * s.r * s.s), db(s.k);
  conv2dBackwardWeights(ctx, s, x.data(), dy.data(), dw.data(), db.data());
  return dw;
}

TEST(SharedCastTest, ConvBackwardWeightsReadsBackwardDatasCopyOfDy) {
  Conv2dShape s = bf16ConvShape();
  KernelContext ctx;
  auto x = randomVector(s.n * s.c * s.h * s.w, 13),
       w = randomVector(s.k * s.c * s.r * s.s, 14),
       dy = randomVector(s.n * s.k * s.outH() * s.outW(), 15);
  std::vector<float> original = dy;
  std::vector<float> dx(x.size()), dw(w.size()), db(s.k);
  conv2dBackwardData(ctx, bf16ConvShape({1, false}), dy.data(), w.data(),
                     dx.data());
  std::vector<float> ownDx(x.size());
  KernelContext fresh;
  conv2dBackwardData(fresh, s, dy.data(), w.data(), ownDx.data());
  EXPECT_EQ(dx, ownDx);
  // Another bf16 pass between them reorders through the context's own
  // buffers; then dy's bytes change, which the compiler never lets happen
  // before a reuse: the reuse reads the kept copy, the original's bits.
  conv2dBackwardData(ctx, s, randomVector(dy.size(), 16).data(), w.data(),
                     ownDx.data());
  std::vector<float> changed = randomVector(dy.size(), 17);
  std::copy(changed.begin(), changed.end(), dy.begin());
  conv2dBackwardWeights(ctx, bf16ConvShape({1, true}), x.data(), dy.data(),
                        dw.data(), db.data());
  EXPECT_EQ(dw, ownCastConvWeightGradient(x, original));
  EXPECT_NE(dw, ownCastConvWeightGradient(x, dy));
}

TEST(SharedCastTest, ConvReuseOfAnotherDyCastsItsOwn) {
  Conv2dShape s = bf16ConvShape();
  KernelContext ctx;
  auto x = randomVector(s.n * s.c * s.h * s.w, 18),
       w = randomVector(s.k * s.c * s.r * s.s, 19),
       dy = randomVector(s.n * s.k * s.outH() * s.outW(), 20),
       dy2 = randomVector(dy.size(), 21);
  std::vector<float> dx(x.size()), dw(w.size()), db(s.k);
  conv2dBackwardData(ctx, bf16ConvShape({1, false}), dy.data(), w.data(),
                     dx.data());
  conv2dBackwardWeights(ctx, bf16ConvShape({1, true}), x.data(), dy2.data(),
                        dw.data(), db.data());
  EXPECT_EQ(dw, ownCastConvWeightGradient(x, dy2));
  // A linear layer's copy of X in the slot is no copy of this dy.
  LinearShape linear = bf16Shape({1, false});
  auto lx = randomVector(linear.n * linear.in, 22),
       lw = randomVector(linear.out * linear.in, 23);
  std::vector<float> ly(linear.n * linear.out);
  linearForward(ctx, linear, lx.data(), lw.data(), nullptr, ly.data());
  conv2dBackwardWeights(ctx, bf16ConvShape({1, true}), x.data(), dy.data(),
                        dw.data(), db.data());
  EXPECT_EQ(dw, ownCastConvWeightGradient(x, dy));
}

} // namespace
} // namespace dpc::kernels::test
