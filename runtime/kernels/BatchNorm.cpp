//===- BatchNorm.cpp - Batch normalization kernels ------------------------===//
//
// Own loops rather than oneDNN's batch_normalization: PyTorch's running
// variance is unbiased and its statistics are accumulated in double, and the
// same math must run in the CUDA backend. Parallel over channels, each
// channel reduced in a fixed order, so results do not depend on the thread
// count.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/BatchNorm.h"
#include "runtime/kernels/KernelMath.h"

#include <cmath>
#include <vector>

namespace dpc::kernels {

namespace {

/// Calls f(ptrOffset) for each contiguous [h*w] run of channel ch.
template <typename Fn>
void forEachPlane(const BatchNormShape &s, int64_t ch, Fn &&f) {
  int64_t plane = s.h * s.w;
  for (int64_t i = 0; i < s.n; ++i)
    f((i * s.c + ch) * plane);
}

/// The gradient a batch norm's output gets: dy, or with a fused ReLU after
/// it, dy masked by the ReLU's output, as reluBackward computes it.
inline float outputGradient(const float *dy, const float *reluY, int64_t i) {
  return reluY ? math::reluBackward(dy[i], reluY[i]) : dy[i];
}

} // namespace

// One device's training batch norm is the synchronized one over a single
// replica: the same sums, the same formulas, so that N synchronized devices
// round to exactly what one device computes.

void batchNormTrainingForward(const BatchNormShape &s,
                              const BatchNormParams &params, const float *x,
                              const float *scale, const float *shift, float *y,
                              float *saveMean, float *saveInvStd,
                              float *runningMean, float *runningVar,
                              bool relu) {
  std::vector<double> sum(s.c), sumSq(s.c);
  double count;
  batchNormStatistics(s, x, sum.data(), sumSq.data(), &count);
  batchNormApply(s, params, x, scale, shift, runningMean, runningVar,
                 sum.data(), sumSq.data(), &count, y, saveMean, saveInvStd,
                 relu);
}

void batchNormInferenceForward(const BatchNormShape &s,
                               const BatchNormParams &params, const float *x,
                               const float *scale, const float *shift,
                               const float *runningMean,
                               const float *runningVar, float *y, bool relu) {
  int64_t plane = s.h * s.w;
#pragma omp parallel for collapse(2)
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t ch = 0; ch < s.c; ++ch) {
      float invStd = 1.f / std::sqrt(runningVar[ch] + params.eps);
      int64_t off = (i * s.c + ch) * plane;
      for (int64_t j = 0; j < plane; ++j) {
        float v = math::batchNormApply(x[off + j], runningMean[ch], invStd,
                                       scale[ch], shift[ch]);
        y[off + j] = relu ? math::reluForward(v) : v;
      }
    }
}

void batchNormBackward(const BatchNormShape &s, const float *x, const float *dy,
                       const float *scale, const float *saveMean,
                       const float *saveInvStd, float *dx, float *dScale,
                       float *dShift, const float *reluY) {
  batchNormGradStatistics(s, x, dy, saveMean, saveInvStd, dShift, dScale,
                          reluY);
  double count = static_cast<double>(s.n * s.h * s.w);
  batchNormGradApply(s, x, dy, scale, saveMean, saveInvStd, dShift, dScale,
                     &count, dx, reluY);
}

void batchNormStatistics(const BatchNormShape &s, const float *x, double *sum,
                         double *sumSq, double *count) {
  int64_t plane = s.h * s.w;
  count[0] = static_cast<double>(s.n * plane);
#pragma omp parallel for
  for (int64_t ch = 0; ch < s.c; ++ch) {
    double total = 0.0, totalSq = 0.0;
    forEachPlane(s, ch, [&](int64_t off) {
      for (int64_t j = 0; j < plane; ++j) {
        double v = x[off + j];
        total += v;
        totalSq += v * v;
      }
    });
    sum[ch] = total;
    sumSq[ch] = totalSq;
  }
}

void batchNormApply(const BatchNormShape &s, const BatchNormParams &params,
                    const float *x, const float *scale, const float *shift,
                    float *runningMean, float *runningVar, const double *sum,
                    const double *sumSq, const double *count, float *y,
                    float *saveMean, float *saveInvStd, bool relu) {
  int64_t plane = s.h * s.w;
  double n = count[0];
#pragma omp parallel for
  for (int64_t ch = 0; ch < s.c; ++ch) {
    double mean, var;
    math::batchNormMoments(sum[ch], sumSq[ch], n, mean, var);
    float meanF = static_cast<float>(mean);
    float invStd = static_cast<float>(1.0 / std::sqrt(var + params.eps));
    saveMean[ch] = meanF;
    saveInvStd[ch] = invStd;
    if (runningMean && runningVar) {
      runningMean[ch] =
          math::runningStatUpdate(runningMean[ch], meanF, params.momentum);
      runningVar[ch] = math::runningStatUpdate(
          runningVar[ch], static_cast<float>(math::unbiasedVariance(var, n)),
          params.momentum);
    }
    float g = scale[ch], b = shift[ch];
    forEachPlane(s, ch, [&](int64_t off) {
      for (int64_t j = 0; j < plane; ++j) {
        float v = math::batchNormApply(x[off + j], meanF, invStd, g, b);
        y[off + j] = relu ? math::reluForward(v) : v;
      }
    });
  }
}

void batchNormGradStatistics(const BatchNormShape &s, const float *x,
                             const float *dy, const float *saveMean,
                             const float *saveInvStd, float *sumDy,
                             float *sumDyXhat, const float *reluY) {
  int64_t plane = s.h * s.w;
#pragma omp parallel for
  for (int64_t ch = 0; ch < s.c; ++ch) {
    float mean = saveMean[ch];
    double total = 0.0, dotP = 0.0;
    forEachPlane(s, ch, [&](int64_t off) {
      for (int64_t j = 0; j < plane; ++j) {
        float g = outputGradient(dy, reluY, off + j);
        total += g;
        dotP += static_cast<double>(g) * (x[off + j] - mean);
      }
    });
    // As batchNormBackward's dShift and dScale.
    sumDy[ch] = static_cast<float>(total);
    sumDyXhat[ch] = static_cast<float>(dotP * saveInvStd[ch]);
  }
}

void batchNormGradApply(const BatchNormShape &s, const float *x,
                        const float *dy, const float *scale,
                        const float *saveMean, const float *saveInvStd,
                        const float *sumDy, const float *sumDyXhat,
                        const double *count, float *dx, const float *reluY) {
  int64_t plane = s.h * s.w;
  double n = count[0];
  if (s.n == 0 || !(n > 0))
    return;
#pragma omp parallel for
  for (int64_t ch = 0; ch < s.c; ++ch) {
    float mean = saveMean[ch], invStd = saveInvStd[ch];
    // sum(dy * (x - mean)) * invStd^2 / n, as batchNormBackward's.
    float meanDy = static_cast<float>(sumDy[ch] / n);
    float projScale =
        static_cast<float>(static_cast<double>(sumDyXhat[ch]) * invStd / n);
    float g = scale[ch];
    forEachPlane(s, ch, [&](int64_t off) {
      for (int64_t j = 0; j < plane; ++j)
        dx[off + j] = math::batchNormBackwardInput(
            outputGradient(dy, reluY, off + j), x[off + j], mean, invStd, g,
            meanDy, projScale);
    });
  }
}

} // namespace dpc::kernels
