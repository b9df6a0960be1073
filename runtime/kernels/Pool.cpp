//===- Pool.cpp - Pooling kernels -----------------------------------------===//
//
// Own loops: PyTorch's ceil_mode and count_include_pad divisor rules are not
// what oneDNN's pooling computes at the borders. Parallel over (n, c)
// planes; a plane's backward scatter stays within the plane, so no races.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Pool.h"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/Parallel.h"
#include "runtime/kernels/Reorder.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

namespace dpc::kernels {

namespace {

void checkShape(const Pool2dShape &s) {
  if (s.n <= 0 || s.c <= 0 || s.h <= 0 || s.w <= 0 || s.kernelH <= 0 ||
      s.kernelW <= 0 || s.strideH <= 0 || s.strideW <= 0 || s.dilationH <= 0 ||
      s.dilationW <= 0 || s.outH() <= 0 || s.outW() <= 0)
    throw std::invalid_argument("pool2d: invalid shape");
}

/// Runs `planes(s1, ins, outs)` -- the plain loop over the sixteen planes of
/// shape s1 (one sample, 16 channels) -- on every [h, w, 16] block of
/// nChw16c tensors: unpacked into planes, then the results packed back, so
/// that both layouts compute with the same loops. `ins` are the tensors
/// read, of input (h, w) or output (oh, ow) size as `inIsOutput` says;
/// likewise `outs`.
template <size_t NumIns, size_t NumOuts, typename Fn>
void forEachBlock(const Pool2dShape &s, std::array<const float *, NumIns> ins,
                  std::array<bool, NumIns> inIsOutput,
                  std::array<float *, NumOuts> outs,
                  std::array<bool, NumOuts> outIsOutput, Fn &&planes) {
  Pool2dShape s1 = s;
  s1.n = 1, s1.c = kChannelBlock, s1.channelBlock = 1;
  int64_t inPlane = s.h * s.w, outPlane = s.outH() * s.outW();
  int64_t blocks = s.n * (s.c / kChannelBlock);
#pragma omp parallel
  {
    std::array<std::vector<float>, NumIns> inPlanes;
    std::array<std::vector<float>, NumOuts> outPlanes;
    std::array<const float *, NumIns> inPtrs;
    std::array<float *, NumOuts> outPtrs;
    for (size_t k = 0; k < NumIns; ++k) {
      inPlanes[k].resize(kChannelBlock * (inIsOutput[k] ? outPlane : inPlane));
      inPtrs[k] = inPlanes[k].data();
    }
    for (size_t k = 0; k < NumOuts; ++k) {
      outPlanes[k].resize(kChannelBlock *
                          (outIsOutput[k] ? outPlane : inPlane));
      outPtrs[k] = outPlanes[k].data();
    }
#pragma omp for
    for (int64_t b = 0; b < blocks; ++b) {
      for (size_t k = 0; k < NumIns; ++k) {
        int64_t plane = inIsOutput[k] ? outPlane : inPlane;
        unpackBlock(ins[k] + b * plane * kChannelBlock, plane,
                    inPlanes[k].data());
      }
      planes(s1, inPtrs, outPtrs);
      for (size_t k = 0; k < NumOuts; ++k) {
        int64_t plane = outIsOutput[k] ? outPlane : inPlane;
        packBlock(outPlanes[k].data(), plane,
                  outs[k] + b * plane * kChannelBlock);
      }
    }
  }
}

bool isBlocked(const Pool2dShape &s) { return s.channelBlock == kChannelBlock; }

void maxPoolForwardPlanes(const Pool2dShape &s, const float *x, float *y) {
  int64_t count = s.n * s.c * s.outH() * s.outW();
  for (int64_t i = 0; i < count; ++i)
    y[i] = elements::maxPoolForward(s, i, x);
}

void maxPoolBackwardPlane(const Pool2dShape &s, const float *in,
                          const float *dOut, float *dIn) {
  int64_t oh = s.outH(), ow = s.outW();
  std::fill(dIn, dIn + s.h * s.w, 0.f);
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      int64_t idx = elements::maxIndexOf(s, in, i, j);
      if (idx >= 0)
        dIn[idx] += dOut[i * ow + j];
    }
}

/// Whether the windows tile the plane: no padding, every window full and
/// apart from the others (LeNet's 2x2 / 2), so that the loops need no
/// window bounds and each input element meets one window.
bool isTiling(const Pool2dShape &s) {
  return s.kernelH == s.strideH && s.kernelW == s.strideW && s.padTop == 0 &&
         s.padLeft == 0 && s.padBottom == 0 && s.padRight == 0 &&
         s.dilationH == 1 && s.dilationW == 1 && s.h % s.kernelH == 0 &&
         s.w % s.kernelW == 0;
}

/// avgPoolMean's sums in its order, over tiling windows; Kh and Kw > 0 fix
/// the window (LeNet's 2x2, unrolled), 0 leaves it to `s`.
template <int64_t Kh, int64_t Kw>
void avgPoolForwardTiles(const Pool2dShape &s, const float *plane, float *out) {
  int64_t kh = Kh ? Kh : s.kernelH, kw = Kw ? Kw : s.kernelW;
  int64_t oh = s.outH(), ow = s.outW();
  float divisor = static_cast<float>(kh * kw);
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      const float *window = plane + i * kh * s.w + j * kw;
      float sum = 0.f;
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = 0; b < kw; ++b)
          sum += window[a * s.w + b];
      out[i * ow + j] = sum / divisor;
    }
}

