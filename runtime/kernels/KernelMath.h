//===- KernelMath.h - Per-element math shared by CPU and CUDA ---*- C++ -*-===//
//
// The math of dpc's own (non-oneDNN) kernels, written once. The CPU loops in
// this folder call these functions; the CUDA kernels (runtime/cuda) call the
// same functions from device code, so both backends share every formula.
// Nothing here allocates, loops over a whole tensor or touches a library.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_KERNELMATH_H
#define DPC_RUNTIME_KERNELS_KERNELMATH_H

#include "runtime/abi/HostDevice.h"
#include "runtime/abi/WindowMath.h"
#include "runtime/abi/shapes/ElementwiseShapes.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace dpc::kernels::math {

//===----------------------------------------------------------------------===//
// Index arithmetic
//===----------------------------------------------------------------------===//

DPC_HOST_DEVICE inline int64_t minI64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
DPC_HOST_DEVICE inline int64_t maxI64(int64_t a, int64_t b) {
  return a > b ? a : b;
}

// The window formulas are the ABI's (runtime/abi/WindowMath.h): the
// compiler's shape inference and the plan's checks use them too.
using plan::convOutputSize;
using plan::floorDiv;
using plan::kMaxWindowArgument;
using plan::poolOutputSize;
using plan::windowArgumentsInRange;

/// The input range [begin, end) an average-pooling window covers along one
/// axis, and how many positions count toward its divisor. Mirrors PyTorch's
/// avg_pool2d: with count_include_pad the divisor includes padding but not
/// the part of a ceil_mode window hanging past the end padding.
struct AvgWindow {
  int64_t begin, end, count;
};
DPC_HOST_DEVICE inline AvgWindow avgPoolWindow(int64_t out, int64_t in,
                                               int64_t kernel, int64_t stride,
                                               int64_t padBegin, int64_t padEnd,
                                               bool countIncludePad) {
  int64_t begin = out * stride - padBegin;
  int64_t end = minI64(begin + kernel, in + padEnd);
  int64_t padded = end - begin;
  begin = maxI64(begin, 0);
  end = minI64(end, in);
  return {begin, end, countIncludePad ? padded : end - begin};
}

/// Flat index (ih * w + iw) of the first maximum of max-pooling window
/// (oh, ow) in one [h, w] plane, or -1 when the window covers only padding.
/// Padding never wins; NaN does and stops the scan, as in PyTorch.
DPC_HOST_DEVICE inline int64_t
maxPoolWindowArgMax(const float *plane, int64_t h, int64_t w, int64_t oh,
                    int64_t ow, int64_t kernelH, int64_t kernelW,
                    int64_t strideH, int64_t strideW, int64_t padTop,
                    int64_t padLeft, int64_t dilationH, int64_t dilationW) {
  int64_t best = -1;
  float bestVal = 0.f;
  for (int64_t kh = 0; kh < kernelH; ++kh) {
    int64_t ih = oh * strideH - padTop + kh * dilationH;
    if (ih < 0 || ih >= h)
      continue;
    for (int64_t kw = 0; kw < kernelW; ++kw) {
      int64_t iw = ow * strideW - padLeft + kw * dilationW;
      if (iw < 0 || iw >= w)
        continue;
      float v = plane[ih * w + iw];
      bool isNan = v != v;
      if (best < 0 || v > bestVal || isNan) {
        best = ih * w + iw;
        bestVal = v;
        if (isNan)
          return best;
      }
    }
  }
  return best;
}

//===----------------------------------------------------------------------===//
// Activations (backward takes the forward output y; for relu x works too)
//===----------------------------------------------------------------------===//

DPC_HOST_DEVICE inline float reluForward(float x) { return x > 0.f ? x : 0.f; }
DPC_HOST_DEVICE inline float reluBackward(float dy, float y) {
  return y > 0.f ? dy : 0.f;
}
/// The float with bits `bits`.
DPC_HOST_DEVICE inline float floatFromBits(uint32_t bits) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
#endif
}

