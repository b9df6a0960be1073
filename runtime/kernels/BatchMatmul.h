//===- BatchMatmul.h - Matrix products per leading index --------*- C++ -*-===//
//
// c[i] = op(a[i]) · op(b[i]) for each of `batch` leading indices (attention's
// scores and weighted values, torch.matmul of two batched operands), plain
// row-major, op a transpose of an operand's last two dims where flagged (a
// strided read: no copy is made). Runs on oneDNN's matmul.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_BATCHMATMUL_H
#define DPC_RUNTIME_KERNELS_BATCHMATMUL_H

#include "runtime/abi/shapes/LinearShapes.h"
#include "runtime/kernels/KernelContext.h"

#include <cstdint>

namespace dpc::kernels {

using plan::BatchMatmulShape;

/// Overwrites c [batch, m, n].
void batchMatmul(KernelContext &ctx, const BatchMatmulShape &shape,
                 const float *a, const float *b, float *c);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_BATCHMATMUL_H
