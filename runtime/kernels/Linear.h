//===- Linear.h - Fully connected and matrix-multiply kernels ---*- C++ -*-===//
//
// linear: y[n, out] = x[n, in] · W[out, in]ᵀ + b[out]   (torch.nn.Linear)
// matmul: c[n, m] = a[n, k] · b[k, m]
// Both run on oneDNN (inner_product and matmul), plain row-major.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_LINEAR_H
#define DPC_RUNTIME_KERNELS_LINEAR_H

#include "runtime/abi/shapes/LinearShapes.h"
#include "runtime/kernels/KernelContext.h"

#include <cstdint>

namespace dpc::kernels {

// The shapes of a call, and what it computes in, are the ABI's
// (runtime/abi/shapes/LinearShapes.h).
using plan::CastSlot;
using plan::LinearShape;
using plan::MatmulShape;
using plan::Precision;

/// `bias` may be null; `relu` applies a ReLU as y is written (oneDNN's
/// post-op: one pass over y).
void linearForward(KernelContext &ctx, const LinearShape &shape, const float *x,
                   const float *weights, const float *bias, float *y,
                   bool relu = false);
/// dx = dy · W (overwrites dx).
void linearBackwardData(KernelContext &ctx, const LinearShape &shape,
                        const float *dy, const float *weights, float *dx);
/// dW = dyᵀ · x and, when non-null, dBias = column sums of dy (overwrite).
void linearBackwardWeights(KernelContext &ctx, const LinearShape &shape,
                           const float *x, const float *dy, float *dWeights,
                           float *dBias);

void matmulForward(KernelContext &ctx, const MatmulShape &shape, const float *a,
                   const float *b, float *c);
/// da = dc · bᵀ and db = aᵀ · dc; either output may be null to skip it.
void matmulBackward(KernelContext &ctx, const MatmulShape &shape,
                    const float *a, const float *b, const float *dc, float *da,
                    float *db);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_LINEAR_H