/// e^x, in straight-line code that a CPU loop vectorizes (libm's expf is a
/// call per element): Cephes' expf -- x = n ln2 + r with ln2 in two parts,
/// e^r by a degree-7 polynomial, 2^n as two exponent-bit factors so that
/// results overflow to inf and underflow through the subnormals as e^x
/// does -- within 2 ulp of the exact value (KernelMathTest measures it).
/// NaN gives NaN. No branches, no selects after the clamp: GCC if-converts
/// only a few per loop.
DPC_HOST_DEVICE inline float expStraight(float x) {
  // Past these, e^x is inf or rounds to 0 anyway; n stays in [-150, 128].
  float c = x > 88.8f ? 88.8f : x;
  c = c < -104.f ? -104.f : c;
  // NaN goes on through r (a float-to-int conversion of NaN is undefined).
  float t = (c == c ? c : 0.f) * 1.44269504088896341f + 0.5f;
  int32_t n = static_cast<int32_t>(t);
  n -= static_cast<float>(n) > t; // floor, for negative t too
  float fn = static_cast<float>(n);
  float r = c - fn * 0.693359375f + fn * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  int32_t half = n >> 1; // both factors normal floats
  return p * floatFromBits(static_cast<uint32_t>(half + 127) << 23) *
         floatFromBits(static_cast<uint32_t>(n - half + 127) << 23);
}

DPC_HOST_DEVICE inline float sigmoidForward(float x) {
  return 1.f / (1.f + expStraight(-x));
}
DPC_HOST_DEVICE inline float sigmoidBackward(float dy, float y) {
  return dy * y * (1.f - y);
}
DPC_HOST_DEVICE inline float tanhForward(float x) { return tanhf(x); }
DPC_HOST_DEVICE inline float tanhBackward(float dy, float y) {
  return dy * (1.f - y * y);
}
/// torch.reciprocal and its gradient from the result, as PyTorch writes it:
/// -dy * (y * y).
DPC_HOST_DEVICE inline float reciprocalForward(float x) { return 1.f / x; }
DPC_HOST_DEVICE inline float reciprocalBackward(float dy, float y) {
  return -dy * (y * y);
}

//===----------------------------------------------------------------------===//
// Activations whose backward reads the forward's input x, with up to two
// parameters: PyTorch's definitions (torch.nn.functional), including its
// conventions at the kinks (ReLU6's gradient is 0 at 0 and 6).
//===----------------------------------------------------------------------===//

// Which one, and its parameters, as the plan gives them
// (runtime/abi/shapes/ElementwiseShapes.h).
using plan::ActivationParams;
using plan::InputActivation;

namespace detail {
constexpr float kSqrtHalf = 0.70710678118654752440f;
// sqrt(2 / pi) and 1 / sqrt(2 pi), as PyTorch computes them.
constexpr float kGeluTanhBeta = 0.79788456080286535588f;
constexpr float kGeluTanhKappa = 0.044715f;
constexpr float kInvSqrtTwoPi = 0.39894228040143267794f;
constexpr float kTwoOverSqrtPi = 1.12837916709551257390f;
} // namespace detail

