//===- Optimizer.cpp - In-place optimizer updates -------------------------===//

#include "runtime/kernels/Optimizer.h"
#include "runtime/kernels/KernelMath.h"

#include <cmath>
#include <stdexcept>

namespace dpc::kernels {

void sgdUpdate(int64_t size, const SgdParams &p, double lr, int64_t step,
               float *param, const float *grad, float *momentumBuffer) {
  if (step < 1)
    throw std::invalid_argument("sgd: step counts from 1");
  if (p.momentum != 0.0 && !momentumBuffer)
    throw std::invalid_argument("sgd: momentum needs a buffer");
  if (p.nesterov && (p.momentum <= 0.0 || p.dampening != 0.0))
    throw std::invalid_argument(
        "sgd: nesterov needs momentum and zero dampening");
  bool first = step == 1;
  float momentum = static_cast<float>(p.momentum);
  float oneMinusDampening = static_cast<float>(1.0 - p.dampening);
  float weightDecay = static_cast<float>(p.weightDecay);
  float lrF = static_cast<float>(lr);
  float unused = 0.f;
#pragma omp parallel for firstprivate(unused)
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
  // Per-step scalars in double, as torch computes them in Python floats.
  double biasCorrection1 = 1.0 - std::pow(p.beta1, static_cast<double>(step));
  double biasCorrection2 = 1.0 - std::pow(p.beta2, static_cast<double>(step));
  auto f = [](double v) { return static_cast<float>(v); };
  float decayFactor = f(1.0 - lr * p.weightDecay);
  float stepSize = f(lr / biasCorrection1);
  float bc2Sqrt = f(std::sqrt(biasCorrection2));
  float beta1 = f(p.beta1), oneMinusBeta1 = f(1.0 - p.beta1);
  float beta2 = f(p.beta2), oneMinusBeta2 = f(1.0 - p.beta2);
  float eps = f(p.eps);
#pragma omp parallel for
  for (int64_t i = 0; i < size; ++i)
    math::adamwStep(param[i], grad[i], expAvg[i], expAvgSq[i], decayFactor,
                    beta1, oneMinusBeta1, beta2, oneMinusBeta2, eps, stepSize,
                    bc2Sqrt);
}

} // namespace dpc::kernels
