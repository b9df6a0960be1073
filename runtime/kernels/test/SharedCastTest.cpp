//===- SharedCastTest.cpp - a bf16 copy of X shared between linear calls --===//
//
// The MLP's first layer casts its input batch to bf16 once per step: the
// forward keeps the copy in a cast slot, the weight gradient reads it
// there (runtime/plan/SharedCast.h). Reading the kept copy must give the
// bits the call's own cast gives, must really skip the cast, and must not
// be fooled into reading a copy of another tensor.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Linear.h"
#include "runtime/kernels/test/TestUtil.h"

#include <algorithm>

namespace dpc::kernels::test {
namespace {

LinearShape bf16Shape(CastSlot cast = {}) {
  LinearShape s{16, 40, 24};
  s.precision = Precision::BF16;
  s.xCastSlot = cast.slot;
  s.xCastReuse = cast.reuse;
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

} // namespace
} // namespace dpc::kernels::test