DPC_HOST_DEVICE inline float
inputActivationForward(InputActivation kind, ActivationParams p, float x) {
  switch (kind) {
  case InputActivation::Clip:
    // NaN passes through: both comparisons are false.
    return x < p.a ? p.a : (x > p.b ? p.b : x);
  case InputActivation::HardSigmoid: {
    float t = p.a * x + p.b;
    return t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
  }
  case InputActivation::HardSwish: {
    float t = x + 3.f;
    t = t < 0.f ? 0.f : (t > 6.f ? 6.f : t);
    return x * t / 6.f;
  }
  case InputActivation::Gelu:
    return x * 0.5f * (1.f + erff(x * detail::kSqrtHalf));
  case InputActivation::Erf:
    return erff(x);
  case InputActivation::GeluTanh: {
    float inner =
        detail::kGeluTanhBeta * (x + detail::kGeluTanhKappa * x * x * x);
    return 0.5f * x * (1.f + tanhf(inner));
  }
  case InputActivation::LeakyRelu:
    return x > 0.f ? x : x * p.a;
  // ELU, SELU and CELU as PyTorch's elu kernel computes them: x scaled by
  // `scale` above 0, negcoef (exp(x inputScale) - 1) from 0 down.
  case InputActivation::Elu:
    return x > 0.f ? x : p.a * expm1f(x);
  case InputActivation::Selu:
    return x > 0.f ? p.b * x : (p.a * p.b) * expm1f(x);
  case InputActivation::Celu:
    return x > 0.f ? x : p.a * expm1f(x * (1.f / p.a));
  case InputActivation::Softplus:
    return x * p.a > p.b ? x : log1pf(expf(x * p.a)) / p.a;
  case InputActivation::Mish:
    return x * tanhf(log1pf(expf(x)));
  case InputActivation::Abs:
    return fabsf(x);
  case InputActivation::Log:
    return logf(x);
  case InputActivation::LogSigmoid:
    return fminf(x, 0.f) - log1pf(expf(-fabsf(x)));
  case InputActivation::Shrink:
    return x > p.a ? x - p.b : (x < -p.a ? x + p.b : 0.f);
  case InputActivation::Threshold:
    return x > p.a ? x : p.b;
  case InputActivation::Exp:
    return expf(x);
  case InputActivation::Sqrt:
    return sqrtf(x);
  case InputActivation::Pow:
    return powf(x, p.a);
  case InputActivation::Sin:
    return sinf(x);
  case InputActivation::Cos:
    return cosf(x);
  case InputActivation::Sign: // 0 at 0 and NaN, as torch.sign
    return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f);
  case InputActivation::Floor:
    return floorf(x);
  case InputActivation::Ceil:
    return ceilf(x);
  }
  return x;
}

DPC_HOST_DEVICE inline float inputActivationBackward(InputActivation kind,
                                                     ActivationParams p,
                                                     float dy, float x) {
  switch (kind) {
  case InputActivation::Clip:
    return x <= p.a || x >= p.b ? 0.f : dy;
  case InputActivation::HardSigmoid: {
    float t = p.a * x + p.b;
    return t > 0.f && t < 1.f ? dy * p.a : 0.f;
  }
  case InputActivation::HardSwish:
    return x < -3.f ? 0.f : (x <= 3.f ? dy * (x / 3.f + 0.5f) : dy);
  case InputActivation::Erf:
    return dy * detail::kTwoOverSqrtPi * expf(-x * x);
  case InputActivation::Gelu: {
    float cdf = 0.5f * (1.f + erff(x * detail::kSqrtHalf));
    float pdf = expf(-0.5f * x * x) * detail::kInvSqrtTwoPi;
    return dy * (cdf + x * pdf);
  }
  case InputActivation::GeluTanh: {
    float xSquared = x * x;
    float inner =
        detail::kGeluTanhBeta * (x + detail::kGeluTanhKappa * xSquared * x);
    float tanhInner = tanhf(inner);
    float right = 1.f + tanhInner;
    float innerDerivative =
        detail::kGeluTanhBeta * (1.f + 3.f * detail::kGeluTanhKappa * xSquared);
    return dy * (0.5f * right +
                 0.5f * x * (1.f - tanhInner * tanhInner) * innerDerivative);
  }
  case InputActivation::LeakyRelu:
    return x > 0.f ? dy : dy * p.a;
  case InputActivation::Elu:
    return x > 0.f ? dy : dy * p.a * expf(x);
  case InputActivation::Selu:
    return x > 0.f ? dy * p.b : dy * (p.a * p.b) * expf(x);
  case InputActivation::Celu: {
    float inputScale = 1.f / p.a;
    return x > 0.f ? dy : dy * inputScale * p.a * expf(x * inputScale);
  }
  case InputActivation::Softplus: {
    float z = expf(x * p.a);
    return x * p.a > p.b ? dy : dy * z / (z + 1.f);
  }
  case InputActivation::Mish: {
    float sigmoid = 1.f / (1.f + expf(-x));
    float t = tanhf(log1pf(expf(x)));
    return dy * (t + x * sigmoid * (1.f - t * t));
  }
  case InputActivation::Abs:
    return x > 0.f ? dy : (x < 0.f ? -dy : 0.f * dy);
  case InputActivation::Log:
    return dy / x;
  case InputActivation::LogSigmoid: {
    // PyTorch's: dy (max' - sign z / (1 + z)), z = exp(-|x|).
    float z = expf(-fabsf(x));
    return x < 0.f ? dy * (1.f - z / (1.f + z)) : dy * (z / (1.f + z));
  }
  case InputActivation::Shrink:
    return x >= -p.a && x <= p.a ? 0.f : dy;
  case InputActivation::Threshold:
    return x > p.a ? dy : 0.f;
  case InputActivation::Exp:
    return dy * expf(x);
  case InputActivation::Sqrt: // PyTorch's: dy / (2 y)
    return dy / (2.f * sqrtf(x));
  case InputActivation::Pow:
    return p.a == 0.f ? 0.f : dy * p.a * powf(x, p.a - 1.f);
  case InputActivation::Sin:
    return dy * cosf(x);
  case InputActivation::Cos:
    return -dy * sinf(x);
  case InputActivation::Sign:
  case InputActivation::Floor:
  case InputActivation::Ceil:
    return 0.f;
  }
  return dy;
}

