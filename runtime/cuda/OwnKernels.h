//===- OwnKernels.h - dpc's own CUDA kernels, host-side launchers -*- C++
//-*-===//
//
// Launchers for the kernels that are not cuDNN or cuBLAS calls. Each one
// enqueues its kernel(s) on `stream` and returns; shapes come from
// runtime/abi/KernelShapes.h, already checked. The per-element math is
// runtime/kernels/KernelMath.h, shared with the CPU loops. Reductions run in
// a fixed order (one thread, or a fixed block tree, per output), so results
// do not vary from run to run. The kernels and launchers are defined in one
// Own<Family>.cu file per op family (activations, elementwise,
// normalization, pooling, loss, optimizers, tensor ops), beside the
// Cuda<Family>.cpp files that call them.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_OWNKERNELS_H
#define DPC_RUNTIME_CUDA_OWNKERNELS_H

#include "runtime/abi/shapes/LossShapes.h"
#include "runtime/kernels/BatchNorm.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Embedding.h"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/LayerNorm.h"
#include "runtime/kernels/Optimizer.h"
#include "runtime/kernels/Pool.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace dpc::cuda {

enum class Activation { Relu, Sigmoid, Tanh, Reciprocal };

/// How a scalar result is stored (the plan's DType numbering).
enum class ScalarType { F32 = 0, F64 = 1, I32 = 4, I64 = 5 };

void activationForward(cudaStream_t stream, Activation kind, int64_t size,
                       const float *x, float *y);
void activationBackward(cudaStream_t stream, Activation kind, int64_t size,
                        const float *y, const float *dy, float *dx);
/// The activations whose backward reads x (KernelMath.h's bodies).
void inputActivationForward(cudaStream_t stream,
                            kernels::math::InputActivation kind,
                            kernels::math::ActivationParams params,
                            int64_t size, const float *x, float *y);
void inputActivationBackward(cudaStream_t stream,
                             kernels::math::InputActivation kind,
                             kernels::math::ActivationParams params,
                             int64_t size, const float *x, const float *dy,
                             float *dx);

/// Dropout forward (x) or backward (dy) over rows of `cols` from global row
/// `firstRow` (KernelElements.h's body).
void dropout(cudaStream_t stream, const kernels::math::DropoutMask &mask,
             int64_t rows, int64_t cols, int64_t firstRow, const float *x,
             float *y);

/// Layer norm (KernelElements.h's bodies); `stats` is `rows` entries of
/// device scratch, `bias` and `dBias` may be null.
void layerNormForward(cudaStream_t stream, const kernels::LayerNormShape &s,
                      const float *x, const float *scale, const float *bias,
                      float *y);
void layerNormBackward(cudaStream_t stream, const kernels::LayerNormShape &s,
                       const float *x, const float *dy, const float *scale,
                       kernels::elements::RowStats *stats, float *dx,
                       float *dScale, float *dBias);

/// Embedding lookups and their table gradient (zeroed first).
void embeddingForward(cudaStream_t stream, const kernels::EmbeddingShape &s,
                      const float *table, const int32_t *indices, float *y);
void embeddingBackward(cudaStream_t stream, const kernels::EmbeddingShape &s,
                       const int32_t *indices, const float *dy, float *dTable);

void addForward(cudaStream_t stream, const kernels::BroadcastShape &shape,
                const float *lhs, const float *rhs, float *out);
void addBackward(cudaStream_t stream, const kernels::BroadcastShape &shape,
                 const float *dOut, float *dLhs, float *dRhs);
/// relu(lhs + rhs), and its backward relu'(y) * (a + b), each in one pass.
void addReluForward(cudaStream_t stream, const kernels::BroadcastShape &shape,
                    const float *lhs, const float *rhs, float *out);
void addReluBackward(cudaStream_t stream, int64_t size, const float *a,
                     const float *b, const float *y, float *dx);
void mulForward(cudaStream_t stream, const kernels::BroadcastShape &shape,
                const float *lhs, const float *rhs, float *out);
void mulBackward(cudaStream_t stream, const kernels::BroadcastShape &shape,
                 const float *lhs, const float *rhs, const float *dOut,
                 float *dLhs, float *dRhs);
