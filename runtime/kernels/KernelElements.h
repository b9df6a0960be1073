//===- KernelElements.h - one output element of a kernel -------*- C++ -*-===//
//
// The body of each index-heavy kernel for one output element, as host/device
// functions: the CUDA kernels (runtime/cuda/OwnKernels.cu) call them per
// thread, the CPU kernels where they share the loop (the broadcast
// reduction, the pooling forwards), and a CPU test
// (runtime/cuda/test/KernelElementsTest.cpp, built with or without CUDA)
// calls them for every element and compares with the CPU kernels -- bit for
// bit where the CPU sums in the same order. No CUDA header here.
//
// Where the CPU scatter-adds (pooling backward), these gather: input
// element i visits the outputs whose window reads it, in the CPU's
// row-major order, so that the float sums round alike.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_KERNELELEMENTS_H
#define DPC_RUNTIME_KERNELS_KERNELELEMENTS_H

#include "runtime/abi/shapes/NormShapes.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Pool.h"

#include <cmath>
#include <cstdint>

namespace dpc::kernels::elements {

//===----------------------------------------------------------------------===//
// Broadcasting binary ops
//===----------------------------------------------------------------------===//

/// The rhs element that output element i reads.
DPC_HOST_DEVICE inline int64_t rhsIndexOf(const BroadcastShape &s, int64_t i) {
  int64_t idx[4];
  for (int d = 3; d >= 0; --d) {
    idx[d] = i % s.out[d];
    i /= s.out[d];
  }
  int64_t j = 0;
  for (int d = 0; d < 4; ++d)
    j = j * s.rhs[d] + (s.rhs[d] == 1 ? 0 : idx[d]);
  return j;
}

/// The sum of term(i) over the output elements i that read rhs element j,
/// in double, in row-major order.
template <typename Term>
DPC_HOST_DEVICE inline float sumOverReaders(const BroadcastShape &s, int64_t j,
                                            const Term &term) {
  const int64_t *o = s.out, *r = s.rhs;
  int64_t idx[4], rem = j;
  for (int d = 3; d >= 0; --d) {
    idx[d] = rem % r[d];
    rem /= r[d];
  }
  int64_t lo[4], hi[4];
  for (int d = 0; d < 4; ++d) {
    bool broadcast = r[d] == 1 && o[d] != 1;
    lo[d] = broadcast ? 0 : idx[d];
    hi[d] = broadcast ? o[d] : idx[d] + 1;
  }
  double sum = 0.0;
  for (int64_t a = lo[0]; a < hi[0]; ++a)
    for (int64_t b = lo[1]; b < hi[1]; ++b)
      for (int64_t c = lo[2]; c < hi[2]; ++c)
        for (int64_t d = lo[3]; d < hi[3]; ++d)
          sum += term(((a * o[1] + b) * o[2] + c) * o[3] + d);
  return static_cast<float>(sum);
}

/// dOut[i], times lhs[i] when given: Add's and Mul's gradient terms.
struct ProductTerm {
  const float *dOut, *lhs;
  DPC_HOST_DEVICE double operator()(int64_t i) const {
    return lhs ? static_cast<double>(dOut[i]) * lhs[i] : dOut[i];
  }
};

/// dRhs[j]: the sum of dOut (times lhs, when given) over the outputs that
/// read rhs element j, in double, in row-major order.
DPC_HOST_DEVICE inline float reduceToRhs(const BroadcastShape &s, int64_t j,
                                         const float *dOut, const float *lhs) {
  return sumOverReaders(s, j, ProductTerm{dOut, lhs});
}

/// The share of dOut[i] that rhs element `rhs` gets from maximum (minimum)
/// against lhs[i].
struct ExtremumTerm {
  bool minimum;
  float rhs;
  const float *dOut, *lhs;
  DPC_HOST_DEVICE double operator()(int64_t i) const {
    return dOut[i] * math::extremumShare(minimum, rhs, lhs[i]);
  }
};

/// dRhs[j] of maximum (minimum): rhs[j]'s shares of the outputs reading it.
DPC_HOST_DEVICE inline float extremumToRhs(bool minimum,
                                           const BroadcastShape &s, int64_t j,
                                           const float *lhs, const float *rhs,
                                           const float *dOut) {
  return sumOverReaders(s, j, ExtremumTerm{minimum, rhs[j], dOut, lhs});
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// Element i of dropout over rows of `cols` elements from global row
/// `firstRow` (the CPU draws once per four draws; this draws per element
/// and picks its word).
DPC_HOST_DEVICE inline float dropout(const math::DropoutMask &m, int64_t cols,
                                     int64_t firstRow, int64_t i,
                                     const float *x) {
  uint32_t word = math::dropoutDraw(m, firstRow + i / cols, i % cols);
  return math::dropoutApply(m, word, x[i]);
}

//===----------------------------------------------------------------------===//
// Layer normalization: rows of `cols` elements, each normalized on its own.
// Sums are in double; the statistics are rounded to float once, and the
// forward and the backward use the same rounded values.
//===----------------------------------------------------------------------===//

// A row's statistics, as LayerNormBackward's workspace holds them
// (runtime/abi/shapes/NormShapes.h).
using plan::RowStats;

DPC_HOST_DEVICE inline RowStats layerNormStats(const float *row, int64_t cols,
                                               double epsilon) {
  double sum = 0;
  for (int64_t c = 0; c < cols; ++c)
    sum += row[c];
  double mean = sum / double(cols), squares = 0;
  for (int64_t c = 0; c < cols; ++c) {
    double d = row[c] - mean;
    squares += d * d;
  }
  return {float(mean), float(1.0 / sqrt(squares / double(cols) + epsilon))};
}

DPC_HOST_DEVICE inline float layerNormForward(float x, RowStats s, float scale,
                                              float bias) {
  return (x - s.mean) * s.invStd * scale + bias;
}

/// One row's dx: invstd (g - mean(g) - xhat mean(g xhat)), g = dy scale.
DPC_HOST_DEVICE inline void
layerNormBackwardRow(const float *x, const float *dy, const float *scale,
                     int64_t cols, RowStats s, float *dx) {
  double sumG = 0, sumGXhat = 0;
  for (int64_t c = 0; c < cols; ++c) {
    double g = double(dy[c]) * scale[c];
    sumG += g;
    sumGXhat += g * ((x[c] - s.mean) * s.invStd);
  }
  float meanG = float(sumG / double(cols));
  float meanGXhat = float(sumGXhat / double(cols));
  for (int64_t c = 0; c < cols; ++c) {
    float xhat = (x[c] - s.mean) * s.invStd;
    dx[c] = s.invStd * (dy[c] * scale[c] - meanG - xhat * meanGXhat);
  }
}

/// Column c's scale and bias gradients: dy xhat and dy summed over the rows.
DPC_HOST_DEVICE inline void layerNormParamGrads(const float *x, const float *dy,
                                                const RowStats *stats,
                                                int64_t rows, int64_t cols,
                                                int64_t c, float *dScale,
                                                float *dBias) {
  double sumScale = 0, sumBias = 0;
  for (int64_t r = 0; r < rows; ++r) {
    float xhat = (x[r * cols + c] - stats[r].mean) * stats[r].invStd;
    sumScale += double(dy[r * cols + c]) * xhat;
    sumBias += dy[r * cols + c];
  }
  dScale[c] = float(sumScale);
  if (dBias)
    dBias[c] = float(sumBias);
}

//===----------------------------------------------------------------------===//
// Embedding: `count` indices into a table of rows of `dim` floats
//===----------------------------------------------------------------------===//

/// Column d of the table's gradient: every index's row of dy added in index
/// order (the table starts at zero), so the sums never depend on threads.
DPC_HOST_DEVICE inline void embeddingGradColumn(const int32_t *indices,
                                                int64_t count, int64_t dim,
                                                int64_t d, const float *dy,
                                                float *dTable) {
  for (int64_t i = 0; i < count; ++i)
    dTable[int64_t(indices[i]) * dim + d] += dy[i * dim + d];
}

//===----------------------------------------------------------------------===//
// Padding
//===----------------------------------------------------------------------===//

/// y[i] of the padded [n, c, outH, outW].
DPC_HOST_DEVICE inline float padForward(const Pad2dShape &s, float value,
                                        int64_t i, const float *x) {
  int64_t oh = s.outH(), ow = s.outW();
  int64_t j = i % ow, row = i / ow, p = row / oh;
  int64_t ih = row % oh - s.padTop, iw = j - s.padLeft;
  return ih >= 0 && ih < s.h && iw >= 0 && iw < s.w
             ? x[(p * s.h + ih) * s.w + iw]
             : value;
}

/// dx[i] of [n, c, h, w]: the interior of dy.
DPC_HOST_DEVICE inline float padBackward(const Pad2dShape &s, int64_t i,
                                         const float *dy) {
  int64_t oh = s.outH(), ow = s.outW();
  int64_t iw = i % s.w, row = i / s.w, ih = row % s.h, p = row / s.h;
  return dy[(p * oh + ih + s.padTop) * ow + iw + s.padLeft];
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// The outputs along one axis whose window reads input `in` through some
/// tap (out * stride - pad + k * dilation == in), in increasing order. At
/// most kMaxTaps: launchers reject larger windows.
constexpr int kMaxTaps = 16;
struct Taps {
  int64_t out[kMaxTaps];
  int count;
};
DPC_HOST_DEVICE inline Taps tapsOf(int64_t in, int64_t kernel, int64_t stride,
                                   int64_t pad, int64_t dilation,
                                   int64_t outSize) {
  Taps taps;
  taps.count = 0;
  for (int64_t k = kernel - 1; k >= 0 && taps.count < kMaxTaps; --k) {
    int64_t t = in + pad - k * dilation;
    if (t >= 0 && t % stride == 0 && t / stride < outSize)
      taps.out[taps.count++] = t / stride;
  }
  return taps;
}

DPC_HOST_DEVICE inline int64_t
maxIndexOf(const Pool2dShape &s, const float *plane, int64_t oh, int64_t ow) {
  return math::maxPoolWindowArgMax(plane, s.h, s.w, oh, ow, s.kernelH,
                                   s.kernelW, s.strideH, s.strideW, s.padTop,
                                   s.padLeft, s.dilationH, s.dilationW);
}

/// y[i] of [n, c, outH, outW].
DPC_HOST_DEVICE inline float maxPoolForward(const Pool2dShape &s, int64_t i,
                                            const float *x) {
  int64_t oh = s.outH(), ow = s.outW();
  int64_t p = i / (oh * ow), r = i % (oh * ow);
  const float *plane = x + p * s.h * s.w;
  int64_t idx = maxIndexOf(s, plane, r / ow, r % ow);
  return idx < 0 ? -INFINITY : plane[idx];
}

/// dx[i] of [n, c, h, w]: the dy of every window whose first maximum is i.
DPC_HOST_DEVICE inline float maxPoolBackward(const Pool2dShape &s, int64_t i,
                                             const float *x, const float *dy) {
  int64_t oh = s.outH(), ow = s.outW();
  int64_t p = i / (s.h * s.w), pos = i % (s.h * s.w);
  const float *plane = x + p * s.h * s.w;
  const float *dOut = dy + p * oh * ow;
  Taps rows =
      tapsOf(pos / s.w, s.kernelH, s.strideH, s.padTop, s.dilationH, oh);
  Taps cols =
      tapsOf(pos % s.w, s.kernelW, s.strideW, s.padLeft, s.dilationW, ow);
  float sum = 0.f;
  for (int a = 0; a < rows.count; ++a)
    for (int b = 0; b < cols.count; ++b)
      if (maxIndexOf(s, plane, rows.out[a], cols.out[b]) == pos)
        sum += dOut[rows.out[a] * ow + cols.out[b]];
  return sum;
}

/// The mean of the window rows `wh` x columns `ww` of one [h, w] plane.
DPC_HOST_DEVICE inline float avgPoolMean(const float *plane, int64_t w,
                                         const math::AvgWindow &wh,
                                         const math::AvgWindow &ww) {
  float sum = 0.f;
  for (int64_t ih = wh.begin; ih < wh.end; ++ih)
    for (int64_t iw = ww.begin; iw < ww.end; ++iw)
      sum += plane[ih * w + iw];
  int64_t divisor = wh.count * ww.count;
  return divisor > 0 ? sum / static_cast<float>(divisor) : 0.f;
}

DPC_HOST_DEVICE inline math::AvgWindow avgPoolRows(const Pool2dShape &s,
                                                   int64_t oh) {
  return math::avgPoolWindow(oh, s.h, s.kernelH, s.strideH, s.padTop,
                             s.padBottom, s.countIncludePad);
}
DPC_HOST_DEVICE inline math::AvgWindow avgPoolCols(const Pool2dShape &s,
                                                   int64_t ow) {
  return math::avgPoolWindow(ow, s.w, s.kernelW, s.strideW, s.padLeft,
                             s.padRight, s.countIncludePad);
}

/// y[i] of [n, c, outH, outW] (dilation 1).
DPC_HOST_DEVICE inline float avgPoolForward(const Pool2dShape &s, int64_t i,
                                            const float *x) {
  int64_t oh = s.outH(), ow = s.outW();
  int64_t p = i / (oh * ow), r = i % (oh * ow);
  return avgPoolMean(x + p * s.h * s.w, s.w, avgPoolRows(s, r / ow),
                     avgPoolCols(s, r % ow));
}

/// dx[i] of [n, c, h, w]: dy / divisor of every window that covers i.
DPC_HOST_DEVICE inline float avgPoolBackward(const Pool2dShape &s, int64_t i,
                                             const float *dy) {
  int64_t oh = s.outH(), ow = s.outW();
  int64_t p = i / (s.h * s.w), pos = i % (s.h * s.w);
  int64_t ih = pos / s.w, iw = pos % s.w;
  const float *dOut = dy + p * oh * ow;
  // Windows start at out * stride - pad and span kernel: the candidates.
  int64_t rowLo =
      math::maxI64(0, math::floorDiv(ih + s.padTop - s.kernelH, s.strideH) + 1);
  int64_t rowHi =
      math::minI64(oh - 1, math::floorDiv(ih + s.padTop, s.strideH));
  int64_t colLo = math::maxI64(
      0, math::floorDiv(iw + s.padLeft - s.kernelW, s.strideW) + 1);
  int64_t colHi =
      math::minI64(ow - 1, math::floorDiv(iw + s.padLeft, s.strideW));
  float sum = 0.f;
  for (int64_t a = rowLo; a <= rowHi; ++a) {
    auto wh = math::avgPoolWindow(a, s.h, s.kernelH, s.strideH, s.padTop,
                                  s.padBottom, s.countIncludePad);
    if (ih < wh.begin || ih >= wh.end)
      continue;
    for (int64_t b = colLo; b <= colHi; ++b) {
      auto ww = math::avgPoolWindow(b, s.w, s.kernelW, s.strideW, s.padLeft,
                                    s.padRight, s.countIncludePad);
      int64_t divisor = wh.count * ww.count;
      if (iw < ww.begin || iw >= ww.end || divisor == 0)
        continue;
      sum += dOut[a * ow + b] / static_cast<float>(divisor);
    }
  }
  return sum;
}

/// y[p] = the mean of plane p (of `size` elements), summed in double.
DPC_HOST_DEVICE inline float globalAvgPoolForward(int64_t p, int64_t size,
                                                  const float *x) {
  double sum = 0.0;
  for (int64_t j = 0; j < size; ++j)
    sum += x[p * size + j];
  return static_cast<float>(sum / size);
}

//===----------------------------------------------------------------------===//
// ReduceSum
//===----------------------------------------------------------------------===//

/// A permutation of dims (transpose): for output element `o`, the flat index
/// of the input element it copies. Up to 8 dims.
struct PermuteIndex {
  int rank;
  int64_t outDims[8];
  int64_t inStrides[8]; // the input stride of each output dim
};

/// Host side: `rank` <= 8 and `perm` a permutation (the caller checks);
/// output dim i is input dim perm[i].
inline PermuteIndex makePermuteIndex(int rank, const int64_t *inDims,
                                     const int64_t *perm) {
  PermuteIndex p{};
  p.rank = rank;
  int64_t strides[8], stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= inDims[d];
  }
  for (int i = 0; i < rank; ++i) {
    p.outDims[i] = inDims[perm[i]];
    p.inStrides[i] = strides[perm[i]];
  }
  return p;
}

DPC_HOST_DEVICE inline int64_t permuteSource(const PermuteIndex &p, int64_t o) {
  int64_t source = 0;
  for (int i = p.rank - 1; i >= 0; --i) {
    source += (o % p.outDims[i]) * p.inStrides[i];
    o /= p.outDims[i];
  }
  return source;
}

/// x's dims split into kept and reduced index spaces, with their strides;
/// adjacent dims of the same kind merged (fewer, longer loops; the same
/// row-major order).
struct ReduceIndex {
  int keptRank, redRank;
  int64_t keptDims[8], keptStrides[8], redDims[8], redStrides[8];
  int64_t kept, reduced;
};

/// Host side: `rank` <= 8 (the caller checks).
inline ReduceIndex makeReduceIndex(int rank, const int64_t *dims,
                                   const bool *reduced) {
  ReduceIndex r{};
  r.kept = r.reduced = 1;
  int64_t strides[8], stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= dims[d];
  }
  for (int d = 0; d < rank; ++d) {
    bool red = reduced[d];
    int &count = red ? r.redRank : r.keptRank;
    int64_t *space = red ? r.redDims : r.keptDims;
    int64_t *spaceStrides = red ? r.redStrides : r.keptStrides;
    (red ? r.reduced : r.kept) *= dims[d];
    if (d > 0 && reduced[d - 1] == red) { // row-major: strides nest
      space[count - 1] *= dims[d];
      spaceStrides[count - 1] = strides[d];
      continue;
    }
    space[count] = dims[d];
    spaceStrides[count++] = strides[d];
  }
  return r;
}

DPC_HOST_DEVICE inline int64_t offsetOf(int64_t linear, int rank,
                                        const int64_t *dims,
                                        const int64_t *strides) {
  int64_t offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    offset += linear % dims[d] * strides[d];
    linear /= dims[d];
  }
  return offset;
}

