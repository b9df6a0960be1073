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
#include "runtime/kernels/Reorder.h"

#include <cmath>
#include <vector>

namespace dpc::kernels {

namespace {

/// Runs `perGroup(ch0, lanes, forEach)` for each group of `lanes` channels
/// that the layout interleaves (one in NCHW, 16 in nChw16c), in parallel
/// over groups; `forEach(f)` calls f(lane, offset) for every element of the
/// group's channels ch0 + lane, each channel's in (n, h, w) order whatever
/// the layout, so that sums come out the same in either.
template <int64_t Lanes, typename Fn>
void forEachGroupOf(const BatchNormShape &s, Fn &&perGroup) {
  int64_t plane = s.h * s.w, groups = s.c / Lanes;
#pragma omp parallel for
  for (int64_t g = 0; g < groups; ++g)
    perGroup(g * Lanes, Lanes, [&](auto &&f) {
      for (int64_t i = 0; i < s.n; ++i) {
        int64_t base = (i * groups + g) * plane * Lanes;
        for (int64_t j = 0; j < plane; ++j)
          for (int64_t l = 0; l < Lanes; ++l)
            f(l, base + j * Lanes + l);
      }
    });
}

template <typename Fn> void forEachGroup(const BatchNormShape &s, Fn &&fn) {
  if (s.channelBlock == kChannelBlock)
    forEachGroupOf<kChannelBlock>(s, fn);
  else
    forEachGroupOf<1>(s, fn);
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
  forEachGroup(s, [&](int64_t ch0, int64_t lanes, auto &&forEach) {
    float invStd[kChannelBlock], mean[kChannelBlock], g[kChannelBlock],
        b[kChannelBlock];
    for (int64_t l = 0; l < lanes; ++l) {
      invStd[l] = 1.f / std::sqrt(runningVar[ch0 + l] + params.eps);
      mean[l] = runningMean[ch0 + l];
      g[l] = scale[ch0 + l];
      b[l] = shift[ch0 + l];
    }
    forEach([&](int64_t l, int64_t i) {
      float v = math::batchNormApply(x[i], mean[l], invStd[l], g[l], b[l]);
      y[i] = relu ? math::reluForward(v) : v;
    });
  });
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
  count[0] = static_cast<double>(s.n * s.h * s.w);
  forEachGroup(s, [&](int64_t ch0, int64_t lanes, auto &&forEach) {
    double total[kChannelBlock] = {}, totalSq[kChannelBlock] = {};
    forEach([&](int64_t l, int64_t i) {
      double v = x[i];
      total[l] += v;
      totalSq[l] += v * v;
    });
    for (int64_t l = 0; l < lanes; ++l) {
      sum[ch0 + l] = total[l];
      sumSq[ch0 + l] = totalSq[l];
    }
  });
}

void batchNormApply(const BatchNormShape &s, const BatchNormParams &params,
                    const float *x, const float *scale, const float *shift,
                    float *runningMean, float *runningVar, const double *sum,
                    const double *sumSq, const double *count, float *y,
                    float *saveMean, float *saveInvStd, bool relu) {
  double n = count[0];
  forEachGroup(s, [&](int64_t ch0, int64_t lanes, auto &&forEach) {
    float mean[kChannelBlock], invStd[kChannelBlock], g[kChannelBlock],
        b[kChannelBlock];
    for (int64_t l = 0; l < lanes; ++l) {
      int64_t ch = ch0 + l;
      double m, var;
      math::batchNormMoments(sum[ch], sumSq[ch], n, m, var);
      mean[l] = static_cast<float>(m);
      invStd[l] = static_cast<float>(1.0 / std::sqrt(var + params.eps));
      saveMean[ch] = mean[l];
      saveInvStd[ch] = invStd[l];
      if (runningMean && runningVar) {
        runningMean[ch] =
            math::runningStatUpdate(runningMean[ch], mean[l], params.momentum);
        runningVar[ch] = math::runningStatUpdate(
            runningVar[ch], static_cast<float>(math::unbiasedVariance(var, n)),
            params.momentum);
      }
      g[l] = scale[ch];
      b[l] = shift[ch];
    }
    forEach([&](int64_t l, int64_t i) {
      float v = math::batchNormApply(x[i], mean[l], invStd[l], g[l], b[l]);
      y[i] = relu ? math::reluForward(v) : v;
    });
  });
}

void batchNormGradStatistics(const BatchNormShape &s, const float *x,
                             const float *dy, const float *saveMean,
                             const float *saveInvStd, float *sumDy,
                             float *sumDyXhat, const float *reluY) {
  forEachGroup(s, [&](int64_t ch0, int64_t lanes, auto &&forEach) {
    double total[kChannelBlock] = {}, dotP[kChannelBlock] = {};
    float mean[kChannelBlock];
    for (int64_t l = 0; l < lanes; ++l)
      mean[l] = saveMean[ch0 + l];
    forEach([&](int64_t l, int64_t i) {
      float g = outputGradient(dy, reluY, i);
      total[l] += g;
      dotP[l] += static_cast<double>(g) * (x[i] - mean[l]);
    });
    // As batchNormBackward's dShift and dScale.
    for (int64_t l = 0; l < lanes; ++l) {
      sumDy[ch0 + l] = static_cast<float>(total[l]);
      sumDyXhat[ch0 + l] = static_cast<float>(dotP[l] * saveInvStd[ch0 + l]);
    }
  });
}

void batchNormGradApply(const BatchNormShape &s, const float *x,
                        const float *dy, const float *scale,
                        const float *saveMean, const float *saveInvStd,
                        const float *sumDy, const float *sumDyXhat,
                        const double *count, float *dx, const float *reluY) {
  double n = count[0];
  if (s.n == 0 || !(n > 0))
    return;
  forEachGroup(s, [&](int64_t ch0, int64_t lanes, auto &&forEach) {
    float mean[kChannelBlock], invStd[kChannelBlock], meanDy[kChannelBlock],
        projScale[kChannelBlock], g[kChannelBlock];
    for (int64_t l = 0; l < lanes; ++l) {
      int64_t ch = ch0 + l;
      mean[l] = saveMean[ch];
      invStd[l] = saveInvStd[ch];
      // sum(dy * (x - mean)) * invStd^2 / n, as batchNormBackward's.
      meanDy[l] = static_cast<float>(sumDy[ch] / n);
      projScale[l] = static_cast<float>(static_cast<double>(sumDyXhat[ch]) *
                                        invStd[l] / n);
      g[l] = scale[ch];
    }
    forEach([&](int64_t l, int64_t i) {
      dx[i] = math::batchNormBackwardInput(outputGradient(dy, reluY, i), x[i],
                                           mean[l], invStd[l], g[l], meanDy[l],
                                           projScale[l]);
    });
  });
}

} // namespace dpc::kernels