/// torch.maximum (minimum) and its backward (KernelMath.h's extremum*).
void extremumForward(cudaStream_t stream, bool minimum,
                     const kernels::BroadcastShape &shape, const float *lhs,
                     const float *rhs, float *out);
void extremumBackward(cudaStream_t stream, bool minimum,
                      const kernels::BroadcastShape &shape, const float *lhs,
                      const float *rhs, const float *dOut, float *dLhs,
                      float *dRhs);

void pad2dForward(cudaStream_t stream, const kernels::Pad2dShape &shape,
                  float value, const float *x, float *y);
void pad2dBackward(cudaStream_t stream, const kernels::Pad2dShape &shape,
                   const float *dy, float *dx);

void maxPool2dForward(cudaStream_t stream, const kernels::Pool2dShape &shape,
                      const float *x, float *y);
void maxPool2dBackward(cudaStream_t stream, const kernels::Pool2dShape &shape,
                       const float *x, const float *dy, float *dx);
void avgPool2dForward(cudaStream_t stream, const kernels::Pool2dShape &shape,
                      const float *x, float *y);
void avgPool2dBackward(cudaStream_t stream, const kernels::Pool2dShape &shape,
                       const float *dy, float *dx);
void globalAvgPool2dForward(cudaStream_t stream, int64_t planes,
                            int64_t planeSize, const float *x, float *y);
void globalAvgPool2dBackward(cudaStream_t stream, int64_t planes,
                             int64_t planeSize, const float *dy, float *dx);

void softmaxForward(cudaStream_t stream, int64_t rows, int64_t cols,
                    const float *x, float *y);
void softmaxBackward(cudaStream_t stream, int64_t rows, int64_t cols,
                     const float *y, const float *dy, float *dx);
void logSoftmaxForward(cudaStream_t stream, int64_t rows, int64_t cols,
                       const float *x, float *y);
void logSoftmaxBackward(cudaStream_t stream, int64_t rows, int64_t cols,
                        const float *y, const float *dy, float *dx);

/// loss = -sum over rows of log_softmax(row)[label] / divisor; `correct`
/// (may be null) gets the number of rows whose first maximum is the label.
/// A label outside the classes makes the loss NaN (it is never read).
void crossEntropyForward(cudaStream_t stream, int64_t rows, int64_t classes,
                         const float *logits, const int32_t *labels,
                         float divisor, float *loss, void *correct,
                         ScalarType correctType);
/// `dLoss` may be null (1).
void crossEntropyBackward(cudaStream_t stream, int64_t rows, int64_t classes,
                          const float *logits, const int32_t *labels,
                          const float *dLoss, float divisor, float *dLogits);
void correctCount(cudaStream_t stream, int64_t rows, int64_t classes,
                  const float *logits, const int32_t *labels, void *count,
                  ScalarType countType);

/// `lr` is the device scalar the plan feeds. An update that writes NaN or
/// infinity (into the parameter or its state) sets `*nonFinite` to 1 when
/// given: page-locked host memory, which the kernel writes directly
/// (unified addressing), so that the trainer's check reads one flag.
void sgdUpdate(cudaStream_t stream, int64_t size,
               const kernels::SgdParams &params, const float *lr, int64_t step,
               float *param, const float *grad, float *momentumBuffer,
               unsigned *nonFinite);
/// `step` is the plan's device i64 step count.
void adamwUpdate(cudaStream_t stream, int64_t size,
                 const kernels::AdamWParams &params, const float *lr,
                 const int64_t *step, float *param, const float *grad,
                 float *expAvg, float *expAvgSq, unsigned *nonFinite);

/// `count` elements of `type` set to `value`.
void fill(cudaStream_t stream, int64_t count, ScalarType type, double value,
          void *y);
void accumulate(cudaStream_t stream, int64_t size, const float *x, float *y);
/// bfloat16 copies (round to nearest even, as oneDNN's reorders on the
/// CPU) of f32 tensors, and back: what a bf16 convolution gives cuDNN.
void castToBf16(cudaStream_t stream, int64_t size, const float *x, uint16_t *y);
void castFromBf16(cudaStream_t stream, int64_t size, const uint16_t *x,
                  float *y);
/// y[o] = x[permuteSource(index, o)] for the `size` outputs (4-byte
/// elements): any permutation of up to 8 dims.
void permute(cudaStream_t stream, const kernels::elements::PermuteIndex &index,
             int64_t size, const uint32_t *x, uint32_t *y);
