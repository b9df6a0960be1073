//===- Pool.cpp - Pooling kernels -----------------------------------------===//
//
// Own loops: PyTorch's ceil_mode and count_include_pad divisor rules are not
// what oneDNN's pooling computes at the borders. Parallel over (n, c)
// planes; a plane's backward scatter stays within the plane, so no races.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Pool.h"
#include "runtime/kernels/KernelElements.h"

#include <algorithm>
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

} // namespace

// The forward passes are one output element at a time, the same bodies the
// CUDA kernels run (KernelElements.h).

void maxPool2dForward(const Pool2dShape &s, const float *x, float *y) {
  checkShape(s);
  int64_t count = s.n * s.c * s.outH() * s.outW();
#pragma omp parallel for
  for (int64_t i = 0; i < count; ++i)
    y[i] = elements::maxPoolForward(s, i, x);
}

void maxPool2dBackward(const Pool2dShape &s, const float *x, const float *dy,
                       float *dx) {
  checkShape(s);
  int64_t oh = s.outH(), ow = s.outW();
#pragma omp parallel for
  for (int64_t p = 0; p < s.n * s.c; ++p) {
    const float *in = x + p * s.h * s.w;
    const float *dOut = dy + p * oh * ow;
    float *dIn = dx + p * s.h * s.w;
    std::fill(dIn, dIn + s.h * s.w, 0.f);
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t idx = elements::maxIndexOf(s, in, i, j);
        if (idx >= 0)
          dIn[idx] += dOut[i * ow + j];
      }
  }
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
#pragma omp parallel for
  for (int64_t p = 0; p < s.n * s.c; ++p) {
    const float *plane = x + p * s.h * s.w;
    float *out = y + p * oh * ow;
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        out[i * ow + j] = elements::avgPoolMean(plane, s.w, rows[i], cols[j]);
  }
}

void avgPool2dBackward(const Pool2dShape &s, const float *dy, float *dx) {
  checkShape(s);
  if (s.dilationH != 1 || s.dilationW != 1)
    throw std::invalid_argument("avg_pool2d: dilation must be 1");
  int64_t oh = s.outH(), ow = s.outW();
#pragma omp parallel for
  for (int64_t p = 0; p < s.n * s.c; ++p) {
    const float *dOut = dy + p * oh * ow;
    float *dIn = dx + p * s.h * s.w;
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
}

void globalAvgPool2dForward(int64_t n, int64_t c, int64_t h, int64_t w,
                            const float *x, float *y) {
  int64_t plane = h * w;
#pragma omp parallel for
  for (int64_t p = 0; p < n * c; ++p) {
    double sum = 0.0;
    for (int64_t j = 0; j < plane; ++j)
      sum += x[p * plane + j];
    y[p] = static_cast<float>(sum / plane);
  }
}

void globalAvgPool2dBackward(int64_t n, int64_t c, int64_t h, int64_t w,
                             const float *dy, float *dx) {
  int64_t plane = h * w;
#pragma omp parallel for
  for (int64_t p = 0; p < n * c; ++p) {
    float g = dy[p] / static_cast<float>(plane);
    for (int64_t j = 0; j < plane; ++j)
      dx[p * plane + j] = g;
  }
}

} // namespace dpc::kernels