//===----------------------------------------------------------------------===//
// Maximum and minimum, element-wise and over dims
//===----------------------------------------------------------------------===//

/// torch.maximum (minimum) of a and b: NaN wins.
DPC_HOST_DEVICE inline float extremum(bool minimum, float a, float b) {
  if (a != a || b != b)
    return a + b;
  return (minimum ? a < b : a > b) ? a : b;
}

/// The share of dy that x gets from torch.maximum(x, y) (minimum): all where
/// x wins, half on a tie, none where y wins -- PyTorch's rule (where(x == y,
/// dy / 2, dy), zeroed where x < y), NaN included.
DPC_HOST_DEVICE inline float extremumShare(bool minimum, float x, float y) {
  if (x == y)
    return 0.5f;
  return (minimum ? x > y : x < y) ? 0.f : 1.f;
}

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

DPC_HOST_DEVICE inline float batchNormApply(float x, float mean, float invStd,
                                            float scale, float shift) {
  return (x - mean) * invStd * scale + shift;
}

/// The gradient a batch norm's output gets: dy[i], or with a ReLU fused
/// after the batch norm, dy[i] masked by the ReLU's output reluY[i].
DPC_HOST_DEVICE inline float
batchNormOutputGradient(const float *dy, const float *reluY, int64_t i) {
  return reluY ? reluBackward(dy[i], reluY[i]) : dy[i];
}

/// PyTorch's running-statistics update: running = (1-m)*running + m*batch.
DPC_HOST_DEVICE inline float runningStatUpdate(float running, float batch,
                                               float momentum) {
  return (1.f - momentum) * running + momentum * batch;
}

/// The mean and biased variance of `count` values from their sum and sum of
/// squares (synchronized batch norm); an empty batch gives 0 and 0, and
/// rounding never makes the variance negative.
DPC_HOST_DEVICE inline void batchNormMoments(double sum, double sumSq,
                                             double count, double &mean,
                                             double &var) {
  mean = count > 0 ? sum / count : 0.0;
  var = count > 0 ? sumSq / count - mean * mean : 0.0;
  var = var > 0 ? var : 0.0;
}

/// The unbiased variance PyTorch keeps as the running one; the biased one
/// when there is a single value (where PyTorch refuses to train).
DPC_HOST_DEVICE inline double unbiasedVariance(double var, double count) {
  return count > 1 ? var * count / (count - 1) : var;
}

/// dx of training-mode batch norm given the per-channel reductions
/// meanDy = sum(dy)/n and projScale = sum(dy*(x-mean)) * invStd^2 / n.
DPC_HOST_DEVICE inline float batchNormBackwardInput(float dy, float x,
                                                    float mean, float invStd,
                                                    float scale, float meanDy,
                                                    float projScale) {
  return (dy - meanDy - (x - mean) * projScale) * invStd * scale;
}

//===----------------------------------------------------------------------===//
// Optimizers (torch.optim semantics, one element at a time)
//===----------------------------------------------------------------------===//

