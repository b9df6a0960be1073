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

  // Batch norm over 16-lane blocks. The sums of a block keep one double
  // accumulator per lane in vector registers through an image's plane
  // (GCC's vector types: an array would go through memory at every
  // position), each lane's additions in the scalar loops' order.
  typedef float Floats8 __attribute__((vector_size(32)));
  typedef double Doubles8 __attribute__((vector_size(64)));
  constexpr int kLanes = kBatchNormLanes;

  /// Calls `perPlane(image, block, offset)` for every block of every image,
  /// in memory order; `offset` is the block's first element in the image.
  template <typename Fn>
  inline void forEachPlane(const BatchNormBlock &b, Fn &&perPlane) {
    for (int64_t i = 0; i < b.images; ++i)
      for (int64_t k = 0; k < b.blocks; ++k)
        perPlane(k, i * b.stride + k * b.plane * kLanes);
  }

  void batchNormStatistics(const BatchNormBlock &b, const float *x, double *sum,
                           double *sumSq) {
    std::memset(sum, 0, sizeof(double) * kLanes * b.blocks);
    std::memset(sumSq, 0, sizeof(double) * kLanes * b.blocks);
    forEachPlane(b, [&](int64_t k, int64_t offset) {
      Doubles8 s[2], q[2];
      std::memcpy(s, sum + k * kLanes, sizeof(s));
      std::memcpy(q, sumSq + k * kLanes, sizeof(q));
      for (int64_t j = offset; j < offset + b.plane * kLanes; j += kLanes) {
        Floats8 v[2];
        std::memcpy(v, x + j, sizeof(v));
        Doubles8 v0 = __builtin_convertvector(v[0], Doubles8);
        Doubles8 v1 = __builtin_convertvector(v[1], Doubles8);
        s[0] += v0, s[1] += v1;
        q[0] += v0 * v0, q[1] += v1 * v1;
      }
      std::memcpy(sum + k * kLanes, s, sizeof(s));
      std::memcpy(sumSq + k * kLanes, q, sizeof(q));
    });
  }

  void batchNormApply(const BatchNormBlock &b, const BatchNormApplyLanes *lanes,
                      bool relu, const float *x, float *y) {
    forEachPlane(b, [&](int64_t k, int64_t offset) {
      const BatchNormApplyLanes &c = lanes[k];
      for (int64_t j = offset; j < offset + b.plane * kLanes; j += kLanes) {
#pragma omp simd
        for (int l = 0; l < kLanes; ++l) {
          float v = math::batchNormApply(x[j + l], c.mean[l], c.invStd[l],
                                         c.scale[l], c.shift[l]);
          y[j + l] = relu ? math::reluForward(v) : v;
        }
      }
    });
  }

  template <bool kRelu>
  void gradStatistics(const BatchNormBlock &b, const float *mean,
                      const float *x, const float *dy, const float *reluY,
                      double *sumDy, double *sumDyXmu) {
    std::memset(sumDy, 0, sizeof(double) * kLanes * b.blocks);
    std::memset(sumDyXmu, 0, sizeof(double) * kLanes * b.blocks);
    forEachPlane(b, [&](int64_t k, int64_t offset) {
      Floats8 m[2];
      std::memcpy(m, mean + k * kLanes, sizeof(m));
      Doubles8 s[2], d[2];
      std::memcpy(s, sumDy + k * kLanes, sizeof(s));
      std::memcpy(d, sumDyXmu + k * kLanes, sizeof(d));
      for (int64_t j = offset; j < offset + b.plane * kLanes; j += kLanes) {
        Floats8 g[2], xs[2];
        std::memcpy(g, dy + j, sizeof(g));
        std::memcpy(xs, x + j, sizeof(xs));
        if (kRelu) {
          // math::reluBackward, eight lanes at a time.
          Floats8 y[2], zero = {};
          std::memcpy(y, reluY + j, sizeof(y));
          g[0] = y[0] > zero ? g[0] : zero;
          g[1] = y[1] > zero ? g[1] : zero;
        }
        Doubles8 g0 = __builtin_convertvector(g[0], Doubles8);
        Doubles8 g1 = __builtin_convertvector(g[1], Doubles8);
        s[0] += g0, s[1] += g1;
        d[0] += g0 * __builtin_convertvector(xs[0] - m[0], Doubles8);
        d[1] += g1 * __builtin_convertvector(xs[1] - m[1], Doubles8);
      }
      std::memcpy(sumDy + k * kLanes, s, sizeof(s));
      std::memcpy(sumDyXmu + k * kLanes, d, sizeof(d));
    });
  }

  void batchNormGradStatistics(const BatchNormBlock &b, const float *mean,
                               const float *x, const float *dy,
                               const float *reluY, double *sumDy,
                               double *sumDyXmu) {
    if (reluY)
      gradStatistics<true>(b, mean, x, dy, reluY, sumDy, sumDyXmu);
    else
      gradStatistics<false>(b, mean, x, dy, nullptr, sumDy, sumDyXmu);
  }

  void batchNormGradApply(const BatchNormBlock &b,
                          const BatchNormGradLanes *lanes, const float *x,
                          const float *dy, const float *reluY, float *dx) {
    forEachPlane(b, [&](int64_t k, int64_t offset) {
      const BatchNormGradLanes &c = lanes[k];
      for (int64_t j = offset; j < offset + b.plane * kLanes; j += kLanes) {
#pragma omp simd
        for (int l = 0; l < kLanes; ++l)
          dx[j + l] = math::batchNormBackwardInput(
              math::batchNormOutputGradient(dy, reluY, j + l), x[j + l],
              c.mean[l], c.invStd[l], c.scale[l], c.meanDy[l], c.projScale[l]);
      }
    });
  }

  } // namespace

  extern const IsaLoops loops = {DPC_STRINGIFY(DPC_ISA),
                                 sigmoidForward,
                                 sgdUpdate,
                                 adamwUpdate,
                                 batchNormStatistics,
                                 batchNormApply,
                                 batchNormGradStatistics,
                                 batchNormGradApply};

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
