//===- IsaLoopsTest.cpp - every ISA build computes the same bits ----------===//
//
// IsaLoops.cpp is built for AVX-512, AVX2 and baseline x86-64; whichever
// the CPU runs must give, bit for bit, the scalar KernelMath result (NaN
// for NaN, whatever its sign), so that a plan trains the same on any
// machine.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/IsaLoops.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/test/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace dpc::kernels {
namespace {

bool runs(const IsaLoops &loops) {
  __builtin_cpu_init();
  std::string isa = loops.isa;
  return isa == "baseline" ||
         (isa == "avx2" && __builtin_cpu_supports("avx2")) ||
         (isa == "avx512" && __builtin_cpu_supports("avx512f"));
}

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

TEST(IsaLoopsTest, EveryBuildGivesTheScalarBits) {
  std::vector<float> x = test::randomVector(10007, 5, -100.f, 100.f);
  for (float special : {0.f, -0.f, 88.7f, -88.7f, 87.4f, -87.4f, 1e-30f,
                        INFINITY, -INFINITY, NAN})
    x.push_back(special);
  std::vector<uint32_t> expected;
  for (float v : x)
    expected.push_back(bitsOf(math::sigmoidForward(v)));
  int tested = 0;
  for (const IsaLoops *loops :
       {&isa_avx512::loops, &isa_avx2::loops, &isa_baseline::loops}) {
    if (!runs(*loops))
      continue;
    ++tested;
    std::vector<float> y(x.size());
    loops->sigmoidForward(int64_t(x.size()), x.data(), y.data());
    std::vector<uint32_t> got;
    for (float v : y)
      got.push_back(bitsOf(v));
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) // the sign of a NaN may differ
        EXPECT_TRUE(std::isnan(y[i])) << loops->isa;
      else
        EXPECT_EQ(got[i], expected[i])
            << loops->isa << ": sigmoid(" << x[i] << ") is " << y[i];
    }
  }
  EXPECT_GE(tested, 1);
  EXPECT_TRUE(runs(getIsaLoops())) << getIsaLoops().isa;
}

} // namespace
} // namespace dpc::kernels
