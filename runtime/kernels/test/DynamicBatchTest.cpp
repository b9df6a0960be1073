//===- DynamicBatchTest.cpp - one context, several run-time batch sizes ---===//
//
// The executor keeps one KernelContext per device thread and calls the same
// kernels with whatever batch the step got (≤ the compiled maximum). Rows of
// a smaller batch must equal the same rows of a larger one.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Kernels.h"
#include "runtime/kernels/test/TestUtil.h"

namespace dpc::kernels::test {
namespace {

constexpr int64_t kMaxBatch = 4;

/// Per-row outputs of a small conv → pool → linear → loss pipeline, forward
/// and backward-data, run at batch n on the first n rows of the inputs.
struct RowOutputs {
  std::vector<float> conv, convDx, pool, fc, fcDx, dLogits, matmul;
};

Conv2dShape convShape(int64_t n) {
  Conv2dShape s{};
  s.n = n, s.c = 3, s.h = 6, s.w = 6, s.k = 4, s.r = 3, s.s = 3;
  s.padTop = s.padLeft = s.padBottom = s.padRight = 1;
  return s;
}

RowOutputs runPipeline(KernelContext &ctx, int64_t n) {
  auto cs = convShape(n);
  int64_t perIn = cs.c * cs.h * cs.w, perOut = cs.k * cs.outH() * cs.outW();
  auto x = randomVector(kMaxBatch * perIn, 1);
  auto w = randomVector(cs.k * cs.c * cs.r * cs.s, 2);
  auto bias = randomVector(cs.k, 3);
  auto dyFull = randomVector(kMaxBatch * perOut, 4);
  RowOutputs out;
  out.conv.resize(n * perOut);
  out.convDx.resize(n * perIn);
  conv2dForward(ctx, cs, x.data(), w.data(), bias.data(), out.conv.data());
  conv2dBackwardData(ctx, cs, dyFull.data(), w.data(), out.convDx.data());

  Pool2dShape ps{};
  ps.n = n, ps.c = cs.k, ps.h = cs.outH(), ps.w = cs.outW();
  ps.kernelH = ps.kernelW = 3, ps.strideH = ps.strideW = 2;
  ps.padTop = ps.padLeft = ps.padBottom = ps.padRight = 1;
  int64_t perPool = ps.c * ps.outH() * ps.outW();
  out.pool.resize(n * perPool);
  maxPool2dForward(ps, out.conv.data(), out.pool.data());

  LinearShape ls{n, perPool, 5};
  auto fw = randomVector(ls.out * ls.in, 5), fb = randomVector(ls.out, 6);
  auto fdy = randomVector(kMaxBatch * ls.out, 7);
  out.fc.resize(n * ls.out);
  out.fcDx.resize(n * ls.in);
  linearForward(ctx, ls, out.pool.data(), fw.data(), fb.data(), out.fc.data());
  linearBackwardData(ctx, ls, fdy.data(), fw.data(), out.fcDx.data());

  std::vector<int32_t> labels{1, 4, 0, 2};
  float dLoss = 1.f;
  out.dLogits.resize(n * ls.out);
  crossEntropyBackward(n, ls.out, out.fc.data(), labels.data(), &dLoss,
                       kMaxBatch, out.dLogits.data());

  MatmulShape ms{n, ls.out, 3};
  auto mb = randomVector(ms.k * ms.m, 8);
  out.matmul.resize(n * ms.m);
  matmulForward(ctx, ms, out.fc.data(), mb.data(), out.matmul.data());
  return out;
}

/// The first rows of `full` that a batch of `small.size() / perRow` holds.
void expectLeadingRowsEqual(const std::vector<float> &small,
                            const std::vector<float> &full,
                            const std::string &what) {
  std::vector<float> head(full.begin(), full.begin() + small.size());
  expectAllNear(small, head, 1e-6, 1e-5, what);
}

TEST(DynamicBatchTest, SmallerBatchesReproduceLeadingRows) {
  KernelContext ctx;
  RowOutputs full = runPipeline(ctx, kMaxBatch);
  size_t perShape = ctx.getNumCachedPrimitives();
  EXPECT_EQ(perShape, 5u); // conv fwd, conv bwd-data, fc fwd, fc bwd, matmul
  for (int64_t n : {3, 1}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    RowOutputs part = runPipeline(ctx, n);
    expectLeadingRowsEqual(part.conv, full.conv, "conv");
    expectLeadingRowsEqual(part.convDx, full.convDx, "conv dx");
    expectLeadingRowsEqual(part.pool, full.pool, "pool");
    expectLeadingRowsEqual(part.fc, full.fc, "fc");
    expectLeadingRowsEqual(part.fcDx, full.fcDx, "fc dx");
    expectLeadingRowsEqual(part.dLogits, full.dLogits, "dlogits");
    expectLeadingRowsEqual(part.matmul, full.matmul, "matmul");
  }
  // One primitive per op and batch size; revisiting a size reuses them.
  EXPECT_EQ(ctx.getNumCachedPrimitives(), 3 * perShape);
  runPipeline(ctx, 3);
  EXPECT_EQ(ctx.getNumCachedPrimitives(), 3 * perShape);
  ctx.clearCache();
  EXPECT_EQ(ctx.getNumCachedPrimitives(), 0u);
}

TEST(DynamicBatchTest, WeightGradientSumsOverTheRunTimeBatch) {
  // dW at batch 3 + dW at batch 1 (the fourth row) = dW at batch 4.
  KernelContext ctx;
  LinearShape s{4, 6, 2};
  auto x = randomVector(s.n * s.in, 9), dy = randomVector(s.n * s.out, 10);
  std::vector<float> dwFull(s.out * s.in), db(s.out), dwA(dwFull.size()),
      dwB(dwFull.size());
  linearBackwardWeights(ctx, s, x.data(), dy.data(), dwFull.data(), db.data());
  linearBackwardWeights(ctx, {3, 6, 2}, x.data(), dy.data(), dwA.data(),
                        db.data());
  linearBackwardWeights(ctx, {1, 6, 2}, x.data() + 3 * s.in,
                        dy.data() + 3 * s.out, dwB.data(), db.data());
  accumulate(dwA.size(), dwB.data(), dwA.data());
  expectAllNear(dwA, dwFull, 1e-6, 1e-5, "dW");
}

TEST(DynamicBatchTest, ContextsAreIndependent) {
  KernelContext a, b;
  runPipeline(a, 2);
  EXPECT_EQ(b.getNumCachedPrimitives(), 0u);
  RowOutputs fromB = runPipeline(b, 2), fromA = runPipeline(a, 2);
  expectAllNear(fromB.fc, fromA.fc, 0, 0, "fc");
}

} // namespace
} // namespace dpc::kernels::test