/// y[o]: the sum over the reduced dims, in double, in row-major order.
DPC_HOST_DEVICE inline float reduceSum(const ReduceIndex &r, int64_t o,
                                       const float *x) {
  int64_t offset = offsetOf(o, r.keptRank, r.keptDims, r.keptStrides);
  if (r.reduced == 0)
    return 0.f;
  if (r.redRank == 0)
    return x[offset];
  // The innermost reduced dim in a loop, the outer ones as an odometer: no
  // division per element.
  int inner = r.redRank - 1;
  int64_t length = r.redDims[inner], step = r.redStrides[inner];
  int64_t index[8] = {};
  double sum = 0.0;
  for (int64_t outer = r.reduced / length; outer > 0; --outer) {
    for (int64_t k = 0; k < length; ++k)
      sum += x[offset + k * step];
    for (int d = inner - 1; d >= 0; --d) {
      offset += r.redStrides[d];
      if (++index[d] < r.redDims[d])
        break;
      offset -= r.redStrides[d] * r.redDims[d];
      index[d] = 0;
    }
  }
  return static_cast<float>(sum);
}

/// y[o] of torch.amax (amin): the extremum over the reduced dims, NaN
/// winning.
DPC_HOST_DEVICE inline float reduceExtremum(bool minimum, const ReduceIndex &r,
                                            int64_t o, const float *x) {
  int64_t offset = offsetOf(o, r.keptRank, r.keptDims, r.keptStrides);
  float best = x[offset];
  for (int64_t k = 1; k < r.reduced; ++k)
    best = math::extremum(
        minimum, best,
        x[offset + offsetOf(k, r.redRank, r.redDims, r.redStrides)]);
  return best;
}

