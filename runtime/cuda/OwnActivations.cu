//===- OwnActivations.cu - activations as own CUDA kernels ----------------===//
//
// Functions of one tensor, element by element: those whose backward reads
// the forward's result (one kernel by Activation kind) and those whose
// backward reads its input. The formulas are KernelMath.h's, the CPU's.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/OwnKernelLaunch.cuh"
#include "runtime/kernels/KernelMath.h"

namespace dpc::cuda {

namespace math = kernels::math;

namespace {

__global__ void activationForwardKernel(Activation kind, int64_t n,
                                        const float *x, float *y) {
  DPC_GRID_STRIDE(i, n) {
    float v = x[i];
    y[i] = kind == Activation::Relu         ? math::reluForward(v)
           : kind == Activation::Sigmoid    ? math::sigmoidForward(v)
           : kind == Activation::Reciprocal ? math::reciprocalForward(v)
                                            : math::tanhForward(v);
  }
}

__global__ void activationBackwardKernel(Activation kind, int64_t n,
                                         const float *y, const float *dy,
                                         float *dx) {
  DPC_GRID_STRIDE(i, n) {
    dx[i] = kind == Activation::Relu      ? math::reluBackward(dy[i], y[i])
            : kind == Activation::Sigmoid ? math::sigmoidBackward(dy[i], y[i])
            : kind == Activation::Reciprocal
                ? math::reciprocalBackward(dy[i], y[i])
                : math::tanhBackward(dy[i], y[i]);
  }
}

__global__ void inputActivationForwardKernel(math::InputActivation kind,
                                             math::ActivationParams params,
                                             int64_t n, const float *x,
                                             float *y) {
  DPC_GRID_STRIDE(i, n) {
    y[i] = math::inputActivationForward(kind, params, x[i]);
  }
}

__global__ void inputActivationBackwardKernel(math::InputActivation kind,
                                              math::ActivationParams params,
                                              int64_t n, const float *x,
                                              const float *dy, float *dx) {
  DPC_GRID_STRIDE(i, n) {
    dx[i] = math::inputActivationBackward(kind, params, dy[i], x[i]);
  }
}

} // namespace

void activationForward(cudaStream_t stream, Activation kind, int64_t size,
                       const float *x, float *y) {
  launch(stream, size, activationForwardKernel, kind, size, x, y);
}

void activationBackward(cudaStream_t stream, Activation kind, int64_t size,
                        const float *y, const float *dy, float *dx) {
  launch(stream, size, activationBackwardKernel, kind, size, y, dy, dx);
}

void inputActivationForward(cudaStream_t stream, math::InputActivation kind,
                            math::ActivationParams params, int64_t size,
                            const float *x, float *y) {
  launch(stream, size, inputActivationForwardKernel, kind, params, size, x, y);
}

void inputActivationBackward(cudaStream_t stream, math::InputActivation kind,
                             math::ActivationParams params, int64_t size,
                             const float *x, const float *dy, float *dx) {
  launch(stream, size, inputActivationBackwardKernel, kind, params, size, x, dy,
         dx);
}

} // namespace dpc::cuda