/// avgPoolBackwardPlane over tiling windows: each input element gets its
/// one window's share, added to zero as there.
template <int64_t Kh, int64_t Kw>
void avgPoolBackwardTiles(const Pool2dShape &s, const float *dOut, float *dIn) {
  int64_t kh = Kh ? Kh : s.kernelH, kw = Kw ? Kw : s.kernelW;
  int64_t oh = s.outH(), ow = s.outW();
  float divisor = static_cast<float>(kh * kw);
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t a = 0; a < kh; ++a) {
      float *row = dIn + (i * kh + a) * s.w;
      for (int64_t j = 0; j < ow; ++j) {
        float share = 0.f + dOut[i * ow + j] / divisor;
        for (int64_t b = 0; b < kw; ++b)
          row[j * kw + b] = share;
      }
    }
}

void avgPoolForwardPlane(const Pool2dShape &s, const math::AvgWindow *rows,
                         const math::AvgWindow *cols, const float *plane,
                         float *out) {
  if (isTiling(s))
    return s.kernelH == 2 && s.kernelW == 2
               ? avgPoolForwardTiles<2, 2>(s, plane, out)
               : avgPoolForwardTiles<0, 0>(s, plane, out);
  int64_t oh = s.outH(), ow = s.outW();
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j)
      out[i * ow + j] = elements::avgPoolMean(plane, s.w, rows[i], cols[j]);
}

void avgPoolBackwardPlane(const Pool2dShape &s, const float *dOut, float *dIn) {
  if (isTiling(s))
    return s.kernelH == 2 && s.kernelW == 2
               ? avgPoolBackwardTiles<2, 2>(s, dOut, dIn)
               : avgPoolBackwardTiles<0, 0>(s, dOut, dIn);
  int64_t oh = s.outH(), ow = s.outW();
  std::fill(dIn, dIn + s.h * s.w, 0.f);
  for (int64_t i = 0; i < oh; ++i) {
    auto wh = math::avgPoolWindow(i, s.h, s.kernelH, s.strideH, s.padTop,
                                  s.padBottom, s.countIncludePad);
    for (int64_t j = 0; j < ow; ++j) {
      auto ww = math::avgPoolWindow(j, s.w, s.kernelW, s.strideW, s.padLeft,
                                    s.padRight, s.countIncludePad);
      int64_t divisor = wh.count * ww.count;
      if (divisor == 0)
        continue;
      float g = dOut[i * ow + j] / static_cast<float>(divisor);
      for (int64_t ih = wh.begin; ih < wh.end; ++ih)
        for (int64_t iw = ww.begin; iw < ww.end; ++iw)
          dIn[ih * s.w + iw] += g;
    }
  }
}

} // namespace

// The forward passes are one output element at a time, the same bodies the
// CUDA kernels run (KernelElements.h).

void maxPool2dForward(const Pool2dShape &s, const float *x, float *y) {
  checkShape(s);
  if (isBlocked(s))
    return forEachBlock<1, 1>(s, {x}, {false}, {y}, {true},
                              [](const Pool2dShape &s1, auto ins, auto outs) {
                                maxPoolForwardPlanes(s1, ins[0], outs[0]);
                              });
  int64_t count = s.n * s.c * s.outH() * s.outW();
#pragma omp parallel for if (isWorthThreads(count, s.kernelH * s.kernelW))
  for (int64_t i = 0; i < count; ++i)
    y[i] = elements::maxPoolForward(s, i, x);
}

void maxPool2dBackward(const Pool2dShape &s, const float *x, const float *dy,
                       float *dx) {
  checkShape(s);
  int64_t oh = s.outH(), ow = s.outW();
  if (isBlocked(s))
    return forEachBlock<2, 1>(
        s, {x, dy}, {false, true}, {dx}, {false},
        [&](const Pool2dShape &s1, auto ins, auto outs) {
          for (int64_t p = 0; p < kChannelBlock; ++p)
            maxPoolBackwardPlane(s1, ins[0] + p * s.h * s.w,
                                 ins[1] + p * oh * ow, outs[0] + p * s.h * s.w);
        });
#pragma omp parallel for if (isWorthThreads(s.n * s.c * s.h * s.w, 2))
  for (int64_t p = 0; p < s.n * s.c; ++p)
    maxPoolBackwardPlane(s, x + p * s.h * s.w, dy + p * oh * ow,
                         dx + p * s.h * s.w);
}

