//===- Elementwise.cpp - Activations, binary ops, padding -----------------===//

#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/IsaLoops.h"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Parallel.h"

#include <algorithm>
#include <stdexcept>

namespace dpc::kernels {

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

void reluForward(int64_t size, const float *x, float *y) {
  forRange(size, 1, [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i)
      y[i] = math::reluForward(x[i]);
  });
}

void reluBackward(int64_t size, const float *y, const float *dy, float *dx) {
  forRange(size, 1, [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i)
      dx[i] = math::reluBackward(dy[i], y[i]);
  });
}

void sigmoidForward(int64_t size, const float *x, float *y) {
  auto loop = getIsaLoops().sigmoidForward;
  constexpr int64_t kBlock = 4096;
#pragma omp parallel for if (isWorthThreads(size, 8))
  for (int64_t begin = 0; begin < size; begin += kBlock)
    loop(std::min(kBlock, size - begin), x + begin, y + begin);
}

void sigmoidBackward(int64_t size, const float *y, const float *dy, float *dx) {
  forRange(size, 1, [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i)
      dx[i] = math::sigmoidBackward(dy[i], y[i]);
  });
}

void tanhForward(int64_t size, const float *x, float *y) {
#pragma omp parallel for if (isWorthThreads(size, 8))
  for (int64_t i = 0; i < size; ++i)
    y[i] = math::tanhForward(x[i]);
}

void tanhBackward(int64_t size, const float *y, const float *dy, float *dx) {
  forRange(size, 1, [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i)
      dx[i] = math::tanhBackward(dy[i], y[i]);
  });
}

void reciprocalForward(int64_t size, const float *x, float *y) {
  forRange(size, 1, [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i)
      y[i] = math::reciprocalForward(x[i]);
  });
}

void reciprocalBackward(int64_t size, const float *y, const float *dy,
                        float *dx) {
  forRange(size, 1, [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i)
      dx[i] = math::reciprocalBackward(dy[i], y[i]);
  });
}

void inputActivationForward(math::InputActivation kind,
                            math::ActivationParams params, int64_t size,
                            const float *x, float *y) {
#pragma omp parallel for
  for (int64_t i = 0; i < size; ++i)
    y[i] = math::inputActivationForward(kind, params, x[i]);
}

void inputActivationBackward(math::InputActivation kind,
                             math::ActivationParams params, int64_t size,
                             const float *x, const float *dy, float *dx) {
#pragma omp parallel for
  for (int64_t i = 0; i < size; ++i)
    dx[i] = math::inputActivationBackward(kind, params, dy[i], x[i]);
}

void dropout(const math::DropoutMask &mask, int64_t rows, int64_t cols,
             int64_t firstRow, const float *x, float *y) {
  if (mask.rowwise || mask.span > 1) {
    // Whole rows or runs of `span` (a channel's plane) share one draw.
    int64_t span = mask.rowwise ? std::max<int64_t>(cols, 1) : mask.span;
    int64_t draws = (cols + span - 1) / span;
#pragma omp parallel for collapse(2)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t d = 0; d < draws; ++d) {
        uint32_t word = math::dropoutDraw(mask, firstRow + r, d * span);
        int64_t begin = r * cols + d * span;
        int64_t end = r * cols + std::min(cols, (d + 1) * span);
        for (int64_t i = begin; i < end; ++i)
          y[i] = math::dropoutApply(mask, word, x[i]);
      }
    return;
  }
  // One Philox call serves four consecutive elements of a row.
  int64_t groups = (cols + 3) / 4;
#pragma omp parallel for collapse(2)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      math::Philox4 words = math::dropoutWords(mask, firstRow + r, 4 * g);
      int64_t begin = r * cols + 4 * g;
      int64_t count = std::min<int64_t>(4, cols - 4 * g);
      for (int64_t j = 0; j < count; ++j)
        y[begin + j] = math::dropoutApply(mask, words.v[j], x[begin + j]);
    }
}

//===----------------------------------------------------------------------===//
// Broadcasting binary ops
//===----------------------------------------------------------------------===//

namespace {

int64_t numElements(const int64_t dims[4]) {
  return dims[0] * dims[1] * dims[2] * dims[3];
}

/// Calls f(outIndex, rhsIndex) for every output element. Rows of the
/// innermost dim (of the shape makeBroadcastShape merged: a residual add of
/// [256, 512, 4, 4] tensors is one dim, not rows of 4) are parallel across
/// threads, or with a single row, shares of it.
template <typename Fn> void forEachBroadcast(const BroadcastShape &s, Fn f) {
  const int64_t *o = s.out;
  // Row-major strides of rhs, 0 along broadcast dims.
  int64_t rs[4];
  int64_t stride = 1;
  for (int i = 3; i >= 0; --i) {
    rs[i] = s.rhs[i] == 1 ? 0 : stride;
    stride *= s.rhs[i];
  }
  int64_t rows = o[0] * o[1] * o[2];
  if (rows == 1) {
    forRange(o[3], 1, [&](int64_t begin, int64_t end) {
      if (rs[3] == 1)
        for (int64_t i = begin; i < end; ++i)
          f(i, i);
      else
        for (int64_t i = begin; i < end; ++i)
          f(i, int64_t{0});
    });
    return;
  }
#pragma omp parallel for if (isWorthThreads(rows * o[3]))
  for (int64_t row = 0; row < rows; ++row) {
    int64_t i2 = row % o[2], i1 = (row / o[2]) % o[1], i0 = row / (o[2] * o[1]);
    int64_t rBase = i0 * rs[0] + i1 * rs[1] + i2 * rs[2];
    for (int64_t i3 = 0; i3 < o[3]; ++i3)
      f(row * o[3] + i3, rBase + i3 * rs[3]);
  }
}

/// dRhs[j] = sum of term(outIndex) over the output elements that read rhs
/// element j. Parallel over rhs elements, each summed in double in a fixed
/// order.
/// dRhs[j] for every rhs element: the per-element body the CUDA kernel runs
/// too (KernelElements.h), over the outputs that read j in row-major order.
void reduceToRhs(const BroadcastShape &s, const float *dOut, const float *lhs,
                 float *dRhs) {
  int64_t rhsSize = numElements(s.rhs);
#pragma omp parallel for
  for (int64_t j = 0; j < rhsSize; ++j)
    dRhs[j] = elements::reduceToRhs(s, j, dOut, lhs);
}

} // namespace

