//===- Optimizer.cpp - In-place optimizer updates -------------------------===//

#include "runtime/kernels/Optimizer.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Parallel.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace dpc::kernels {
namespace {

/// 1 for NaN and infinity (the floats whose exponent bits are all set),
/// else 0: no branch, so that the loops around it still vectorize.
inline uint32_t nonFiniteBit(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return (bits & 0x7f800000u) == 0x7f800000u;
}

/// Runs update(begin, end) -- which returns whether it wrote a non-finite
/// value -- over [0, size) on one thread or the team (forRange: its
/// one-thread copy stays vectorized, which `omp parallel for if` is not),
/// and ORs the answers.
template <typename Fn>
bool updateRange(int64_t size, int64_t cost, Fn &&update) {
  std::atomic<bool> nonFinite{false};
  forRange(size, cost, [&](int64_t begin, int64_t end) {
    if (update(begin, end))
      nonFinite.store(true, std::memory_order_relaxed);
  });
  return nonFinite.load(std::memory_order_relaxed);
}

/// One loop per momentum case, so that each inner loop has no branch.
template <bool kMomentum>
bool sgdRange(int64_t begin, int64_t end, float *param, const float *grad,
              float *momentumBuffer, float lr, float momentum,
              float oneMinusDampening, float weightDecay, bool nesterov,
              bool first) {
  uint32_t nonFinite = 0;
  float unused = 0.f;
  if (!kMomentum) // the step then never touches the buffer
    momentum = 0.f;
  for (int64_t i = begin; i < end; ++i) {
    // Updated in registers, then checked and stored.
    float value = param[i], buf = kMomentum ? momentumBuffer[i] : unused;
    math::sgdStep(value, grad[i], buf, lr, momentum, oneMinusDampening,
                  weightDecay, nesterov, first);
    param[i] = value;
    nonFinite |= nonFiniteBit(value);
    if (kMomentum) {
      momentumBuffer[i] = buf;
      nonFinite |= nonFiniteBit(buf);
    }
  }
  return nonFinite != 0;
}

} // namespace

bool sgdUpdate(int64_t size, const SgdParams &p, double lr, int64_t step,
               float *param, const float *grad, float *momentumBuffer) {
  checkSgdArguments(p, step, momentumBuffer != nullptr);
  bool first = step == 1;
  float momentum = static_cast<float>(p.momentum);
  float oneMinusDampening = static_cast<float>(1.0 - p.dampening);
  float weightDecay = static_cast<float>(p.weightDecay);
  float lrF = static_cast<float>(lr);
  return updateRange(size, 4, [&](int64_t begin, int64_t end) {
    if (momentumBuffer)
      return sgdRange<true>(begin, end, param, grad, momentumBuffer, lrF,
                            momentum, oneMinusDampening, weightDecay,
                            p.nesterov, first);
    return sgdRange<false>(begin, end, param, grad, nullptr, lrF, momentum,
                           oneMinusDampening, weightDecay, p.nesterov, first);
  });
}

bool adamwUpdate(int64_t size, const AdamWParams &p, double lr, int64_t step,
                 float *param, const float *grad, float *expAvg,
                 float *expAvgSq) {
  if (step < 1)
    throw std::invalid_argument("adamw: step counts from 1");
  math::AdamWScalars k =
      math::adamwScalars(lr, p.beta1, p.beta2, p.eps, p.weightDecay, step);
  return updateRange(size, 8, [&](int64_t begin, int64_t end) {
    uint32_t nonFinite = 0;
    for (int64_t i = begin; i < end; ++i) {
      math::adamwStep(param[i], grad[i], expAvg[i], expAvgSq[i], k.decayFactor,
                      k.beta1, k.oneMinusBeta1, k.beta2, k.oneMinusBeta2, k.eps,
                      k.stepSize, k.biasCorrection2Sqrt);
      nonFinite |= nonFiniteBit(param[i]) | nonFiniteBit(expAvg[i]) |
                   nonFiniteBit(expAvgSq[i]);
    }
    return nonFinite != 0;
  });
}

} // namespace dpc::kernels
