//===- ReductionThreadsTest.cpp - weight gradients, whatever the caller's -===//
//
// oneDNN splits the sums of weight gradients between its threads, so their
// bits depend on the thread count. A context's reduction threads fix that
// count, whatever the calling thread's (a rank alone on its host has more
// than a device of one process): the same bits with 1, 2 or 4.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Conv.h"
#include "runtime/kernels/KernelContext.h"
#include "runtime/kernels/Linear.h"
#include "runtime/kernels/test/TestUtil.h"

#include <cstring>
#include <omp.h>

namespace dpc::kernels::test {
namespace {

/// Runs `body` with `callerThreads` OpenMP threads and a fresh context
/// whose reduction threads are 2; restores the thread count.
template <typename Body>
std::vector<float> withThreads(int callerThreads, Body body) {
  int saved = omp_get_max_threads();
  omp_set_num_threads(callerThreads);
  KernelContext context;
  context.setReductionThreads(2);
  std::vector<float> result = body(context);
  omp_set_num_threads(saved);
  return result;
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(ReductionThreadsTest, ScopeSetsAndRestoresTheCount) {
  int saved = omp_get_max_threads();
  omp_set_num_threads(3);
  KernelContext context;
  {
    ReductionThreadsScope unset(context); // 0: the caller's count
    EXPECT_EQ(omp_get_max_threads(), 3);
  }
  context.setReductionThreads(1);
  {
    ReductionThreadsScope scope(context);
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(saved);
}

// A kernel below kMinParallelFlops runs on one thread whatever the
// context's count; one at the threshold gets the context's.
TEST(ReductionThreadsTest, SmallKernelsRunOnOneThread) {
  int saved = omp_get_max_threads();
  omp_set_num_threads(3);
  KernelContext context;
  context.setReductionThreads(2);
  constexpr int64_t kMin = ReductionThreadsScope::kMinParallelFlops;
  {
    ReductionThreadsScope small(context, kMin - 1);
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  {
    ReductionThreadsScope large(context, kMin);
    EXPECT_EQ(omp_get_max_threads(), 2);
  }
  context.setReductionThreads(0);
  {
    ReductionThreadsScope small(context, 1000);
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(saved);
}

TEST(ReductionThreadsTest, ConvWeightGradientBitsIgnoreCallerThreads) {
  // LeNet's second convolution, one device's 64 rows.
  Conv2dShape s{64, 6, 14, 14, 16, 5, 5};
  auto x = randomVector(s.n * s.c * s.h * s.w, 1);
  auto dy = randomVector(s.n * s.k * s.outH() * s.outW(), 2);
  auto run = [&](KernelContext &context) {
    std::vector<float> grads(s.k * s.c * s.r * s.s + s.k);
    conv2dBackwardWeights(context, s, x.data(), dy.data(), grads.data(),
                          grads.data() + s.k * s.c * s.r * s.s);
    return grads;
  };
  std::vector<float> two = withThreads(2, run);
  EXPECT_TRUE(sameBits(withThreads(1, run), two));
  EXPECT_TRUE(sameBits(withThreads(4, run), two));
}

TEST(ReductionThreadsTest, LinearWeightGradientBitsIgnoreCallerThreads) {
  LinearShape s{128, 400, 120};
  auto x = randomVector(s.n * s.in, 3);
  auto dy = randomVector(s.n * s.out, 4);
  auto run = [&](KernelContext &context) {
    std::vector<float> grads(s.out * s.in + s.out);
    linearBackwardWeights(context, s, x.data(), dy.data(), grads.data(),
                          grads.data() + s.out * s.in);
    return grads;
  };
  std::vector<float> two = withThreads(2, run);
  EXPECT_TRUE(sameBits(withThreads(1, run), two));
  EXPECT_TRUE(sameBits(withThreads(4, run), two));
}

} // namespace
} // namespace dpc::kernels::test