/// torch.optim.SGD on one element. `firstStep` seeds the momentum buffer with
/// the (weight-decayed) gradient, as PyTorch does when the buffer is None.
/// Scalars derived from hyper-parameters (1 - dampening) come from the host,
/// computed in double as Python does.
DPC_HOST_DEVICE inline void sgdStep(float &param, float grad, float &buf,
                                    float lr, float momentum,
                                    float oneMinusDampening, float weightDecay,
                                    bool nesterov, bool firstStep) {
  float d = grad;
  if (weightDecay != 0.f)
    d = d + weightDecay * param;
  if (momentum != 0.f) {
    buf = firstStep ? d : buf * momentum + oneMinusDampening * d;
    d = nesterov ? d + momentum * buf : buf;
  }
  param = param - lr * d;
}

/// AdamW's per-step scalars (see adamwStep), computed in double as torch
/// does in Python floats and rounded to float once.
struct AdamWScalars {
  float decayFactor, stepSize, biasCorrection2Sqrt;
  float beta1, oneMinusBeta1, beta2, oneMinusBeta2, eps;
};
DPC_HOST_DEVICE inline AdamWScalars adamwScalars(double lr, double beta1,
                                                 double beta2, double eps,
                                                 double weightDecay,
                                                 int64_t step) {
  double biasCorrection1 = 1.0 - pow(beta1, static_cast<double>(step));
  double biasCorrection2 = 1.0 - pow(beta2, static_cast<double>(step));
  AdamWScalars s;
  s.decayFactor = static_cast<float>(1.0 - lr * weightDecay);
  s.stepSize = static_cast<float>(lr / biasCorrection1);
  s.biasCorrection2Sqrt = static_cast<float>(sqrt(biasCorrection2));
  s.beta1 = static_cast<float>(beta1);
  s.oneMinusBeta1 = static_cast<float>(1.0 - beta1);
  s.beta2 = static_cast<float>(beta2);
  s.oneMinusBeta2 = static_cast<float>(1.0 - beta2);
  s.eps = static_cast<float>(eps);
  return s;
}

/// torch.optim.AdamW on one element. The host computes the per-step scalars
/// in double, as Python does, and rounds each to float once:
/// decayFactor = 1 - lr*wd, oneMinusBeta = 1 - beta, stepSize = lr / (1 -
/// beta1^t), biasCorrection2Sqrt = sqrt(1 - beta2^t). eps is added outside
/// the square root.
DPC_HOST_DEVICE inline void adamwStep(float &param, float grad, float &expAvg,
                                      float &expAvgSq, float decayFactor,
                                      float beta1, float oneMinusBeta1,
                                      float beta2, float oneMinusBeta2,
                                      float eps, float stepSize,
                                      float biasCorrection2Sqrt) {
  param = param * decayFactor;
  expAvg = expAvg * beta1 + grad * oneMinusBeta1;
  expAvgSq = expAvgSq * beta2 + oneMinusBeta2 * grad * grad;
  float denom = sqrtf(expAvgSq) / biasCorrection2Sqrt + eps;
  param = param + (-stepSize) * (expAvg / denom);
}

//===----------------------------------------------------------------------===//
// Row reductions (softmax, cross-entropy). One row per call: a CPU loop
// iterates rows, a simple CUDA kernel gives one thread (or warp) per row.
//===----------------------------------------------------------------------===//

DPC_HOST_DEVICE inline float rowMax(const float *row, int64_t cols) {
  float m = row[0];
  for (int64_t j = 1; j < cols; ++j)
    m = row[j] > m ? row[j] : m;
  return m;
}

/// Index of the first maximum (torch.argmax's tie rule).
DPC_HOST_DEVICE inline int64_t rowArgMax(const float *row, int64_t cols) {
  int64_t best = 0;
  for (int64_t j = 1; j < cols; ++j)
    if (row[j] > row[best])
      best = j;
  return best;
}

/// A row's maximum and log(sum(exp(row - max))). Callers use x - max -
/// logSum rather than x - (max + logSum): the latter rounds the sum at the
/// magnitude of max and loses the digits of large logits.
struct RowLogSumExp {
  float max, logSum;
};
DPC_HOST_DEVICE inline RowLogSumExp rowLogSumExp(const float *row,
                                                 int64_t cols) {
  float m = rowMax(row, cols);
  double sum = 0.0;
  for (int64_t j = 0; j < cols; ++j)
    sum += exp(static_cast<double>(row[j] - m));
  return {m, static_cast<float>(log(sum))};
}

