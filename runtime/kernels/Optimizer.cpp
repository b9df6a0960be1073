//===- Optimizer.cpp - In-place optimizer updates -------------------------===//

#include "runtime/kernels/Optimizer.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Parallel.h"

#include <cmath>
#include <stdexcept>

namespace dpc::kernels {

void sgdUpdate(int64_t size, const SgdParams &p, double lr, int64_t step,
               float *param, const float *grad, float *momentumBuffer) {
  checkSgdArguments(p, step, momentumBuffer != nullptr);
  bool first = step == 1;
  float momentum = static_cast<float>(p.momentum);
  float oneMinusDampening = static_cast<float>(1.0 - p.dampening);
  float weightDecay = static_cast<float>(p.weightDecay);
  float lrF = static_cast<float>(lr);
  float unused = 0.f;
#pragma omp parallel for firstprivate(unused) if (isWorthThreads(size, 4))
  for (int64_t i = 0; i < size; ++i)
    math::sgdStep(param[i], grad[i],
                  momentumBuffer ? momentumBuffer[i] : unused, lrF, momentum,
                  oneMinusDampening, weightDecay, p.nesterov, first);
}

void adamwUpdate(int64_t size, const AdamWParams &p, double lr, int64_t step,
                 float *param, const float *grad, float *expAvg,
                 float *expAvgSq) {
  if (step < 1)
    throw std::invalid_argument("adamw: step counts from 1");
  math::AdamWScalars k = math::adamwScalars(lr, p.beta1, p.beta2, p.eps,
                                            p.weightDecay, step);
#pragma omp parallel for if (isWorthThreads(size, 8))
  for (int64_t i = 0; i < size; ++i)
    math::adamwStep(param[i], grad[i], expAvg[i], expAvgSq[i], k.decayFactor,
                    k.beta1, k.oneMinusBeta1, k.beta2, k.oneMinusBeta2, k.eps,
                    k.stepSize, k.biasCorrection2Sqrt);
}

} // namespace dpc::kernels