void addForward(const BroadcastShape &s, const float *lhs, const float *rhs,
                float *out) {
  forEachBroadcast(s, [=](int64_t i, int64_t j) { out[i] = lhs[i] + rhs[j]; });
}

void addReluForward(const BroadcastShape &s, const float *lhs, const float *rhs,
                    float *out) {
  forEachBroadcast(s, [=](int64_t i, int64_t j) {
    out[i] = math::reluForward(lhs[i] + rhs[j]);
  });
}

void addReluBackward(int64_t size, const float *y, const float *a,
                     const float *b, float *dx) {
  forRange(size, 1, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      dx[i] = math::reluBackward(a[i] + b[i], y[i]);
  });
}

void addBackward(const BroadcastShape &s, const float *dOut, float *dLhs,
                 float *dRhs) {
  if (dLhs && dLhs != dOut)
    std::copy(dOut, dOut + numElements(s.out), dLhs);
  if (dRhs)
    reduceToRhs(s, dOut, nullptr, dRhs);
}

void mulForward(const BroadcastShape &s, const float *lhs, const float *rhs,
                float *out) {
  forEachBroadcast(s, [=](int64_t i, int64_t j) { out[i] = lhs[i] * rhs[j]; });
}

void mulBackward(const BroadcastShape &s, const float *lhs, const float *rhs,
                 const float *dOut, float *dLhs, float *dRhs) {
  // dRhs first: dLhs may alias dOut.
  if (dRhs)
    reduceToRhs(s, dOut, lhs, dRhs);
  if (dLhs)
    forEachBroadcast(s,
                     [=](int64_t i, int64_t j) { dLhs[i] = dOut[i] * rhs[j]; });
}

void extremumForward(bool minimum, const BroadcastShape &s, const float *lhs,
                     const float *rhs, float *out) {
  forEachBroadcast(s, [=](int64_t i, int64_t j) {
    out[i] = math::extremum(minimum, lhs[i], rhs[j]);
  });
}

void extremumBackward(bool minimum, const BroadcastShape &s, const float *lhs,
                      const float *rhs, const float *dOut, float *dLhs,
                      float *dRhs) {
  // dRhs first: dLhs may alias dOut.
  if (dRhs) {
    int64_t rhsSize = numElements(s.rhs);
#pragma omp parallel for
    for (int64_t j = 0; j < rhsSize; ++j)
      dRhs[j] = elements::extremumToRhs(minimum, s, j, lhs, rhs, dOut);
  }
  if (dLhs)
    forEachBroadcast(s, [=](int64_t i, int64_t j) {
      dLhs[i] = dOut[i] * math::extremumShare(minimum, lhs[i], rhs[j]);
    });
}

//===----------------------------------------------------------------------===//
// Padding
//===----------------------------------------------------------------------===//

namespace {
void checkPad(const Pad2dShape &s) {
  if (s.padTop < 0 || s.padLeft < 0 || s.padBottom < 0 || s.padRight < 0)
    throw std::invalid_argument("pad2d: negative padding");
}
} // namespace

void pad2dForward(const Pad2dShape &s, float value, const float *x, float *y) {
  checkPad(s);
  int64_t oh = s.outH(), ow = s.outW();
#pragma omp parallel for
  for (int64_t p = 0; p < s.n * s.c; ++p) {
    const float *in = x + p * s.h * s.w;
    float *out = y + p * oh * ow;
    for (int64_t i = 0; i < oh; ++i) {
      int64_t ih = i - s.padTop;
      float *row = out + i * ow;
      if (ih < 0 || ih >= s.h) {
        std::fill(row, row + ow, value);
        continue;
      }
      std::fill(row, row + s.padLeft, value);
      std::copy(in + ih * s.w, in + (ih + 1) * s.w, row + s.padLeft);
      std::fill(row + s.padLeft + s.w, row + ow, value);
    }
  }
}

void pad2dBackward(const Pad2dShape &s, const float *dy, float *dx) {
  checkPad(s);
  int64_t oh = s.outH(), ow = s.outW();
#pragma omp parallel for
  for (int64_t p = 0; p < s.n * s.c; ++p) {
    const float *dOut = dy + p * oh * ow;
    float *dIn = dx + p * s.h * s.w;
    for (int64_t ih = 0; ih < s.h; ++ih) {
      const float *src = dOut + (ih + s.padTop) * ow + s.padLeft;
      std::copy(src, src + s.w, dIn + ih * s.w);
    }
  }
}

} // namespace dpc::kernels
