//===- LinearShapes.h - linear layers and matrix products -------*- C++ -*-===//
//
// linear: y[n, out] = x[n, in] . W[out, in]^T + b[out]; matmul: c[n, m] =
// a[n, k] . b[k, m]; batch matmul: per leading index, op(a) [m, k] .
// op(b) [k, n]. A leading batch dim counts rows: x [n, c, h, w] feeding a
// linear layer flattens the rest.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_SHAPES_LINEARSHAPES_H
#define DPC_RUNTIME_ABI_SHAPES_LINEARSHAPES_H

#include "runtime/abi/Precision.h"
#include "runtime/abi/shapes/ShapeTypes.h"

#include <cstdint>

namespace dpc::plan {

struct LinearShape {
  int64_t n;   // rows (batch)
  int64_t in;  // input features
  int64_t out; // output features
  Precision precision = Precision::F32;
  /// Where x's bf16 copy is shared with other calls (bf16 only).
  CastSlot xCast = {};
};

struct MatmulShape {
  int64_t n, k, m; // a [n, k], b [k, m], c [n, m]
  Precision precision = Precision::F32;
};

struct BatchMatmulShape {
  int64_t batch;   // product of the leading dims
  int64_t m, k, n; // op(a) [m, k], op(b) [k, n], c [m, n] per index
  bool transposeA = false, transposeB = false;
};

/// LinearForward, LinearReluForward, LinearBackwardData/Weights.
LinearShape getLinearShape(const KernelCall &call);
/// MatmulForward, MatmulBackward, MatmulTransposedA.
MatmulShape getMatmulShape(const KernelCall &call);
/// BatchMatmul: A, B and C of one rank >= 3 with equal leading dims.
BatchMatmulShape getBatchMatmulShape(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_LINEARSHAPES_H
