//===- OwnOptimizers.cu - optimizer updates as own CUDA kernels -----------===//
//
// SGD and AdamW, in place, with KernelMath.h's per-element steps.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/OwnKernelLaunch.cuh"
#include "runtime/kernels/KernelMath.h"

namespace dpc::cuda {

namespace math = kernels::math;

namespace {

/// Raises `flag` (when given) where an update wrote NaN or infinity; every
/// writer stores the same 1, so no atomics are needed.
__device__ void reportNonFinite(unsigned *flag, bool finite) {
  if (flag && !finite)
    *flag = 1u;
}

__global__ void sgdKernel(int64_t n, float momentum, float oneMinusDampening,
                          float weightDecay, bool nesterov, bool first,
                          const float *lr, float *param, const float *grad,
                          float *buffer, unsigned *nonFinite) {
  float lrF = *lr;
  DPC_GRID_STRIDE(i, n) {
    float unused = 0.f;
    float &state = buffer ? buffer[i] : unused;
    math::sgdStep(param[i], grad[i], state, lrF, momentum, oneMinusDampening,
                  weightDecay, nesterov, first);
    reportNonFinite(nonFinite, isfinite(param[i]) && isfinite(state));
  }
}

__global__ void adamwKernel(int64_t n, kernels::AdamWParams p, const float *lr,
                            const int64_t *step, float *param,
                            const float *grad, float *expAvg, float *expAvgSq,
                            unsigned *nonFinite) {
  int64_t t = *step;
  if (t < 1)
    return; // not a 1-based count: the executor never binds one
  math::AdamWScalars k =
      math::adamwScalars(*lr, p.beta1, p.beta2, p.eps, p.weightDecay, t);
  DPC_GRID_STRIDE(i, n) {
    math::adamwStep(param[i], grad[i], expAvg[i], expAvgSq[i], k.decayFactor,
                    k.beta1, k.oneMinusBeta1, k.beta2, k.oneMinusBeta2, k.eps,
                    k.stepSize, k.biasCorrection2Sqrt);
    reportNonFinite(nonFinite, isfinite(param[i]) && isfinite(expAvg[i]) &&
                                   isfinite(expAvgSq[i]));
  }
}

} // namespace

void sgdUpdate(cudaStream_t stream, int64_t size, const kernels::SgdParams &p,
               const float *lr, int64_t step, float *param, const float *grad,
               float *momentumBuffer, unsigned *nonFinite) {
  kernels::checkSgdArguments(p, step, momentumBuffer != nullptr);
  launch(stream, size, sgdKernel, size, static_cast<float>(p.momentum),
         static_cast<float>(1.0 - p.dampening),
         static_cast<float>(p.weightDecay), p.nesterov, step == 1, lr, param,
         grad, momentumBuffer, nonFinite);
}

void adamwUpdate(cudaStream_t stream, int64_t size,
                 const kernels::AdamWParams &params, const float *lr,
                 const int64_t *step, float *param, const float *grad,
                 float *expAvg, float *expAvgSq, unsigned *nonFinite) {
  launch(stream, size, adamwKernel, size, params, lr, step, param, grad, expAvg,
         expAvgSq, nonFinite);
}

} // namespace dpc::cuda
