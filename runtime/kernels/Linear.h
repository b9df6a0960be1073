//===- Linear.h - Fully connected and matrix-multiply kernels ---*- C++ -*-===//
//
// linear: y[n, out] = x[n, in] · W[out, in]ᵀ + b[out]   (torch.nn.Linear)
// matmul: c[n, m] = a[n, k] · b[k, m]
// Both run on oneDNN (inner_product and matmul), plain row-major.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_LINEAR_H
#define DPC_RUNTIME_KERNELS_LINEAR_H

#include "runtime/kernels/KernelContext.h"
#include "runtime/kernels/Precision.h"

#include <cstdint>

namespace dpc::kernels {

struct LinearShape {
  int64_t n;   // rows (batch)
  int64_t in;  // input features
  int64_t out; // output features
  Precision precision = Precision::F32;
  /// Where x's bf16 copy is shared with other calls (bf16 only).
  CastSlot xCast = {};
};

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

struct MatmulShape {
  int64_t n, k, m; // a [n, k], b [k, m], c [n, m]
  Precision precision = Precision::F32;
};

void matmulForward(KernelContext &ctx, const MatmulShape &shape, const float *a,
                   const float *b, float *c);
/// da = dc · bᵀ and db = aᵀ · dc; either output may be null to skip it.
void matmulBackward(KernelContext &ctx, const MatmulShape &shape,
                    const float *a, const float *b, const float *dc, float *da,
                    float *db);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_LINEAR_H
