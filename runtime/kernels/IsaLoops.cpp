//===- IsaLoops.cpp - loops built once per vector ISA ---------------------===//
//
// Compiled once per ISA with DPC_ISA naming the build (see IsaLoops.h and
// runtime/CMakeLists.txt); getIsaLoops lives in the baseline build.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/IsaLoops.h"
#include "runtime/kernels/KernelMath.h"

#include <cstdlib>
#include <cstring>

#ifndef DPC_ISA
#error "IsaLoops.cpp is compiled with -DDPC_ISA=avx512|avx2|baseline"
#endif
#define DPC_STRINGIFY2(x) #x
#define DPC_STRINGIFY(x) DPC_STRINGIFY2(x)
#define DPC_CONCAT2(a, b) a##b
#define DPC_CONCAT(a, b) DPC_CONCAT2(a, b)

namespace dpc::kernels {
namespace DPC_CONCAT(isa_, DPC_ISA) {
  namespace {

  void sigmoidForward(int64_t size, const float *x, float *y) {
#pragma omp simd
    for (int64_t i = 0; i < size; ++i)
      y[i] = math::sigmoidForward(x[i]);
  }

  } // namespace

  extern const IsaLoops loops = {DPC_STRINGIFY(DPC_ISA), sigmoidForward};

} // namespace )

#ifdef DPC_ISA_DISPATCH
const IsaLoops &getIsaLoops() {
  static const IsaLoops &chosen = [&]() -> const IsaLoops & {
    const char *cap = std::getenv("DPC_CPU_ISA");
    bool allowAvx512 = !cap || std::strcmp(cap, "avx512") == 0;
    bool allowAvx2 = allowAvx512 || std::strcmp(cap, "avx2") == 0;
    __builtin_cpu_init();
    if (allowAvx512 && __builtin_cpu_supports("avx512f"))
      return isa_avx512::loops;
    if (allowAvx2 && __builtin_cpu_supports("avx2"))
      return isa_avx2::loops;
    return isa_baseline::loops;
  }();
  return chosen;
}
#endif

} // namespace dpc::kernels
