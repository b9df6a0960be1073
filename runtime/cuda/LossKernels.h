//===- LossKernels.h - nn.loss's CUDA kernels -------------------*- C++ -*-===//
//
// The losses of a LossShape on a stream (runtime/kernels/LossMath.h has
// the formulas, the CPU's). Scalars (divisor, dLoss) are device pointers,
// null for their defaults: the shape's count divisor, and 1. The sums run
// in one thread, in the CPU's order. A class target that is not a class
// counts for nothing (the executor refuses it when it is bound).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_LOSSKERNELS_H
#define DPC_RUNTIME_CUDA_LOSSKERNELS_H

#include "runtime/abi/shapes/LossShapes.h"
#include "runtime/cuda/OwnKernels.h"

#include <cuda_runtime_api.h>

namespace dpc::cuda {

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

#endif // DPC_RUNTIME_CUDA_LOSSKERNELS_H