/// rowLogSumExp (the same bits) that also leaves each exp(x - max), rounded
/// to float, in `exps` and the sum of the unrounded ones in `sum`: one exp
/// per element then serves both the loss and the softmax of its gradient.
DPC_HOST_DEVICE inline RowLogSumExp rowLogSumExpKeepingExps(const float *row,
                                                            int64_t cols,
                                                            float *exps,
                                                            double &sum) {
  float m = rowMax(row, cols);
  sum = 0.0;
  for (int64_t j = 0; j < cols; ++j) {
    double e = exp(static_cast<double>(row[j] - m));
    sum += e;
    exps[j] = static_cast<float>(e);
  }
  return {m, static_cast<float>(log(sum))};
}

/// log_softmax of one element given its row's RowLogSumExp.
DPC_HOST_DEVICE inline float logSoftmax(float x, RowLogSumExp r) {
  return (x - r.max) - r.logSum;
}

/// softmax's dx for one element given the row's sum(dy * y).
DPC_HOST_DEVICE inline float softmaxBackward(float y, float dy, float dot) {
  return y * (dy - dot);
}

/// log_softmax's dx for one element (y = log_softmax) given the row's
/// sum(dy).
DPC_HOST_DEVICE inline float logSoftmaxBackward(float y, float dy, float sum) {
  return dy - expf(y) * sum;
}

/// Cross-entropy's gradient for one logit: (softmax - onehot) * g, where g
/// is dLoss / divisor.
DPC_HOST_DEVICE inline float crossEntropyGrad(float x, RowLogSumExp r,
                                              bool isLabel, float g) {
  return (expf(logSoftmax(x, r)) - (isLabel ? 1.f : 0.f)) * g;
}

/// The same from the logit's exp(x - max) kept by rowLogSumExpKeepingExps
/// and the reciprocal of its row's sum: no second exp.
DPC_HOST_DEVICE inline float crossEntropyGradFromExp(float e, double inverseSum,
                                                     bool isLabel, float g) {
  return (static_cast<float>(e * inverseSum) - (isLabel ? 1.f : 0.f)) * g;
}

/// One row's cross-entropy gradient, (softmax - onehot) * g, into `dRow`,
/// with one exp per logit: each exp(x - max) is kept in dRow on the way to
/// the row's log-sum-exp (returned, for the loss) and then scaled by 1 /
/// their sum. The CPU and CUDA kernels both call it.
DPC_HOST_DEVICE inline RowLogSumExp crossEntropyRowGrad(const float *row,
                                                        int64_t classes,
                                                        int32_t label, float g,
                                                        float *dRow) {
  double sum;
  RowLogSumExp lse = rowLogSumExpKeepingExps(row, classes, dRow, sum);
  double inverseSum = 1.0 / sum;
  for (int64_t j = 0; j < classes; ++j)
    dRow[j] = crossEntropyGradFromExp(dRow[j], inverseSum, j == label, g);
  return lse;
}

//===----------------------------------------------------------------------===//
// Dropout's mask: Philox4x32-10, a counter-based generator (Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3", SC'11; Random123's
// constants). An element's draw depends only on its key and position, so
// any split of the batch, any thread layout and any recomputation draws the
// same mask.
//===----------------------------------------------------------------------===//

struct Philox4 {
  uint32_t v[4];
};

DPC_HOST_DEVICE inline Philox4 philox4x32(Philox4 counter, uint32_t key0,
                                          uint32_t key1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += 0x9E3779B9u;
      key1 += 0xBB67AE85u;
    }
    uint64_t p0 = uint64_t(0xD2511F53u) * counter.v[0];
    uint64_t p1 = uint64_t(0xCD9E8D57u) * counter.v[2];
    counter = {{uint32_t(p1 >> 32) ^ counter.v[1] ^ key0, uint32_t(p1),
                uint32_t(p0 >> 32) ^ counter.v[3] ^ key1, uint32_t(p0)}};
  }
  return counter;
}

