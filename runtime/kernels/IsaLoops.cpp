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

  /// 1 for NaN and infinity (the floats whose exponent bits are all set),
  /// else 0: no branch, so that the loops around it vectorize.
  inline uint32_t nonFiniteBit(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof(bits));
    return (bits & 0x7f800000u) == 0x7f800000u;
  }

  /// One loop per momentum case, so that the inner loop has no branch; each
  /// value is updated in registers, then checked and stored.
  template <bool kMomentum>
  bool sgdLoop(int64_t size, const SgdScalars &s, float *param,
               const float *grad, float *momentumBuffer) {
    float momentum = kMomentum ? s.momentum : 0.f;
    uint32_t nonFinite = 0;
    for (int64_t i = 0; i < size; ++i) {
      float value = param[i], buf = kMomentum ? momentumBuffer[i] : 0.f;
      math::sgdStep(value, grad[i], buf, s.lr, momentum, s.oneMinusDampening,
                    s.weightDecay, s.nesterov, s.firstStep);
      param[i] = value;
      nonFinite |= nonFiniteBit(value);
      if (kMomentum) {
        momentumBuffer[i] = buf;
        nonFinite |= nonFiniteBit(buf);
      }
    }
    return nonFinite != 0;
  }

  bool sgdUpdate(int64_t size, const SgdScalars &s, float *param,
                 const float *grad, float *momentumBuffer) {
    return momentumBuffer ? sgdLoop<true>(size, s, param, grad, momentumBuffer)
                          : sgdLoop<false>(size, s, param, grad, nullptr);
  }

  bool adamwUpdate(int64_t size, const math::AdamWScalars &k, float *param,
                   const float *grad, float *expAvg, float *expAvgSq) {
    uint32_t nonFinite = 0;
    for (int64_t i = 0; i < size; ++i) {
      float value = param[i], m = expAvg[i], v = expAvgSq[i];
      math::adamwStep(value, grad[i], m, v, k.decayFactor, k.beta1,
                      k.oneMinusBeta1, k.beta2, k.oneMinusBeta2, k.eps,
                      k.stepSize, k.biasCorrection2Sqrt);
      param[i] = value, expAvg[i] = m, expAvgSq[i] = v;
      nonFinite |= nonFiniteBit(value) | nonFiniteBit(m) | nonFiniteBit(v);
    }
    return nonFinite != 0;
  }

  } // namespace

  extern const IsaLoops loops = {DPC_STRINGIFY(DPC_ISA), sigmoidForward,
                                 sgdUpdate, adamwUpdate};

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
