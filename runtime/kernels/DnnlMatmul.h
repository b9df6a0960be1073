//===- DnnlMatmul.h - oneDNN matmul over plain row-major data ---*- C++ -*-===//
//
// The one place the kernels describe a oneDNN matmul: the linear layers'
// products (Linear.cpp) and the batched ones (BatchMatmul.cpp). Private to
// the kernel sources, like DnnlSupport.h.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_DNNLMATMUL_H
#define DPC_RUNTIME_KERNELS_DNNLMATMUL_H

#include "runtime/kernels/DnnlSupport.h"

#include <cstdint>

namespace dpc::kernels {

/// One product per leading index: c[i][rows, cols] = op(a[i])[rows, inner]
/// · op(b[i])[inner, cols] for i < batch, where a transposed flag means the
/// buffer holds the operand's transpose row-major (a strided view: no copy
/// is made). batch 1 is a plain 2-D product. In bf16 the operands are read
/// as bf16 copies and c stays f32.
struct MatmulProblem {
  int64_t batch = 1, rows = 0, inner = 0, cols = 0;
  bool aTransposed = false, bTransposed = false;
  Precision precision = Precision::F32;
};

/// Runs `p` on the context's stream through its call site's bound
/// primitive (DnnlSupport.h); overwrites c.
void runDnnlMatmul(KernelContext::Impl &ctx, const MatmulProblem &p,
                   const float *a, const float *b, float *c);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_DNNLMATMUL_H