/// One dropout site in one optimizer step: the element in global row `row`
/// at index `col` of its row belongs to draw d = col / span (span elements
/// share a draw: 1, or a channel's spatial size for Dropout2d), and is kept
/// when the top 24 bits of word d % 4 of philox({d / 4, row, step, site},
/// seed) reach `threshold` (ceil(ratio * 2^24)). A kept element becomes
/// x scale + shift (scale 1 / (1 - ratio) and shift 0 for dropout), a
/// dropped one `fill` (0 for dropout; AlphaDropout's shift and fill keep
/// SELU's mean and variance).
struct DropoutMask {
  uint64_t seed = 0;
  uint32_t step = 0, site = 0;
  uint32_t threshold = 0;
  float scale = 1.f, shift = 0.f, fill = 0.f;
  int64_t span = 1;     // consecutive elements of a row per draw
  bool rowwise = false; // every element draws as the row's element 0
  /// Instead of keeping or dropping: every element times shift + scale u,
  /// u the draw's uniformOfWord (RReLU's random slopes).
  bool uniform = false;
};

/// The words of draws 4 (draw / 4) .. + 3 of global row `row`.
DPC_HOST_DEVICE inline Philox4 dropoutWords(const DropoutMask &m, int64_t row,
                                            int64_t draw) {
  return philox4x32({{uint32_t(draw >> 2), uint32_t(row), m.step, m.site}},
                    uint32_t(m.seed), uint32_t(m.seed >> 32));
}

/// The draw of element `col` of global row `row`.
DPC_HOST_DEVICE inline uint32_t dropoutDraw(const DropoutMask &m, int64_t row,
                                            int64_t col) {
  int64_t draw = m.rowwise ? 0 : col / m.span;
  return dropoutWords(m, row, draw).v[draw & 3];
}

/// Whether a draw keeps its elements.
DPC_HOST_DEVICE inline bool dropoutKeeps(const DropoutMask &m, uint32_t word) {
  return (word >> 8) >= m.threshold;
}

/// The uniform draw in [0, 1) of a word: its top 24 bits over 2^24 (exact
/// in float).
DPC_HOST_DEVICE inline float uniformOfWord(uint32_t word) {
  return float(word >> 8) * (1.f / 16777216.f);
}

DPC_HOST_DEVICE inline float dropoutApply(const DropoutMask &m, uint32_t word,
                                          float x) {
  // Every product and sum rounded on its own, never fused, on every
  // backend.
#ifdef __CUDA_ARCH__
  if (m.uniform)
    return __fmul_rn(
        x, __fadd_rn(__fmul_rn(uniformOfWord(word), m.scale), m.shift));
  if (!dropoutKeeps(m, word))
    return m.fill;
  return __fadd_rn(__fmul_rn(x, m.scale), m.shift);
#else
  if (m.uniform)
    return x * (uniformOfWord(word) * m.scale + m.shift);
  if (!dropoutKeeps(m, word))
    return m.fill;
  return x * m.scale + m.shift;
#endif
}

/// The mask for `ratio` in [0, 1]: ratio 1 drops everything.
inline DropoutMask makeDropoutMask(uint64_t seed, int64_t step, int64_t site,
                                   double ratio, bool rowwise = false) {
  DropoutMask m;
  m.rowwise = rowwise;
  m.seed = seed;
  m.step = uint32_t(step);
  m.site = uint32_t(site);
  m.threshold = uint32_t(std::ceil(ratio * 16777216.0));
  m.scale = ratio < 1 ? float(1.0 / (1.0 - ratio)) : 0.f;
  return m;
}

/// The mask of a dropout kernel call (ElementwiseShapes.h).
inline DropoutMask makeDropoutMask(uint64_t seed, int64_t step,
                                   const plan::DropoutShape &s) {
  DropoutMask m = makeDropoutMask(seed, step, s.site, s.ratio, s.rowwise);
  m.span = s.span;
  m.uniform = s.uniform;
  if (s.scale != 0 || s.uniform)
    m.scale = float(s.scale);
  m.shift = float(s.shift);
  m.fill = float(s.fill);
  return m;
}

} // namespace dpc::kernels::math

#endif // DPC_RUNTIME_KERNELS_KERNELMATH_H
