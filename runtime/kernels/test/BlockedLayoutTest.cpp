//===- BlockedLayoutTest.cpp - kernels on nChw16c against plain ones ------===//
//
// Every kernel that takes nChw16c tensors (runtime/abi/KernelLayouts.h)
// must compute, element for element, what it computes on plain NCHW: the
// blocked run's inputs are the plain ones reordered, and its outputs,
// reordered back, must equal the plain run's bit for bit.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/BatchNorm.h"
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Pool.h"
#include "runtime/kernels/Reorder.h"
#include "runtime/kernels/test/TestUtil.h"

#include <gtest/gtest.h>

#include <vector>

namespace dpc::kernels::test {
namespace {

constexpr int64_t kN = 3, kC = 32, kH = 7, kW = 5;

std::vector<float> toBlocked(const std::vector<float> &plain, int64_t n,
                             int64_t c, int64_t plane) {
  std::vector<float> blocked(plain.size());
  reorderChannels(n, c, plane, plain.data(), blocked.data(), true);
  return blocked;
}

std::vector<float> toPlain(const std::vector<float> &blocked, int64_t n,
                           int64_t c, int64_t plane) {
  std::vector<float> plain(blocked.size());
  reorderChannels(n, c, plane, blocked.data(), plain.data(), false);
  return plain;
}

TEST(BlockedLayoutTest, ReorderPlacesChannelsInBlocksOfSixteen) {
  std::vector<float> x(kN * kC * kH * kW);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i);
  std::vector<float> blocked = toBlocked(x, kN, kC, kH * kW);
  // Element (n, c, h, w) lies at [n][c / 16][h][w][c % 16].
  int64_t n = 2, c = 21, h = 4, w = 3;
  int64_t plain = ((n * kC + c) * kH + h) * kW + w;
  int64_t at = (((n * (kC / 16) + c / 16) * kH + h) * kW + w) * 16 + c % 16;
  EXPECT_EQ(blocked[at], x[plain]);
  EXPECT_EQ(toPlain(blocked, kN, kC, kH * kW), x);
}

TEST(BlockedLayoutTest, BatchNormTrainingForwardAndBackward) {
  BatchNormShape plain{kN, kC, kH, kW};
  BatchNormShape blocked = plain;
  blocked.channelBlock = kChannelBlock;
  int64_t size = kN * kC * kH * kW, plane = kH * kW;
  std::vector<float> x = randomVector(size, 1), dy = randomVector(size, 2);
  std::vector<float> scale = randomVector(kC, 3), shift = randomVector(kC, 4);
  for (bool relu : {false, true}) {
    std::vector<float> y(size), mean(kC), invStd(kC), rm(kC, 0.f), rv(kC, 1.f);
    batchNormTrainingForward(plain, {}, x.data(), scale.data(), shift.data(),
                             y.data(), mean.data(), invStd.data(), rm.data(),
                             rv.data(), relu);
    std::vector<float> xb = toBlocked(x, kN, kC, plane), yb(size), meanB(kC),
                       invStdB(kC), rmB(kC, 0.f), rvB(kC, 1.f);
    batchNormTrainingForward(blocked, {}, xb.data(), scale.data(), shift.data(),
                             yb.data(), meanB.data(), invStdB.data(),
                             rmB.data(), rvB.data(), relu);
    EXPECT_EQ(toPlain(yb, kN, kC, plane), y);
    EXPECT_EQ(meanB, mean);
    EXPECT_EQ(invStdB, invStd);
    EXPECT_EQ(rmB, rm);
    EXPECT_EQ(rvB, rv);

    std::vector<float> dx(size), dScale(kC), dShift(kC);
    batchNormBackward(plain, x.data(), dy.data(), scale.data(), mean.data(),
                      invStd.data(), dx.data(), dScale.data(), dShift.data(),
                      relu ? y.data() : nullptr);
    std::vector<float> dyb = toBlocked(dy, kN, kC, plane), dxb(size),
                       dScaleB(kC), dShiftB(kC);
    batchNormBackward(blocked, xb.data(), dyb.data(), scale.data(), mean.data(),
                      invStd.data(), dxb.data(), dScaleB.data(), dShiftB.data(),
                      relu ? yb.data() : nullptr);
    EXPECT_EQ(toPlain(dxb, kN, kC, plane), dx);
    EXPECT_EQ(dScaleB, dScale);
    EXPECT_EQ(dShiftB, dShift);

    std::vector<float> yi(size), yib(size);
    batchNormInferenceForward(plain, {}, x.data(), scale.data(), shift.data(),
                              rm.data(), rv.data(), yi.data(), relu);
    batchNormInferenceForward(blocked, {}, xb.data(), scale.data(),
                              shift.data(), rm.data(), rv.data(), yib.data(),
                              relu);
    EXPECT_EQ(toPlain(yib, kN, kC, plane), yi);
  }
}

class BlockedPoolTest : public ::testing::TestWithParam<bool> {};

TEST_P(BlockedPoolTest, ForwardAndBackward) {
  bool isMax = GetParam();
  Pool2dShape plain{};
  plain.n = kN, plain.c = kC, plain.h = kH, plain.w = kW;
  plain.kernelH = 3, plain.kernelW = 2, plain.strideH = 2, plain.strideW = 2;
  plain.padTop = 1, plain.padBottom = 1, plain.ceilMode = true;
  plain.countIncludePad = false;
  Pool2dShape blocked = plain;
  blocked.channelBlock = kChannelBlock;
  int64_t inPlane = kH * kW, outPlane = plain.outH() * plain.outW();
  std::vector<float> x = distinctVector(kN * kC * inPlane, 5);
  std::vector<float> dy = randomVector(kN * kC * outPlane, 6);
  std::vector<float> xb = toBlocked(x, kN, kC, inPlane);
  std::vector<float> dyb = toBlocked(dy, kN, kC, outPlane);
  std::vector<float> y(dy.size()), yb(dy.size()), dx(x.size()), dxb(x.size());
  if (isMax) {
    maxPool2dForward(plain, x.data(), y.data());
    maxPool2dForward(blocked, xb.data(), yb.data());
    maxPool2dBackward(plain, x.data(), dy.data(), dx.data());
    maxPool2dBackward(blocked, xb.data(), dyb.data(), dxb.data());
  } else {
    avgPool2dForward(plain, x.data(), y.data());
    avgPool2dForward(blocked, xb.data(), yb.data());
    avgPool2dBackward(plain, dy.data(), dx.data());
    avgPool2dBackward(blocked, dyb.data(), dxb.data());
  }
  EXPECT_EQ(toPlain(yb, kN, kC, outPlane), y);
  EXPECT_EQ(toPlain(dxb, kN, kC, inPlane), dx);
}

INSTANTIATE_TEST_SUITE_P(MaxAndAvg, BlockedPoolTest, ::testing::Bool());

TEST(BlockedLayoutTest, GlobalAvgPoolKeepsItsOutputPlain) {
  int64_t plane = kH * kW;
  std::vector<float> x = randomVector(kN * kC * plane, 7);
  std::vector<float> dy = randomVector(kN * kC, 8);
  std::vector<float> y(kN * kC), yb(kN * kC), dx(x.size()), dxb(x.size());
  globalAvgPool2dForward(kN, kC, kH, kW, x.data(), y.data());
  globalAvgPool2dForward(kN, kC, kH, kW, toBlocked(x, kN, kC, plane).data(),
                         yb.data(), /*blocked=*/true);
  EXPECT_EQ(yb, y);
  globalAvgPool2dBackward(kN, kC, kH, kW, dy.data(), dx.data());
  globalAvgPool2dBackward(kN, kC, kH, kW, dy.data(), dxb.data(),
                          /*blocked=*/true);
  EXPECT_EQ(toPlain(dxb, kN, kC, plane), dx);
}

TEST(BlockedLayoutTest, ConvolutionsTakeBlockedActivations) {
  Conv2dShape plain{};
  plain.n = kN, plain.c = kC, plain.h = kH, plain.w = kW;
  plain.k = 16, plain.r = 3, plain.s = 3;
  plain.padTop = plain.padLeft = plain.padBottom = plain.padRight = 1;
  Conv2dShape blocked = plain;
  blocked.blockedX = blocked.blockedY = true;
  int64_t plane = kH * kW, size = kN * kC * plane, outSize = kN * 16 * plane;
  std::vector<float> x = randomVector(size, 9), dy = randomVector(outSize, 10);
  std::vector<float> w = randomVector(16 * kC * 9, 11);
  std::vector<float> xb = toBlocked(x, kN, kC, plane);
  std::vector<float> dyb = toBlocked(dy, kN, 16, plane);
  KernelContext ctx;
  std::vector<float> y(outSize), yb(outSize);
  conv2dForward(ctx, plain, x.data(), w.data(), nullptr, y.data());
  conv2dForward(ctx, blocked, xb.data(), w.data(), nullptr, yb.data());
  EXPECT_EQ(toPlain(yb, kN, 16, plane), y);
  std::vector<float> dx(size), dxb(size);
  conv2dBackwardData(ctx, plain, dy.data(), w.data(), dx.data());
  conv2dBackwardData(ctx, blocked, dyb.data(), w.data(), dxb.data());
  EXPECT_EQ(toPlain(dxb, kN, kC, plane), dx);
  std::vector<float> dw(w.size()), dwb(w.size());
  conv2dBackwardWeights(ctx, plain, x.data(), dy.data(), dw.data(), nullptr);
  conv2dBackwardWeights(ctx, blocked, xb.data(), dyb.data(), dwb.data(),
                        nullptr);
  EXPECT_EQ(dwb, dw);
}

} // namespace
} // namespace dpc::kernels::test