void avgPool2dForward(const Pool2dShape &s, const float *x, float *y) {
  checkShape(s);
  if (s.dilationH != 1 || s.dilationW != 1)
    throw std::invalid_argument("avg_pool2d: dilation must be 1");
  // elements::avgPoolForward's body, with each row's and column's window
  // worked out once.
  int64_t oh = s.outH(), ow = s.outW();
  std::vector<math::AvgWindow> rows(oh), cols(ow);
  for (int64_t i = 0; i < oh; ++i)
    rows[i] = elements::avgPoolRows(s, i);
  for (int64_t j = 0; j < ow; ++j)
    cols[j] = elements::avgPoolCols(s, j);
  if (isBlocked(s))
    return forEachBlock<1, 1>(
        s, {x}, {false}, {y}, {true},
        [&](const Pool2dShape &s1, auto ins, auto outs) {
          for (int64_t p = 0; p < kChannelBlock; ++p)
            avgPoolForwardPlane(s1, rows.data(), cols.data(),
                                ins[0] + p * s.h * s.w, outs[0] + p * oh * ow);
        });
#pragma omp parallel for if (isWorthThreads(s.n * s.c * s.h * s.w))
  for (int64_t p = 0; p < s.n * s.c; ++p)
    avgPoolForwardPlane(s, rows.data(), cols.data(), x + p * s.h * s.w,
                        y + p * oh * ow);
}

void avgPool2dBackward(const Pool2dShape &s, const float *dy, float *dx) {
  checkShape(s);
  if (s.dilationH != 1 || s.dilationW != 1)
    throw std::invalid_argument("avg_pool2d: dilation must be 1");
  int64_t oh = s.outH(), ow = s.outW();
  if (isBlocked(s))
    return forEachBlock<1, 1>(s, {dy}, {true}, {dx}, {false},
                              [&](const Pool2dShape &s1, auto ins, auto outs) {
                                for (int64_t p = 0; p < kChannelBlock; ++p)
                                  avgPoolBackwardPlane(s1, ins[0] + p * oh * ow,
                                                       outs[0] + p * s.h * s.w);
                              });
#pragma omp parallel for if (isWorthThreads(s.n * s.c * s.h * s.w))
  for (int64_t p = 0; p < s.n * s.c; ++p)
    avgPoolBackwardPlane(s, dy + p * oh * ow, dx + p * s.h * s.w);
}

void globalAvgPool2dForward(int64_t n, int64_t c, int64_t h, int64_t w,
                            const float *x, float *y, bool blocked) {
  int64_t plane = h * w;
  if (blocked) {
    // y stays plain [n, c]: block b holds y[b * 16, b * 16 + 16).
#pragma omp parallel for
    for (int64_t b = 0; b < n * c / kChannelBlock; ++b) {
      const float *block = x + b * plane * kChannelBlock;
      double sum[kChannelBlock] = {};
      for (int64_t j = 0; j < plane; ++j)
        for (int64_t l = 0; l < kChannelBlock; ++l)
          sum[l] += block[j * kChannelBlock + l];
      for (int64_t l = 0; l < kChannelBlock; ++l)
        y[b * kChannelBlock + l] = static_cast<float>(sum[l] / plane);
    }
    return;
  }
#pragma omp parallel for
  for (int64_t p = 0; p < n * c; ++p) {
    double sum = 0.0;
    for (int64_t j = 0; j < plane; ++j)
      sum += x[p * plane + j];
    y[p] = static_cast<float>(sum / plane);
  }
}

void globalAvgPool2dBackward(int64_t n, int64_t c, int64_t h, int64_t w,
                             const float *dy, float *dx, bool blocked) {
  int64_t plane = h * w;
  if (blocked) {
#pragma omp parallel for
    for (int64_t b = 0; b < n * c / kChannelBlock; ++b) {
      float g[kChannelBlock];
      for (int64_t l = 0; l < kChannelBlock; ++l)
        g[l] = dy[b * kChannelBlock + l] / static_cast<float>(plane);
      float *block = dx + b * plane * kChannelBlock;
      for (int64_t j = 0; j < plane; ++j)
        for (int64_t l = 0; l < kChannelBlock; ++l)
          block[j * kChannelBlock + l] = g[l];
    }
    return;
  }
#pragma omp parallel for
  for (int64_t p = 0; p < n * c; ++p) {
    float g = dy[p] / static_cast<float>(plane);
    for (int64_t j = 0; j < plane; ++j)
      dx[p * plane + j] = g;
  }
}

} // namespace dpc::kernels
