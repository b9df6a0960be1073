//===- BatchNorm.h - Batch normalization kernels ----------------*- C++ -*-===//
//
// torch.nn.BatchNorm2d semantics on x [n, c, h, w] (h = w = 1 gives
// BatchNorm1d on [n, c]). Per-channel scale (gamma) and shift (beta) [c].
// Statistics are accumulated in double, as PyTorch's CPU kernel does.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_BATCHNORM_H
#define DPC_RUNTIME_KERNELS_BATCHNORM_H

#include "runtime/abi/shapes/NormShapes.h"

#include <cstdint>

namespace dpc::kernels {

using plan::BatchNormParams;
using plan::BatchNormShape;

/// Normalizes with the batch mean and biased variance; writes the batch mean
/// and 1/sqrt(var+eps) to saveMean/saveInvStd [c] for the backward pass, and
/// updates runningMean/runningVar [c] in place, the latter with the unbiased
/// variance var*m/(m-1), m = n*h*w (the biased one when m == 1, where
/// PyTorch refuses to train). Both running pointers null skips the update.
/// With `relu`, y is the ReLU of the normalized value (fused).
void batchNormTrainingForward(const BatchNormShape &shape,
                              const BatchNormParams &params, const float *x,
                              const float *scale, const float *shift, float *y,
                              float *saveMean, float *saveInvStd,
                              float *runningMean, float *runningVar,
                              bool relu = false);

/// Normalizes with the running statistics (eval mode); `relu` as above.
void batchNormInferenceForward(const BatchNormShape &shape,
                               const BatchNormParams &params, const float *x,
                               const float *scale, const float *shift,
                               const float *runningMean,
                               const float *runningVar, float *y,
                               bool relu = false);

/// Backward of the training-mode forward: dx, dScale, dShift (overwritten)
/// from x, dy and the saved batch statistics. With `reluY` (the output of
/// a ReLU of the batch norm's output, fused), dy is that ReLU's output
/// gradient, masked by reluY's signs as reluBackward does.
void batchNormBackward(const BatchNormShape &shape, const float *x,
                       const float *dy, const float *scale,
                       const float *saveMean, const float *saveInvStd,
                       float *dx, float *dScale, float *dShift,
                       const float *reluY = nullptr);

// Synchronized batch norm (SyncBatchNorm): per-replica sums, all-reduced by
// the caller, then the normalization from the global sums. Any number of
// rows works, 0 included.

/// Per channel: sum[c] = sum(x), sumSq[c] = sum(x^2); count[0] = n*h*w. In
/// f64, so that the mean and variance of the global sums round to the f32
/// values batchNormTrainingForward computes from the whole batch.
void batchNormStatistics(const BatchNormShape &shape, const float *x,
                         double *sum, double *sumSq, double *count);

/// The training forward with the batch statistics from the (global) sums:
/// y, saveMean, saveInvStd, and the running statistics (if not null)
/// updated in place. batchNormTrainingForward is this over one replica.
void batchNormApply(const BatchNormShape &shape, const BatchNormParams &params,
                    const float *x, const float *scale, const float *shift,
                    float *runningMean, float *runningVar, const double *sum,
                    const double *sumSq, const double *count, float *y,
                    float *saveMean, float *saveInvStd, bool relu = false);

/// Per channel: sumDy[c] = sum(dy), sumDyXhat[c] = sum(dy * xhat): the
/// replica's dShift and dScale.
void batchNormGradStatistics(const BatchNormShape &shape, const float *x,
                             const float *dy, const float *saveMean,
                             const float *saveInvStd, float *sumDy,
                             float *sumDyXhat, const float *reluY = nullptr);

/// dx from the (global) gradient sums and count.
void batchNormGradApply(const BatchNormShape &shape, const float *x,
                        const float *dy, const float *scale,
                        const float *saveMean, const float *saveInvStd,
                        const float *sumDy, const float *sumDyXhat,
                        const double *count, float *dx,
                        const float *reluY = nullptr);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_BATCHNORM_H
