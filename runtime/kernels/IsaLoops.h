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

/// Consecutive 16-channel blocks of a batch norm's nChw16c tensors
/// (BatchNorm.cpp): `blocks` blocks of `plane` positions of 16 lanes each,
/// in each of `images` images, one image's first block `stride` floats after
/// the previous one's. The loops walk memory in order -- image by image,
/// the blocks of each in turn -- which streams twice as fast as one block
/// through every image, and keep each lane's sums in (n, h, w) order.
struct BatchNormBlock {
  int64_t images, plane, stride, blocks;
};
inline constexpr int kBatchNormLanes = 16;
/// The per-lane constants of the apply passes (KernelMath.h's
/// batchNormApply and batchNormBackwardInput).
struct BatchNormApplyLanes {
  float mean[kBatchNormLanes], invStd[kBatchNormLanes], scale[kBatchNormLanes],
      shift[kBatchNormLanes];
};
struct BatchNormGradLanes {
  float mean[kBatchNormLanes], invStd[kBatchNormLanes], scale[kBatchNormLanes],
      meanDy[kBatchNormLanes], projScale[kBatchNormLanes];
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
  /// Batch norm over the blocks (BatchNorm.cpp's passes; `reluY`, when not
  /// null, masks dy as a fused ReLU's backward), with 16 sums, constants or
  /// means per block. Each lane's sums run in (n, h, w) order, in double, as
  /// the scalar loops': the same bits. The sums are written, not added to.
  void (*batchNormStatistics)(const BatchNormBlock &block, const float *x,
                              double *sum, double *sumSq);
  void (*batchNormApply)(const BatchNormBlock &block,
                         const BatchNormApplyLanes *lanes, bool relu,
                         const float *x, float *y);
  void (*batchNormGradStatistics)(const BatchNormBlock &block,
                                  const float *mean, const float *x,
                                  const float *dy, const float *reluY,
                                  double *sumDy, double *sumDyXmu);
  void (*batchNormGradApply)(const BatchNormBlock &block,
                             const BatchNormGradLanes *lanes, const float *x,
                             const float *dy, const float *reluY, float *dx);
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
