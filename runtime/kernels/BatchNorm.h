//===- BatchNorm.h - Batch normalization kernels ----------------*- C++ -*-===//
//
// torch.nn.BatchNorm2d semantics on x [n, c, h, w] (h = w = 1 gives
// BatchNorm1d on [n, c]). Per-channel scale (gamma) and shift (beta) [c].
// Statistics are accumulated in double, as PyTorch's CPU kernel does.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_BATCHNORM_H
#define DPC_RUNTIME_KERNELS_BATCHNORM_H

#include <cstdint>

namespace dpc::kernels {

struct BatchNormShape {
  int64_t n, c, h, w;
};

struct BatchNormParams {
  float eps = 1e-5f;
  float momentum = 0.1f; // PyTorch's: running = (1-m)*running + m*batch
};

/// Normalizes with the batch mean and biased variance; writes the batch mean
/// and 1/sqrt(var+eps) to saveMean/saveInvStd [c] for the backward pass, and
/// updates runningMean/runningVar [c] in place, the latter with the unbiased
/// variance var*m/(m-1), m = n*h*w (the biased one when m == 1, where
/// PyTorch refuses to train). Both running pointers null skips the update.
void batchNormTrainingForward(const BatchNormShape &shape,
                              const BatchNormParams &params, const float *x,
                              const float *scale, const float *shift, float *y,
                              float *saveMean, float *saveInvStd,
                              float *runningMean, float *runningVar);

/// Normalizes with the running statistics (eval mode).
void batchNormInferenceForward(const BatchNormShape &shape,
                               const BatchNormParams &params, const float *x,
                               const float *scale, const float *shift,
                               const float *runningMean,
                               const float *runningVar, float *y);

/// Backward of the training-mode forward: dx, dScale, dShift (overwritten)
/// from x, dy and the saved batch statistics.
void batchNormBackward(const BatchNormShape &shape, const float *x,
                       const float *dy, const float *scale,
                       const float *saveMean, const float *saveInvStd,
                       float *dx, float *dScale, float *dShift);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_BATCHNORM_H
