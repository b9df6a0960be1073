//===- Optimizer.cpp - In-place optimizer updates -------------------------===//

#include "runtime/kernels/Optimizer.h"
#include "runtime/kernels/IsaLoops.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Parallel.h"

#include <atomic>
#include <stdexcept>

namespace dpc::kernels {
namespace {

/// Runs update(begin, end) -- which returns whether it wrote a non-finite
/// value -- over [0, size) on one thread or the team, and ORs the answers.
template <typename Fn>
bool updateRange(int64_t size, int64_t cost, Fn &&update) {
  std::atomic<bool> nonFinite{false};
  forRange(size, cost, [&](int64_t begin, int64_t end) {
    if (update(begin, end))
      nonFinite.store(true, std::memory_order_relaxed);
  });
  return nonFinite.load(std::memory_order_relaxed);
}

} // namespace

bool sgdUpdate(int64_t size, const SgdParams &p, double lr, int64_t step,
               float *param, const float *grad, float *momentumBuffer) {
  checkSgdArguments(p, step, momentumBuffer != nullptr);
  SgdScalars s{static_cast<float>(lr),
               static_cast<float>(p.momentum),
               static_cast<float>(1.0 - p.dampening),
               static_cast<float>(p.weightDecay),
               p.nesterov,
               step == 1};
  const IsaLoops &loops = getIsaLoops();
  return updateRange(size, 4, [&](int64_t begin, int64_t end) {
    return loops.sgdUpdate(end - begin, s, param + begin, grad + begin,
                           momentumBuffer ? momentumBuffer + begin : nullptr);
  });
}

bool adamwUpdate(int64_t size, const AdamWParams &p, double lr, int64_t step,
                 float *param, const float *grad, float *expAvg,
                 float *expAvgSq) {
  if (step < 1)
    throw std::invalid_argument("adamw: step counts from 1");
  math::AdamWScalars k =
      math::adamwScalars(lr, p.beta1, p.beta2, p.eps, p.weightDecay, step);
  const IsaLoops &loops = getIsaLoops();
  return updateRange(size, 8, [&](int64_t begin, int64_t end) {
    return loops.adamwUpdate(end - begin, k, param + begin, grad + begin,
                             expAvg + begin, expAvgSq + begin);
  });
}

} // namespace dpc::kernels
