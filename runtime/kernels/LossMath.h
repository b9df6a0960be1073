//===- LossMath.h - the losses of nn.loss, element by element ---*- C++ -*-===//
//
// One target's loss and gradient for every kind of LossShape, shared by the
// CPU loops (Loss.cpp) and the CUDA kernels, so both compute the same
// formulas: PyTorch's, with reduction="mean" left to the caller (the sum
// over targets divided by the divisor). Sums are in double.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_LOSSMATH_H
#define DPC_RUNTIME_KERNELS_LOSSMATH_H

#include "runtime/abi/HostDevice.h"
#include "runtime/abi/shapes/LossShapes.h"

#include <cmath>
#include <cstdint>

namespace dpc::kernels::loss {

using plan::LossCode;
using plan::LossShape;

/// Whether a cross-entropy target counts: not the ignore index, and a
/// class (the CPU kernels refuse any other; a GPU's count it for nothing).
DPC_HOST_DEVICE inline bool isValidClass(const LossShape &s, int32_t t) {
  return !(s.hasIgnoreIndex && t == s.ignoreIndex) && t >= 0 && t < s.classes;
}

/// A cross-entropy target's weight: 0 unless valid, else its class's
/// weight (1 without class weights).
DPC_HOST_DEVICE inline double targetWeight(const LossShape &s, int32_t t) {
  if (!isValidClass(s, t))
    return 0.0;
  return s.numWeights ? s.weights[t] : 1.0;
}

/// The sum of the class weights (C without weights): label smoothing's
/// uniform part weighs every class.
DPC_HOST_DEVICE inline double sumOfClassWeights(const LossShape &s) {
  if (!s.numWeights)
    return static_cast<double>(s.classes);
  double sum = 0.0;
  for (int32_t c = 0; c < s.numWeights; ++c)
    sum += s.weights[c];
  return sum;
}

/// max and log(sum(exp(x - max))) of the `classes` logits at `x`, `stride`
/// apart.
DPC_HOST_DEVICE inline void logSumExp(const float *x, int64_t classes,
                                      int64_t stride, double &max,
                                      double &logSum) {
  max = x[0];
  for (int64_t c = 1; c < classes; ++c)
    max = x[c * stride] > max ? x[c * stride] : max;
  double sum = 0.0;
  for (int64_t c = 0; c < classes; ++c)
    sum += exp(static_cast<double>(x[c * stride]) - max);
  logSum = log(sum);
}

/// One position's cross-entropy, weighted (PyTorch's, label smoothing
/// included): (1 - e) w[t] (-log p[t]) + e / C sum_c w[c] (-log p[c]).
DPC_HOST_DEVICE inline double crossEntropy(const LossShape &s, const float *x,
                                           int32_t t) {
  if (!isValidClass(s, t))
    return 0.0;
  double w = targetWeight(s, t);
  double max, logSum;
  logSumExp(x, s.classes, s.inner, max, logSum);
  double nll = max + logSum - x[t * s.inner];
  double e = s.labelSmoothing;
  double loss = (1.0 - e) * w * nll;
  if (e > 0) {
    double smooth = 0.0;
    for (int64_t c = 0; c < s.classes; ++c)
      smooth +=
          (s.numWeights ? s.weights[c] : 1.0) * (max + logSum - x[c * s.inner]);
    loss += e / static_cast<double>(s.classes) * smooth;
  }
  return loss;
}

/// The gradient of crossEntropy times `g` into the `classes` entries of
/// `dx` (`stride` apart): (1 - e) w[t] (p[c] - [c = t]) + e / C (W p[c] -
/// w[c]), W the sum of the class weights. An ignored position gets zeros.
DPC_HOST_DEVICE inline void crossEntropyGrad(const LossShape &s, const float *x,
                                             int32_t t, double g, float *dx) {
  if (!isValidClass(s, t)) {
    for (int64_t c = 0; c < s.classes; ++c)
      dx[c * s.inner] = 0.f;
    return;
  }
  double max, logSum;
  logSumExp(x, s.classes, s.inner, max, logSum);
  double w = targetWeight(s, t), e = s.labelSmoothing;
  double totalWeight = e > 0 ? sumOfClassWeights(s) : 0.0;
  double uniform = e / static_cast<double>(s.classes);
  for (int64_t c = 0; c < s.classes; ++c) {
    double p = exp(static_cast<double>(x[c * s.inner]) - max - logSum);
    double grad = (1.0 - e) * w * (p - (c == t ? 1.0 : 0.0));
    if (e > 0)
      grad += uniform * (totalWeight * p - (s.numWeights ? s.weights[c] : 1.0));
    dx[c * s.inner] = static_cast<float>(g * grad);
  }
}

DPC_HOST_DEVICE inline double signOf(double d) {
  return d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0;
}

/// log(1 + exp(x)), without overflow.
DPC_HOST_DEVICE inline double softplus(double x) {
  return (x > 0 ? x : 0.0) + log1p(exp(-fabs(x)));
}

/// One element's loss of output `y` against target `t`; `j` its index
/// (pos_weight cycles with the last dim).
DPC_HOST_DEVICE inline double pointLoss(const LossShape &s, double y, double t,
                                        int64_t j) {
  double d = y - t, z = fabs(d), delta = s.delta;
  switch (s.kind) {
  case LossCode::Mse:
    return d * d;
  case LossCode::L1:
    return z;
  case LossCode::Huber:
    return z < delta ? 0.5 * d * d : delta * (z - 0.5 * delta);
  case LossCode::SmoothL1:
    return delta > 0 && z < delta ? 0.5 * d * d / delta : z - 0.5 * delta;
  case LossCode::BceWithLogits: {
    double p = s.numWeights ? s.weights[j % s.lastDim] : 1.0;
    return p * t * softplus(-y) + (1.0 - t) * softplus(y);
  }
  default:
    return 0.0;
  }
}

/// d pointLoss / dy.
DPC_HOST_DEVICE inline double pointGrad(const LossShape &s, double y, double t,
                                        int64_t j) {
  double d = y - t, z = fabs(d), delta = s.delta;
  switch (s.kind) {
  case LossCode::Mse:
    return 2.0 * d;
  case LossCode::L1:
    return signOf(d);
  case LossCode::Huber:
    return z < delta ? d : delta * signOf(d);
  case LossCode::SmoothL1:
    return delta > 0 && z < delta ? d / delta : signOf(d);
  case LossCode::BceWithLogits: {
    double p = s.numWeights ? s.weights[j % s.lastDim] : 1.0;
    double sigma = 1.0 / (1.0 + exp(-y));
    return -p * t * (1.0 - sigma) + (1.0 - t) * sigma;
  }
  default:
    return 0.0;
  }
}

/// Whether the first argmax of the logits at `x` is `t` (a valid target).
DPC_HOST_DEVICE inline bool predicts(const LossShape &s, const float *x,
                                     int32_t t) {
  int64_t best = 0;
  for (int64_t c = 1; c < s.classes; ++c)
    if (x[c * s.inner] > x[best * s.inner])
      best = c;
  return best == t;
}

/// Where position `i` (of outer * inner) of a cross-entropy's logits start.
DPC_HOST_DEVICE inline int64_t logitsOffset(const LossShape &s, int64_t i) {
  return (i / s.inner) * s.classes * s.inner + i % s.inner;
}

} // namespace dpc::kernels::loss

#endif // DPC_RUNTIME_KERNELS_LOSSMATH_H