/// dx over output o's group: dy[o] shared evenly by the elements equal to
/// y[o] (PyTorch's amax and amin), 0 elsewhere.
DPC_HOST_DEVICE inline void reduceExtremumBackward(const ReduceIndex &r,
                                                   int64_t o, const float *x,
                                                   const float *y,
                                                   const float *dy, float *dx) {
  int64_t offset = offsetOf(o, r.keptRank, r.keptDims, r.keptStrides);
  int64_t ties = 0;
  for (int64_t k = 0; k < r.reduced; ++k)
    ties += x[offset + offsetOf(k, r.redRank, r.redDims, r.redStrides)] == y[o];
  float share = ties > 0 ? dy[o] / static_cast<float>(ties) : 0.f;
  for (int64_t k = 0; k < r.reduced; ++k) {
    int64_t i = offset + offsetOf(k, r.redRank, r.redDims, r.redStrides);
    dx[i] = x[i] == y[o] ? share : 0.f;
  }
}

//===----------------------------------------------------------------------===//
// Softmax and log-softmax over the last axis: one row per thread
//===----------------------------------------------------------------------===//

/// y = softmax (or, with `log`, log_softmax) of the row x of `cols`.
DPC_HOST_DEVICE inline void softmaxRowForward(bool log, const float *x,
                                              int64_t cols, float *y) {
  math::RowLogSumExp lse = math::rowLogSumExp(x, cols);
  for (int64_t j = 0; j < cols; ++j) {
    float v = math::logSoftmax(x[j], lse);
    y[j] = log ? v : expf(v);
  }
}

/// dx of one row from its forward result y and dy: the row's sum(dy * y)
/// (softmax) or sum(dy) (log_softmax) in double, rounded once.
DPC_HOST_DEVICE inline void softmaxRowBackward(bool log, const float *y,
                                               const float *dy, int64_t cols,
                                               float *dx) {
  double sum = 0.0;
  for (int64_t j = 0; j < cols; ++j)
    sum += log ? static_cast<double>(dy[j]) : static_cast<double>(dy[j]) * y[j];
  float sumF = static_cast<float>(sum);
  for (int64_t j = 0; j < cols; ++j)
    dx[j] = log ? math::logSoftmaxBackward(y[j], dy[j], sumF)
                : math::softmaxBackward(y[j], dy[j], sumF);
}

} // namespace dpc::kernels::elements

#endif // DPC_RUNTIME_KERNELS_KERNELELEMENTS_H
