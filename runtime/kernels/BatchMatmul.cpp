//===- BatchMatmul.cpp - Matrix products per leading index ----------------===//

#include "runtime/kernels/BatchMatmul.h"
#include "runtime/kernels/DnnlMatmul.h"

#include <stdexcept>

namespace dpc::kernels {

void batchMatmul(KernelContext &context, const BatchMatmulShape &s,
                 const float *a, const float *b, float *c) {
  if (s.batch <= 0 || s.m <= 0 || s.k <= 0 || s.n <= 0)
    throw std::invalid_argument("batch matmul: invalid shape");
  ReductionThreadsScope threads(context);
  MatmulProblem p;
  p.batch = s.batch, p.rows = s.m, p.inner = s.k, p.cols = s.n;
  p.aTransposed = s.transposeA, p.bTransposed = s.transposeB;
  runDnnlMatmul(context.getImpl(), p, a, b, c);
}

} // namespace dpc::kernels
