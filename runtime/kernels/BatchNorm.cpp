//===- BatchNorm.cpp - Batch normalization kernels ------------------------===//
//
// Own loops rather than oneDNN's batch_normalization: PyTorch's running
// variance is unbiased and its statistics are accumulated in double, and the
// same math must run in the CUDA backend. Parallel over channels, each
// channel reduced in a fixed order, so results do not depend on the thread
// count. The nChw16c passes (the convolutions' layout) run IsaLoops.h's
// vector loops, built for the widest ISA the CPU has: the same sums in the
// same order as the scalar loops here, at memory speed.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/BatchNorm.h"
#include "runtime/kernels/IsaLoops.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Reorder.h"

#include <algorithm>
#include <cmath>
#include <omp.h>
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

/// The most 16-channel blocks one ISA loop call takes (their per-lane
/// constants live on the stack).
constexpr int64_t kBlocksPerCall = 32;

/// Runs `perRun(ch0, run, offset)` over the 16-channel blocks of an
/// nChw16c shape: each thread a contiguous range of blocks, in runs of at
/// most kBlocksPerCall blocks starting at channel ch0 and element offset
/// `offset` (IsaLoops.h's BatchNormBlock).
template <typename Fn>
void forEachBlockRun(const BatchNormShape &s, Fn &&perRun) {
  int64_t plane = s.h * s.w, blocks = s.c / kChannelBlock;
  int64_t stride = blocks * plane * kChannelBlock;
#pragma omp parallel
  {
    int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    int64_t begin = blocks * thread / threads;
    int64_t end = blocks * (thread + 1) / threads;
    for (int64_t k = begin; k < end; k += kBlocksPerCall) {
      BatchNormBlock run{s.n, plane, stride, std::min(kBlocksPerCall, end - k)};
      perRun(k * kChannelBlock, run, k * plane * kChannelBlock);
    }
  }
}

bool isBlocked(const BatchNormShape &s) {
  static_assert(kBatchNormLanes == kChannelBlock);
  return s.channelBlock == kChannelBlock;
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
  if (isBlocked(s)) {
    auto loop = getIsaLoops().batchNormStatistics;
    forEachBlockRun(
        s, [&](int64_t ch0, const BatchNormBlock &run, int64_t offset) {
          loop(run, x + offset, sum + ch0, sumSq + ch0);
        });
    return;
  }
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
  // Each channel's mean and 1 / std, saved and folded into the running
  // statistics once, by whichever loop owns the channel.
  auto channelConstants = [&](int64_t ch, float &mean, float &invStd) {
    double m, var;
    math::batchNormMoments(sum[ch], sumSq[ch], n, m, var);
    mean = static_cast<float>(m);
    invStd = static_cast<float>(1.0 / std::sqrt(var + params.eps));
    saveMean[ch] = mean;
    saveInvStd[ch] = invStd;
    if (runningMean && runningVar) {
      runningMean[ch] =
          math::runningStatUpdate(runningMean[ch], mean, params.momentum);
      runningVar[ch] = math::runningStatUpdate(
          runningVar[ch], static_cast<float>(math::unbiasedVariance(var, n)),
          params.momentum);
    }
  };
  if (isBlocked(s)) {
    auto loop = getIsaLoops().batchNormApply;
    forEachBlockRun(
        s, [&](int64_t ch0, const BatchNormBlock &run, int64_t offset) {
          BatchNormApplyLanes lanes[kBlocksPerCall];
          for (int64_t k = 0; k < run.blocks; ++k)
            for (int l = 0; l < kBatchNormLanes; ++l) {
              int64_t ch = ch0 + k * kBatchNormLanes + l;
              channelConstants(ch, lanes[k].mean[l], lanes[k].invStd[l]);
              lanes[k].scale[l] = scale[ch];
              lanes[k].shift[l] = shift[ch];
            }
          loop(run, lanes, relu, x + offset, y + offset);
        });
    return;
  }
  forEachGroup(s, [&](int64_t ch0, int64_t lanes, auto &&forEach) {
    float mean[kChannelBlock], invStd[kChannelBlock], g[kChannelBlock],
        b[kChannelBlock];
    for (int64_t l = 0; l < lanes; ++l) {
      int64_t ch = ch0 + l;
      channelConstants(ch, mean[l], invStd[l]);
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
  if (isBlocked(s)) {
    auto loop = getIsaLoops().batchNormGradStatistics;
    forEachBlockRun(s, [&](int64_t ch0, const BatchNormBlock &run,
                           int64_t offset) {
      double total[kBlocksPerCall * kBatchNormLanes],
          dotP[kBlocksPerCall * kBatchNormLanes];
      loop(run, saveMean + ch0, x + offset, dy + offset,
           reluY ? reluY + offset : nullptr, total, dotP);
      // As batchNormBackward's dShift and dScale.
      for (int64_t l = 0; l < run.blocks * kBatchNormLanes; ++l) {
        sumDy[ch0 + l] = static_cast<float>(total[l]);
        sumDyXhat[ch0 + l] = static_cast<float>(dotP[l] * saveInvStd[ch0 + l]);
      }
    });
    return;
  }
  forEachGroup(s, [&](int64_t ch0, int64_t lanes, auto &&forEach) {
    double total[kChannelBlock] = {}, dotP[kChannelBlock] = {};
    float mean[kChannelBlock];
    for (int64_t l = 0; l < lanes; ++l)
      mean[l] = saveMean[ch0 + l];
    forEach([&](int64_t l, int64_t i) {
      float g = math::batchNormOutputGradient(dy, reluY, i);
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
  // A block's per-lane constants from the channel sums.
  auto laneConstants = [&](int64_t ch0, int64_t lanes) {
    BatchNormGradLanes k;
    for (int64_t l = 0; l < lanes; ++l) {
      int64_t ch = ch0 + l;
      k.mean[l] = saveMean[ch];
      k.invStd[l] = saveInvStd[ch];
      // sum(dy * (x - mean)) * invStd^2 / n, as batchNormBackward's.
      k.meanDy[l] = static_cast<float>(sumDy[ch] / n);
      k.projScale[l] = static_cast<float>(static_cast<double>(sumDyXhat[ch]) *
                                          k.invStd[l] / n);
      k.scale[l] = scale[ch];
    }
    return k;
  };
  if (isBlocked(s)) {
    auto loop = getIsaLoops().batchNormGradApply;
    forEachBlockRun(s, [&](int64_t ch0, const BatchNormBlock &run,
                           int64_t offset) {
      BatchNormGradLanes lanes[kBlocksPerCall];
      for (int64_t k = 0; k < run.blocks; ++k)
        lanes[k] = laneConstants(ch0 + k * kBatchNormLanes, kBatchNormLanes);
      loop(run, lanes, x + offset, dy + offset,
           reluY ? reluY + offset : nullptr, dx + offset);
    });
    return;
  }
  forEachGroup(s, [&](int64_t ch0, int64_t lanes, auto &&forEach) {
    BatchNormGradLanes k = laneConstants(ch0, lanes);
    forEach([&](int64_t l, int64_t i) {
      dx[i] = math::batchNormBackwardInput(
          math::batchNormOutputGradient(dy, reluY, i), x[i], k.mean[l],
          k.invStd[l], k.scale[l], k.meanDy[l], k.projScale[l]);
    });
  });
}

} // namespace dpc::kernels
