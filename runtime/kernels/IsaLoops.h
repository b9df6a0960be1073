//===- IsaLoops.h - loops built once per vector ISA -------------*- C++ -*-===//
//
// The default build targets baseline x86-64 (SSE2), so that one binary runs
// anywhere; loops whose per-element math is long (KernelMath.h's
// expStraight) gain 4x from AVX-512. IsaLoops.cpp is therefore compiled
// three times -- for AVX-512, AVX2 and the baseline, each into its own
// namespace -- and getIsaLoops() picks the widest the CPU runs, once.
// Every build has contraction into FMA off, so all three compute the same
// bits: the ISA changes speed, never results.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_ISALOOPS_H
#define DPC_RUNTIME_KERNELS_ISALOOPS_H

#include "runtime/kernels/KernelMath.h"

#include <cstdint>

namespace dpc::kernels {

/// SGD's per-update scalars (KernelMath.h's sgdStep).
struct SgdScalars {
  float lr, momentum, oneMinusDampening, weightDecay;
  bool nesterov, firstStep;
};

/// The loops of one ISA build; each runs on one thread over [0, size).
struct IsaLoops {
  const char *isa;
  void (*sigmoidForward)(int64_t size, const float *x, float *y);
  /// The optimizer updates (Optimizer.h), each returning whether a value
  /// it wrote is NaN or infinite: a test that costs little only where the
  /// vectors are wide. momentumBuffer is null when momentum is 0.
  bool (*sgdUpdate)(int64_t size, const SgdScalars &scalars, float *param,
                    const float *grad, float *momentumBuffer);
  bool (*adamwUpdate)(int64_t size, const math::AdamWScalars &scalars,
                      float *param, const float *grad, float *expAvg,
                      float *expAvgSq);
};

#define DPC_DECLARE_ISA_LOOPS(name)                                            \
  namespace isa_##name {                                                       \
    extern const IsaLoops loops;                                               \
  }
DPC_DECLARE_ISA_LOOPS(avx512)
DPC_DECLARE_ISA_LOOPS(avx2)
DPC_DECLARE_ISA_LOOPS(baseline)
#undef DPC_DECLARE_ISA_LOOPS

/// The widest build this CPU runs (DPC_CPU_ISA=avx2|baseline caps it).
const IsaLoops &getIsaLoops();

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_ISALOOPS_H