void transpose2d(cudaStream_t stream, int64_t rows, int64_t cols,
                 const uint32_t *x, uint32_t *y);
/// y = x summed over the dims with reduced[d] (rank <= 8).
void reduceSum(cudaStream_t stream, int rank, const int64_t *dims,
               const bool *reduced, const float *x, float *y);
/// torch.amax (amin) over the reduced dims, and the backward of either.
void reduceExtremum(cudaStream_t stream, bool minimum, int rank,
                    const int64_t *dims, const bool *reduced, const float *x,
                    float *y);
void reduceExtremumBackward(cudaStream_t stream, int rank, const int64_t *dims,
                            const bool *reduced, const float *x, const float *y,
                            const float *dy, float *dx);
/// x /= divisor elementwise (the Mean of an all-reduce).
void divide(cudaStream_t stream, int64_t count, ScalarType type, int divisor,
            void *x);

/// y[r, :] += bias (linear layers; y [rows, cols]).
void addRowBias(cudaStream_t stream, int64_t rows, int64_t cols,
                const float *bias, float *y);
/// sums[c] = sum over rows of x[r, c].
void columnSums(cudaStream_t stream, int64_t rows, int64_t cols, const float *x,
                float *sums);

// Batch normalization: the CPU's semantics (runtime/kernels/BatchNorm.h).
void batchNormTrainingForward(cudaStream_t stream,
                              const kernels::BatchNormShape &shape,
                              const kernels::BatchNormParams &params,
                              const float *x, const float *scale,
                              const float *shift, float *y, float *saveMean,
                              float *saveInvStd, float *runningMean,
                              float *runningVar);
void batchNormInferenceForward(cudaStream_t stream,
                               const kernels::BatchNormShape &shape,
                               const kernels::BatchNormParams &params,
                               const float *x, const float *scale,
                               const float *shift, const float *runningMean,
                               const float *runningVar, float *y);
void batchNormBackward(cudaStream_t stream,
                       const kernels::BatchNormShape &shape, const float *x,
                       const float *dy, const float *scale,
                       const float *saveMean, const float *saveInvStd,
                       float *dx, float *dScale, float *dShift);
void batchNormStatistics(cudaStream_t stream,
                         const kernels::BatchNormShape &shape, const float *x,
                         double *sum, double *sumSq, double *count);
void batchNormApply(cudaStream_t stream, const kernels::BatchNormShape &shape,
                    const kernels::BatchNormParams &params, const float *x,
                    const float *scale, const float *shift, float *runningMean,
                    float *runningVar, const double *sum, const double *sumSq,
                    const double *count, float *y, float *saveMean,
                    float *saveInvStd);
void batchNormGradStatistics(cudaStream_t stream,
                             const kernels::BatchNormShape &shape,
                             const float *x, const float *dy,
                             const float *saveMean, const float *saveInvStd,
                             float *sumDy, float *sumDyXhat);
void batchNormGradApply(cudaStream_t stream,
                        const kernels::BatchNormShape &shape, const float *x,
                        const float *dy, const float *scale,
                        const float *saveMean, const float *saveInvStd,
                        const float *sumDy, const float *sumDyXhat,
                        const double *count, float *dx);

/// nn.loss's kernels over a LossShape (runtime/kernels/LossMath.h has the
/// formulas, the CPU's). Scalars (divisor, dLoss) are device pointers,
/// null for their defaults: the shape's count divisor, and 1. The sums run
/// in one thread, in the CPU's order. A class target that is not a class
/// counts for nothing (the executor refuses it when it is bound).

void lossForward(cudaStream_t stream, const plan::LossShape &s,
                 const float *output, const void *target, const float *divisor,
                 float *loss);
void lossBackward(cudaStream_t stream, const plan::LossShape &s,
                  const float *output, const void *target, const float *dLoss,
                  const float *divisor, float *dOutput);
void lossWeight(cudaStream_t stream, const plan::LossShape &s,
                const int32_t *targets, float *weight);
void lossCorrectCount(cudaStream_t stream, const plan::LossShape &s,
                      const float *logits, const int32_t *targets, void *count,
                      ScalarType countType);

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_OWNKERNELS_H
