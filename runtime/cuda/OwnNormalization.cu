//===- OwnNormalization.cu - normalization as own CUDA kernels ------------===//
//
// Layer norm (a thread per row, then per column for the parameter
// gradients) and batch norm (one block per channel, reductions in double in
// a fixed tree order): every batch norm where cuDNN does not run it, and the
// synchronized batch norm's statistics and apply kernels.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/OwnKernelLaunch.cuh"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/KernelMath.h"

#include <cmath>

namespace dpc::cuda {

namespace elements = kernels::elements;
namespace math = kernels::math;
using kernels::BatchNormParams;
using kernels::BatchNormShape;
using kernels::LayerNormShape;

namespace {

// Layer norm: a thread per row (statistics, y or dx), then, backward, a
// thread per column (scale and bias gradients over the rows).
__global__ void layerNormForwardKernel(LayerNormShape s, const float *x,
                                       const float *scale, const float *bias,
                                       float *y) {
  DPC_GRID_STRIDE(r, s.rows) {
    const float *row = x + r * s.cols;
    elements::RowStats stats = elements::layerNormStats(row, s.cols, s.epsilon);
    for (int64_t c = 0; c < s.cols; ++c)
      y[r * s.cols + c] = elements::layerNormForward(row[c], stats, scale[c],
                                                     bias ? bias[c] : 0.f);
  }
}

__global__ void layerNormBackwardRowsKernel(LayerNormShape s, const float *x,
                                            const float *dy, const float *scale,
                                            elements::RowStats *stats,
                                            float *dx) {
  DPC_GRID_STRIDE(r, s.rows) {
    int64_t offset = r * s.cols;
    stats[r] = elements::layerNormStats(x + offset, s.cols, s.epsilon);
    elements::layerNormBackwardRow(x + offset, dy + offset, scale, s.cols,
                                   stats[r], dx + offset);
  }
}

__global__ void layerNormParamGradsKernel(LayerNormShape s, const float *x,
                                          const float *dy,
                                          const elements::RowStats *stats,
                                          float *dScale, float *dBias) {
  DPC_GRID_STRIDE(c, s.cols) {
    elements::layerNormParamGrads(x, dy, stats, s.rows, s.cols, c, dScale,
                                  dBias);
  }
}

/// The same sums with a block per column, for many rows.
__global__ void layerNormParamGradsBlockKernel(LayerNormShape s, const float *x,
                                               const float *dy,
                                               const elements::RowStats *stats,
                                               float *dScale, float *dBias) {
  int64_t c = blockIdx.x;
  double sumScale = 0, sumBias = 0;
  for (int64_t r = threadIdx.x; r < s.rows; r += blockDim.x) {
    float g = dy[r * s.cols + c];
    sumScale +=
        double(g) * ((x[r * s.cols + c] - stats[r].mean) * stats[r].invStd);
    sumBias += g;
  }
  sumScale = blockSum(sumScale);
  sumBias = blockSum(sumBias);
  if (threadIdx.x == 0) {
    dScale[c] = float(sumScale);
    if (dBias)
      dBias[c] = float(sumBias);
  }
}

//===----------------------------------------------------------------------===//
// Batch normalization: one block per channel, reductions in double
//===----------------------------------------------------------------------===//

/// Offset of the k-th element (0 <= k < n*h*w) of channel `ch`.
__device__ int64_t channelOffset(const BatchNormShape &s, int64_t ch,
                                 int64_t k) {
  int64_t plane = s.h * s.w;
  return (k / plane * s.c + ch) * plane + k % plane;
}

#define DPC_CHANNEL_LOOP(k, count)                                             \
  for (int64_t k = threadIdx.x; k < (count); k += blockDim.x)

__global__ void bnTrainingForwardKernel(BatchNormShape s, BatchNormParams p,
                                        const float *x, const float *scale,
                                        const float *shift, float *y,
                                        float *saveMean, float *saveInvStd,
                                        float *runningMean, float *runningVar) {
  int64_t ch = blockIdx.x, count = s.n * s.h * s.w;
  double sum = 0.0;
  DPC_CHANNEL_LOOP(k, count) { sum += x[channelOffset(s, ch, k)]; }
  double mean = blockSum(sum) / count;
  double sq = 0.0;
  DPC_CHANNEL_LOOP(k, count) {
    double d = x[channelOffset(s, ch, k)] - mean;
    sq += d * d;
  }
  double sqSum = blockSum(sq);
  double var = sqSum / count;
  float meanF = static_cast<float>(mean);
  float invStd = static_cast<float>(1.0 / sqrt(var + p.eps));
  if (threadIdx.x == 0) {
    saveMean[ch] = meanF;
    saveInvStd[ch] = invStd;
    if (runningMean && runningVar) {
      double unbiased = count > 1 ? sqSum / (count - 1) : var;
      runningMean[ch] =
          math::runningStatUpdate(runningMean[ch], meanF, p.momentum);
      runningVar[ch] = math::runningStatUpdate(
          runningVar[ch], static_cast<float>(unbiased), p.momentum);
    }
  }
  float g = scale[ch], b = shift[ch];
  DPC_CHANNEL_LOOP(k, count) {
    int64_t at = channelOffset(s, ch, k);
    y[at] = math::batchNormApply(x[at], meanF, invStd, g, b);
  }
}

__global__ void bnInferenceKernel(BatchNormShape s, BatchNormParams p,
                                  int64_t n, const float *x, const float *scale,
                                  const float *shift, const float *runningMean,
                                  const float *runningVar, float *y) {
  int64_t plane = s.h * s.w;
  DPC_GRID_STRIDE(i, n) {
    int64_t ch = i / plane % s.c;
    float invStd = 1.f / sqrtf(runningVar[ch] + p.eps);
    y[i] = math::batchNormApply(x[i], runningMean[ch], invStd, scale[ch],
                                shift[ch]);
  }
}

__global__ void bnBackwardKernel(BatchNormShape s, const float *x,
                                 const float *dy, const float *scale,
                                 const float *saveMean, const float *saveInvStd,
                                 float *dx, float *dScale, float *dShift) {
  int64_t ch = blockIdx.x, count = s.n * s.h * s.w;
  float mean = saveMean[ch], invStd = saveInvStd[ch];
  double sumDy = 0.0, dot = 0.0;
  DPC_CHANNEL_LOOP(k, count) {
    int64_t at = channelOffset(s, ch, k);
    sumDy += dy[at];
    dot += static_cast<double>(dy[at]) * (x[at] - mean);
  }
  sumDy = blockSum(sumDy);
  dot = blockSum(dot);
  if (threadIdx.x == 0) {
    dScale[ch] = static_cast<float>(dot * invStd);
    dShift[ch] = static_cast<float>(sumDy);
  }
  float meanDy = static_cast<float>(sumDy / count);
  float projScale =
      static_cast<float>(dot / count * invStd * static_cast<double>(invStd));
  float g = scale[ch];
  DPC_CHANNEL_LOOP(k, count) {
    int64_t at = channelOffset(s, ch, k);
    dx[at] = math::batchNormBackwardInput(dy[at], x[at], mean, invStd, g,
                                          meanDy, projScale);
  }
}

__global__ void bnStatisticsKernel(BatchNormShape s, const float *x,
                                   double *sum, double *sumSq, double *count) {
  int64_t ch = blockIdx.x, total = s.n * s.h * s.w;
  double a = 0.0, b = 0.0;
  DPC_CHANNEL_LOOP(k, total) {
    double v = x[channelOffset(s, ch, k)];
    a += v;
    b += v * v;
  }
  a = blockSum(a);
  b = blockSum(b);
  if (threadIdx.x == 0) {
    sum[ch] = a;
    sumSq[ch] = b;
    if (ch == 0)
      count[0] = static_cast<double>(total);
  }
}

__global__ void bnApplyKernel(BatchNormShape s, BatchNormParams p,
                              const float *x, const float *scale,
                              const float *shift, float *runningMean,
                              float *runningVar, const double *sum,
                              const double *sumSq, const double *count,
                              float *y, float *saveMean, float *saveInvStd) {
  int64_t ch = blockIdx.x, total = s.n * s.h * s.w;
  double n = count[0], mean, var;
  math::batchNormMoments(sum[ch], sumSq[ch], n, mean, var);
  float meanF = static_cast<float>(mean);
  float invStd = static_cast<float>(1.0 / sqrt(var + p.eps));
  if (threadIdx.x == 0) {
    saveMean[ch] = meanF;
    saveInvStd[ch] = invStd;
    runningMean[ch] =
        math::runningStatUpdate(runningMean[ch], meanF, p.momentum);
    runningVar[ch] = math::runningStatUpdate(
        runningVar[ch], static_cast<float>(math::unbiasedVariance(var, n)),
        p.momentum);
  }
  float g = scale[ch], b = shift[ch];
  DPC_CHANNEL_LOOP(k, total) {
    int64_t at = channelOffset(s, ch, k);
    y[at] = math::batchNormApply(x[at], meanF, invStd, g, b);
  }
}

__global__ void bnGradStatisticsKernel(BatchNormShape s, const float *x,
                                       const float *dy, const float *saveMean,
                                       const float *saveInvStd, float *sumDy,
                                       float *sumDyXhat) {
  int64_t ch = blockIdx.x, total = s.n * s.h * s.w;
  float mean = saveMean[ch];
  double a = 0.0, dot = 0.0;
  DPC_CHANNEL_LOOP(k, total) {
    int64_t at = channelOffset(s, ch, k);
    a += dy[at];
    dot += static_cast<double>(dy[at]) * (x[at] - mean);
  }
  a = blockSum(a);
  dot = blockSum(dot);
  if (threadIdx.x == 0) {
    sumDy[ch] = static_cast<float>(a);
    sumDyXhat[ch] = static_cast<float>(dot * saveInvStd[ch]);
  }
}

__global__ void bnGradApplyKernel(BatchNormShape s, const float *x,
                                  const float *dy, const float *scale,
                                  const float *saveMean,
                                  const float *saveInvStd, const float *sumDy,
                                  const float *sumDyXhat, const double *count,
                                  float *dx) {
  int64_t ch = blockIdx.x, total = s.n * s.h * s.w;
  double n = count[0];
  if (!(n > 0))
    return;
  float mean = saveMean[ch], invStd = saveInvStd[ch];
  float meanDy = static_cast<float>(sumDy[ch] / n);
  float projScale =
      static_cast<float>(static_cast<double>(sumDyXhat[ch]) * invStd / n);
  float g = scale[ch];
  DPC_CHANNEL_LOOP(k, total) {
    int64_t at = channelOffset(s, ch, k);
    dx[at] = math::batchNormBackwardInput(dy[at], x[at], mean, invStd, g,
                                          meanDy, projScale);
  }
}

} // namespace

void layerNormForward(cudaStream_t stream, const LayerNormShape &s,
                      const float *x, const float *scale, const float *bias,
                      float *y) {
  launch(stream, s.rows, layerNormForwardKernel, s, x, scale, bias, y);
}

void layerNormBackward(cudaStream_t stream, const LayerNormShape &s,
                       const float *x, const float *dy, const float *scale,
                       elements::RowStats *stats, float *dx, float *dScale,
                       float *dBias) {
  launch(stream, s.rows, layerNormBackwardRowsKernel, s, x, dy, scale, stats,
         dx);
  auto *rowStats = static_cast<const elements::RowStats *>(stats);
  if (reduceByBlocks(s.rows))
    launchBlocks(stream, s.cols, layerNormParamGradsBlockKernel, s, x, dy,
                 rowStats, dScale, dBias);
  else
    launch(stream, s.cols, layerNormParamGradsKernel, s, x, dy, rowStats,
           dScale, dBias);
}

void batchNormTrainingForward(cudaStream_t stream, const BatchNormShape &s,
                              const BatchNormParams &p, const float *x,
                              const float *scale, const float *shift, float *y,
                              float *saveMean, float *saveInvStd,
                              float *runningMean, float *runningVar) {
  launchBlocks(stream, s.c, bnTrainingForwardKernel, s, p, x, scale, shift, y,
               saveMean, saveInvStd, runningMean, runningVar);
}

void batchNormInferenceForward(cudaStream_t stream, const BatchNormShape &s,
                               const BatchNormParams &p, const float *x,
                               const float *scale, const float *shift,
                               const float *runningMean,
                               const float *runningVar, float *y) {
  int64_t n = s.n * s.c * s.h * s.w;
  launch(stream, n, bnInferenceKernel, s, p, n, x, scale, shift, runningMean,
         runningVar, y);
}

void batchNormBackward(cudaStream_t stream, const BatchNormShape &s,
                       const float *x, const float *dy, const float *scale,
                       const float *saveMean, const float *saveInvStd,
                       float *dx, float *dScale, float *dShift) {
  launchBlocks(stream, s.c, bnBackwardKernel, s, x, dy, scale, saveMean,
               saveInvStd, dx, dScale, dShift);
}

void batchNormStatistics(cudaStream_t stream, const BatchNormShape &s,
                         const float *x, double *sum, double *sumSq,
                         double *count) {
  launchBlocks(stream, s.c, bnStatisticsKernel, s, x, sum, sumSq, count);
}

void batchNormApply(cudaStream_t stream, const BatchNormShape &s,
                    const BatchNormParams &p, const float *x,
                    const float *scale, const float *shift, float *runningMean,
                    float *runningVar, const double *sum, const double *sumSq,
                    const double *count, float *y, float *saveMean,
                    float *saveInvStd) {
  launchBlocks(stream, s.c, bnApplyKernel, s, p, x, scale, shift, runningMean,
               runningVar, sum, sumSq, count, y, saveMean, saveInvStd);
}

void batchNormGradStatistics(cudaStream_t stream, const BatchNormShape &s,
                             const float *x, const float *dy,
                             const float *saveMean, const float *saveInvStd,
                             float *sumDy, float *sumDyXhat) {
  launchBlocks(stream, s.c, bnGradStatisticsKernel, s, x, dy, saveMean,
               saveInvStd, sumDy, sumDyXhat);
}

void batchNormGradApply(cudaStream_t stream, const BatchNormShape &s,
                        const float *x, const float *dy, const float *scale,
                        const float *saveMean, const float *saveInvStd,
                        const float *sumDy, const float *sumDyXhat,
                        const double *count, float *dx) {
  if (s.n == 0)
    return;
  launchBlocks(stream, s.c, bnGradApplyKernel, s, x, dy, scale, saveMean,
               saveInvStd, sumDy, sumDyXhat, count, dx);
}

} // namespace dpc::cuda
