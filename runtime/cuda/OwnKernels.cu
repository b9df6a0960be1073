//===- OwnKernels.cu - dpc's own CUDA kernels -----------------------------===//
//
// One thread per output element (or per row, plane or channel where a
// reduction runs in a fixed order), grid-stride loops, 64-bit indices. The
// formulas are runtime/kernels/KernelMath.h, the CPU's; the index-heavy
// element bodies are KernelElements.h, checked on the CPU against the CPU
// kernels.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaCheck.h"
#include "runtime/cuda/OwnKernels.h"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/KernelMath.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dpc::cuda {

namespace elements = kernels::elements;

namespace math = kernels::math;
using kernels::BatchNormParams;
using kernels::BatchNormShape;
using kernels::BroadcastShape;
using kernels::EmbeddingShape;
using kernels::LayerNormShape;
using kernels::Pad2dShape;
using kernels::Pool2dShape;

namespace {

constexpr int kBlock = 256;

/// `threads` logical threads of `kernel` (a grid-stride kernel) on `stream`.
template <typename... Params, typename... Args>
void launch(cudaStream_t stream, int64_t threads, void (*kernel)(Params...),
            Args... args) {
  if (threads <= 0)
    return;
  int64_t blocks = std::min<int64_t>((threads + kBlock - 1) / kBlock, 1 << 20);
  kernel<<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(args...);
  DPC_CUDA_CHECK(cudaGetLastError());
}

/// One block of kBlock threads per item (a channel).
template <typename... Params, typename... Args>
void launchBlocks(cudaStream_t stream, int64_t blocks,
                  void (*kernel)(Params...), Args... args) {
  if (blocks <= 0)
    return;
  kernel<<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(args...);
  DPC_CUDA_CHECK(cudaGetLastError());
}

#define DPC_GRID_STRIDE(i, n)                                                  \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);    \
       i += int64_t(gridDim.x) * blockDim.x)

/// The sum of every thread's `value` over a block of kBlock threads, in a
/// fixed tree order; every thread gets it.
__device__ double blockSum(double value) {
  __shared__ double partial[kBlock];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int stride = kBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  double total = partial[0];
  __syncthreads();
  return total;
}

__device__ void storeScalar(void *y, ScalarType type, double value) {
  switch (type) {
  case ScalarType::F32:
    *static_cast<float *>(y) = static_cast<float>(value);
    break;
  case ScalarType::F64:
    *static_cast<double *>(y) = value;
    break;
  case ScalarType::I32:
    *static_cast<int32_t *>(y) = static_cast<int32_t>(value);
    break;
  case ScalarType::I64:
    *static_cast<int64_t *>(y) = static_cast<int64_t>(value);
    break;
  }
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

__global__ void activationForwardKernel(Activation kind, int64_t n,
                                        const float *x, float *y) {
  DPC_GRID_STRIDE(i, n) {
    float v = x[i];
    y[i] = kind == Activation::Relu         ? math::reluForward(v)
           : kind == Activation::Sigmoid    ? math::sigmoidForward(v)
           : kind == Activation::Reciprocal ? math::reciprocalForward(v)
                                            : math::tanhForward(v);
  }
}

__global__ void activationBackwardKernel(Activation kind, int64_t n,
                                         const float *y, const float *dy,
                                         float *dx) {
  DPC_GRID_STRIDE(i, n) {
    dx[i] = kind == Activation::Relu ? math::reluBackward(dy[i], y[i])
            : kind == Activation::Sigmoid
                ? math::sigmoidBackward(dy[i], y[i])
            : kind == Activation::Reciprocal
                ? math::reciprocalBackward(dy[i], y[i])
                : math::tanhBackward(dy[i], y[i]);
  }
}

__global__ void inputActivationForwardKernel(math::InputActivation kind,
                                             math::ActivationParams params,
                                             int64_t n, const float *x,
                                             float *y) {
  DPC_GRID_STRIDE(i, n) {
    y[i] = math::inputActivationForward(kind, params, x[i]);
  }
}

__global__ void inputActivationBackwardKernel(math::InputActivation kind,
                                              math::ActivationParams params,
                                              int64_t n, const float *x,
                                              const float *dy, float *dx) {
  DPC_GRID_STRIDE(i, n) {
    dx[i] = math::inputActivationBackward(kind, params, dy[i], x[i]);
  }
}

__global__ void dropoutKernel(math::DropoutMask mask, int64_t cols,
                              int64_t firstRow, int64_t n, const float *x,
                              float *y) {
  DPC_GRID_STRIDE(i, n) {
    y[i] = elements::dropout(mask, cols, firstRow, i, x);
  }
}

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
                                            const float *dy,
                                            const float *scale,
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

// Embedding: a thread per output value; backward, a thread per table
// column, adding the rows in index order (deterministic, as on the CPU).
// Indices are checked on the host when they are bound.
__global__ void embeddingForwardKernel(EmbeddingShape s, const float *table,
                                       const int32_t *indices, float *y) {
  DPC_GRID_STRIDE(i, s.count * s.dim) {
    int64_t row = indices[i / s.dim];
    y[i] = row >= 0 && row < s.rows ? table[row * s.dim + i % s.dim] : NAN;
  }
}

__global__ void embeddingBackwardKernel(EmbeddingShape s,
                                        const int32_t *indices,
                                        const float *dy, float *dTable) {
  DPC_GRID_STRIDE(d, s.dim) {
    elements::embeddingGradColumn(indices, s.count, s.dim, d, dy, dTable);
  }
}

__global__ void permuteKernel(elements::PermuteIndex index, int64_t n,
                              const uint32_t *x, uint32_t *y) {
  DPC_GRID_STRIDE(o, n) { y[o] = x[elements::permuteSource(index, o)]; }
}

//===----------------------------------------------------------------------===//
// Broadcasting binary ops
//===----------------------------------------------------------------------===//

__global__ void binaryForwardKernel(BroadcastShape s, bool multiply,
                                    int64_t n, const float *lhs,
                                    const float *rhs, float *out) {
  DPC_GRID_STRIDE(i, n) {
    float r = rhs[elements::rhsIndexOf(s, i)];
    out[i] = multiply ? lhs[i] * r : lhs[i] + r;
  }
}

__global__ void mulBackwardLhsKernel(BroadcastShape s, int64_t n,
                                     const float *rhs, const float *dOut,
                                     float *dLhs) {
  DPC_GRID_STRIDE(i, n) { dLhs[i] = dOut[i] * rhs[elements::rhsIndexOf(s, i)]; }
}

__global__ void reduceToRhsKernel(BroadcastShape s, int64_t rhsSize,
                                  const float *dOut, const float *lhs,
                                  float *dRhs) {
  DPC_GRID_STRIDE(j, rhsSize) { dRhs[j] = elements::reduceToRhs(s, j, dOut, lhs); }
}

int64_t sizeOf(const int64_t dims[4]) {
  return dims[0] * dims[1] * dims[2] * dims[3];
}

//===----------------------------------------------------------------------===//
// Padding and pooling
//===----------------------------------------------------------------------===//

__global__ void padForwardKernel(Pad2dShape s, float value, int64_t n,
                                 const float *x, float *y) {
  DPC_GRID_STRIDE(i, n) { y[i] = elements::padForward(s, value, i, x); }
}

__global__ void padBackwardKernel(Pad2dShape s, int64_t n, const float *dy,
                                  float *dx) {
  DPC_GRID_STRIDE(i, n) { dx[i] = elements::padBackward(s, i, dy); }
}

__global__ void maxPoolForwardKernel(Pool2dShape s, int64_t n, const float *x,
                                     float *y) {
  DPC_GRID_STRIDE(i, n) { y[i] = elements::maxPoolForward(s, i, x); }
}

__global__ void maxPoolBackwardKernel(Pool2dShape s, int64_t n,
                                      const float *x, const float *dy,
                                      float *dx) {
  DPC_GRID_STRIDE(i, n) { dx[i] = elements::maxPoolBackward(s, i, x, dy); }
}

__global__ void avgPoolForwardKernel(Pool2dShape s, int64_t n, const float *x,
                                     float *y) {
  DPC_GRID_STRIDE(i, n) { y[i] = elements::avgPoolForward(s, i, x); }
}

__global__ void avgPoolBackwardKernel(Pool2dShape s, int64_t n,
                                      const float *dy, float *dx) {
  DPC_GRID_STRIDE(i, n) { dx[i] = elements::avgPoolBackward(s, i, dy); }
}

__global__ void globalAvgPoolForwardKernel(int64_t planes, int64_t size,
                                           const float *x, float *y) {
  DPC_GRID_STRIDE(p, planes) { y[p] = elements::globalAvgPoolForward(p, size, x); }
}

__global__ void globalAvgPoolBackwardKernel(int64_t n, int64_t size,
                                            const float *dy, float *dx) {
  DPC_GRID_STRIDE(i, n) { dx[i] = dy[i / size] / static_cast<float>(size); }
}

void checkPool(const Pool2dShape &s, bool average) {
  if (s.n <= 0 || s.c <= 0 || s.h <= 0 || s.w <= 0 || s.kernelH <= 0 ||
      s.kernelW <= 0 || s.strideH <= 0 || s.strideW <= 0 || s.dilationH <= 0 ||
      s.dilationW <= 0 || s.outH() <= 0 || s.outW() <= 0)
    throw std::invalid_argument("pool2d: invalid shape");
  if (average && (s.dilationH != 1 || s.dilationW != 1))
    throw std::invalid_argument("avg_pool2d: dilation must be 1");
  if (s.kernelH > elements::kMaxTaps || s.kernelW > elements::kMaxTaps)
    throw std::invalid_argument(
        "pool2d: the CUDA backend takes windows of at most 16x16");
}

//===----------------------------------------------------------------------===//
// Row reductions: softmax, cross-entropy
//===----------------------------------------------------------------------===//

__global__ void softmaxForwardKernel(bool log, int64_t rows, int64_t cols,
                                     const float *x, float *y) {
  DPC_GRID_STRIDE(i, rows) {
    elements::softmaxRowForward(log, x + i * cols, cols, y + i * cols);
  }
}

__global__ void softmaxBackwardKernel(bool log, int64_t rows, int64_t cols,
                                      const float *y, const float *dy,
                                      float *dx) {
  DPC_GRID_STRIDE(i, rows) {
    elements::softmaxRowBackward(log, y + i * cols, dy + i * cols, cols,
                                 dx + i * cols);
  }
}

/// One thread (of the block launched): the rows in order, as the CPU sums
/// them.
__global__ void crossEntropyForwardKernel(int64_t rows, int64_t classes,
                                          const float *logits,
                                          const int32_t *labels, float divisor,
                                          float *loss, void *correct,
                                          ScalarType correctType) {
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  double sum = 0.0;
  int64_t hits = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const float *row = logits + i * classes;
    int32_t label = labels[i];
    if (label < 0 || label >= classes) {
      sum = NAN;
      continue;
    }
    if (loss)
      sum -= math::logSoftmax(row[label], math::rowLogSumExp(row, classes));
    hits += math::rowArgMax(row, classes) == label;
  }
  if (loss)
    *loss = static_cast<float>(sum / divisor);
  if (correct)
    storeScalar(correct, correctType, static_cast<double>(hits));
}

__global__ void crossEntropyBackwardKernel(int64_t rows, int64_t classes,
                                           const float *logits,
                                           const int32_t *labels,
                                           const float *dLoss, float divisor,
                                           float *dLogits) {
  float g = (dLoss ? *dLoss : 1.f) / divisor;
  DPC_GRID_STRIDE(i, rows) {
    const float *row = logits + i * classes;
    float *dRow = dLogits + i * classes;
    int32_t label = labels[i];
    if (label >= 0 && label < classes) {
      math::crossEntropyRowGrad(row, classes, label, g, dRow);
    } else {
      for (int64_t j = 0; j < classes; ++j)
        dRow[j] = NAN;
    }
  }
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

__global__ void sgdKernel(int64_t n, float momentum, float oneMinusDampening,
                          float weightDecay, bool nesterov, bool first,
                          const float *lr, float *param, const float *grad,
                          float *buffer) {
  float lrF = *lr;
  DPC_GRID_STRIDE(i, n) {
    float unused = 0.f;
    math::sgdStep(param[i], grad[i], buffer ? buffer[i] : unused, lrF,
                  momentum, oneMinusDampening, weightDecay, nesterov, first);
  }
}

__global__ void adamwKernel(int64_t n, kernels::AdamWParams p, const float *lr,
                            const int64_t *step, float *param,
                            const float *grad, float *expAvg,
                            float *expAvgSq) {
  int64_t t = *step;
  if (t < 1)
    return; // not a 1-based count: the executor never binds one
  math::AdamWScalars k =
      math::adamwScalars(*lr, p.beta1, p.beta2, p.eps, p.weightDecay, t);
  DPC_GRID_STRIDE(i, n) {
    math::adamwStep(param[i], grad[i], expAvg[i], expAvgSq[i], k.decayFactor,
                    k.beta1, k.oneMinusBeta1, k.beta2, k.oneMinusBeta2, k.eps,
                    k.stepSize, k.biasCorrection2Sqrt);
  }
}

//===----------------------------------------------------------------------===//
// Utilities
//===----------------------------------------------------------------------===//

__global__ void fillKernel(int64_t n, ScalarType type, double value, void *y) {
  DPC_GRID_STRIDE(i, n) {
    switch (type) {
    case ScalarType::F32:
      static_cast<float *>(y)[i] = static_cast<float>(value);
      break;
    case ScalarType::F64:
      static_cast<double *>(y)[i] = value;
      break;
    case ScalarType::I32:
      static_cast<int32_t *>(y)[i] = static_cast<int32_t>(value);
      break;
    case ScalarType::I64:
      static_cast<int64_t *>(y)[i] = static_cast<int64_t>(value);
      break;
    }
  }
}

__global__ void accumulateKernel(int64_t n, const float *x, float *y) {
  DPC_GRID_STRIDE(i, n) { y[i] += x[i]; }
}

__global__ void transposeKernel(int64_t rows, int64_t cols, const uint32_t *x,
                                uint32_t *y) {
  DPC_GRID_STRIDE(k, rows * cols) {
    int64_t i = k / cols, j = k % cols;
    y[j * rows + i] = x[k];
  }
}

__global__ void reduceSumKernel(elements::ReduceIndex r, const float *x,
                                float *y) {
  DPC_GRID_STRIDE(o, r.kept) { y[o] = elements::reduceSum(r, o, x); }
}

__global__ void divideKernel(int64_t n, ScalarType type, int divisor,
                             void *x) {
  DPC_GRID_STRIDE(i, n) {
    switch (type) {
    case ScalarType::F32:
      static_cast<float *>(x)[i] /= static_cast<float>(divisor);
      break;
    case ScalarType::F64:
      static_cast<double *>(x)[i] /= static_cast<double>(divisor);
      break;
    case ScalarType::I32:
      static_cast<int32_t *>(x)[i] /= divisor;
      break;
    case ScalarType::I64:
      static_cast<int64_t *>(x)[i] /= divisor;
      break;
    }
  }
}

__global__ void addRowBiasKernel(int64_t n, int64_t cols, const float *bias,
                                 float *y) {
  DPC_GRID_STRIDE(i, n) { y[i] += bias[i % cols]; }
}

__global__ void columnSumsKernel(int64_t rows, int64_t cols, const float *x,
                                 float *sums) {
  DPC_GRID_STRIDE(c, cols) {
    double sum = 0.0;
    for (int64_t r = 0; r < rows; ++r)
      sum += x[r * cols + c];
    sums[c] = static_cast<float>(sum);
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
                                        float *runningMean,
                                        float *runningVar) {
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
                                  int64_t n, const float *x,
                                  const float *scale, const float *shift,
                                  const float *runningMean,
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
                                 const float *saveMean,
                                 const float *saveInvStd, float *dx,
                                 float *dScale, float *dShift) {
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

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

void activationForward(cudaStream_t stream, Activation kind, int64_t size,
                       const float *x, float *y) {
  launch(stream, size, activationForwardKernel, kind, size, x, y);
}

void activationBackward(cudaStream_t stream, Activation kind, int64_t size,
                        const float *y, const float *dy, float *dx) {
  launch(stream, size, activationBackwardKernel, kind, size, y, dy, dx);
}

void inputActivationForward(cudaStream_t stream, math::InputActivation kind,
                            math::ActivationParams params, int64_t size,
                            const float *x, float *y) {
  launch(stream, size, inputActivationForwardKernel, kind, params, size, x,
         y);
}

void inputActivationBackward(cudaStream_t stream, math::InputActivation kind,
                             math::ActivationParams params, int64_t size,
                             const float *x, const float *dy, float *dx) {
  launch(stream, size, inputActivationBackwardKernel, kind, params, size, x,
         dy, dx);
}

void dropout(cudaStream_t stream, const math::DropoutMask &mask, int64_t rows,
             int64_t cols, int64_t firstRow, const float *x, float *y) {
  int64_t n = rows * cols;
  launch(stream, n, dropoutKernel, mask, cols, firstRow, n, x, y);
}

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
  launch(stream, s.cols, layerNormParamGradsKernel, s, x, dy,
         static_cast<const elements::RowStats *>(stats), dScale, dBias);
}

void embeddingForward(cudaStream_t stream, const EmbeddingShape &s,
                      const float *table, const int32_t *indices, float *y) {
  launch(stream, s.count * s.dim, embeddingForwardKernel, s, table, indices,
         y);
}

void embeddingBackward(cudaStream_t stream, const EmbeddingShape &s,
                       const int32_t *indices, const float *dy,
                       float *dTable) {
  DPC_CUDA_CHECK(cudaMemsetAsync(dTable, 0,
                                 size_t(s.rows * s.dim) * sizeof(float),
                                 stream));
  launch(stream, s.dim, embeddingBackwardKernel, s, indices, dy, dTable);
}

void addForward(cudaStream_t stream, const BroadcastShape &shape,
                const float *lhs, const float *rhs, float *out) {
  int64_t n = sizeOf(shape.out);
  launch(stream, n, binaryForwardKernel, shape, false, n, lhs, rhs, out);
}

void addBackward(cudaStream_t stream, const BroadcastShape &shape,
                 const float *dOut, float *dLhs, float *dRhs) {
  if (dLhs && dLhs != dOut)
    DPC_CUDA_CHECK(cudaMemcpyAsync(dLhs, dOut, sizeOf(shape.out) * 4,
                                   cudaMemcpyDeviceToDevice, stream));
  if (dRhs) {
    int64_t n = sizeOf(shape.rhs);
    launch(stream, n, reduceToRhsKernel, shape, n, dOut,
           static_cast<const float *>(nullptr), dRhs);
  }
}

void mulForward(cudaStream_t stream, const BroadcastShape &shape,
                const float *lhs, const float *rhs, float *out) {
  int64_t n = sizeOf(shape.out);
  launch(stream, n, binaryForwardKernel, shape, true, n, lhs, rhs, out);
}

void mulBackward(cudaStream_t stream, const BroadcastShape &shape,
                 const float *lhs, const float *rhs, const float *dOut,
                 float *dLhs, float *dRhs) {
  // dRhs first: dLhs may alias dOut (the stream keeps the order).
  if (dRhs) {
    int64_t n = sizeOf(shape.rhs);
    launch(stream, n, reduceToRhsKernel, shape, n, dOut, lhs, dRhs);
  }
  if (dLhs) {
    int64_t n = sizeOf(shape.out);
    launch(stream, n, mulBackwardLhsKernel, shape, n, rhs, dOut, dLhs);
  }
}

void pad2dForward(cudaStream_t stream, const Pad2dShape &s, float value,
                  const float *x, float *y) {
  if (s.padTop < 0 || s.padLeft < 0 || s.padBottom < 0 || s.padRight < 0)
    throw std::invalid_argument("pad2d: negative padding");
  int64_t n = s.n * s.c * s.outH() * s.outW();
  launch(stream, n, padForwardKernel, s, value, n, x, y);
}

void pad2dBackward(cudaStream_t stream, const Pad2dShape &s, const float *dy,
                   float *dx) {
  if (s.padTop < 0 || s.padLeft < 0 || s.padBottom < 0 || s.padRight < 0)
    throw std::invalid_argument("pad2d: negative padding");
  int64_t n = s.n * s.c * s.h * s.w;
  launch(stream, n, padBackwardKernel, s, n, dy, dx);
}

void maxPool2dForward(cudaStream_t stream, const Pool2dShape &s,
                      const float *x, float *y) {
  checkPool(s, false);
  int64_t n = s.n * s.c * s.outH() * s.outW();
  launch(stream, n, maxPoolForwardKernel, s, n, x, y);
}

void maxPool2dBackward(cudaStream_t stream, const Pool2dShape &s,
                       const float *x, const float *dy, float *dx) {
  checkPool(s, false);
  int64_t n = s.n * s.c * s.h * s.w;
  launch(stream, n, maxPoolBackwardKernel, s, n, x, dy, dx);
}

void avgPool2dForward(cudaStream_t stream, const Pool2dShape &s,
                      const float *x, float *y) {
  checkPool(s, true);
  int64_t n = s.n * s.c * s.outH() * s.outW();
  launch(stream, n, avgPoolForwardKernel, s, n, x, y);
}

void avgPool2dBackward(cudaStream_t stream, const Pool2dShape &s,
                       const float *dy, float *dx) {
  checkPool(s, true);
  int64_t n = s.n * s.c * s.h * s.w;
  launch(stream, n, avgPoolBackwardKernel, s, n, dy, dx);
}

void globalAvgPool2dForward(cudaStream_t stream, int64_t planes,
                            int64_t planeSize, const float *x, float *y) {
  launch(stream, planes, globalAvgPoolForwardKernel, planes, planeSize, x, y);
}

void globalAvgPool2dBackward(cudaStream_t stream, int64_t planes,
                             int64_t planeSize, const float *dy, float *dx) {
  int64_t n = planes * planeSize;
  launch(stream, n, globalAvgPoolBackwardKernel, n, planeSize, dy, dx);
}

void softmaxForward(cudaStream_t stream, int64_t rows, int64_t cols,
                    const float *x, float *y) {
  launch(stream, rows, softmaxForwardKernel, false, rows, cols, x, y);
}

void softmaxBackward(cudaStream_t stream, int64_t rows, int64_t cols,
                     const float *y, const float *dy, float *dx) {
  launch(stream, rows, softmaxBackwardKernel, false, rows, cols, y, dy, dx);
}

void logSoftmaxForward(cudaStream_t stream, int64_t rows, int64_t cols,
                       const float *x, float *y) {
  launch(stream, rows, softmaxForwardKernel, true, rows, cols, x, y);
}

void logSoftmaxBackward(cudaStream_t stream, int64_t rows, int64_t cols,
                        const float *y, const float *dy, float *dx) {
  launch(stream, rows, softmaxBackwardKernel, true, rows, cols, y, dy, dx);
}

void crossEntropyForward(cudaStream_t stream, int64_t rows, int64_t classes,
                         const float *logits, const int32_t *labels,
                         float divisor, float *loss, void *correct,
                         ScalarType correctType) {
  launchBlocks(stream, 1, crossEntropyForwardKernel, rows, classes, logits,
               labels, divisor, loss, correct, correctType);
}

void crossEntropyBackward(cudaStream_t stream, int64_t rows, int64_t classes,
                          const float *logits, const int32_t *labels,
                          const float *dLoss, float divisor, float *dLogits) {
  launch(stream, rows, crossEntropyBackwardKernel, rows, classes, logits,
         labels, dLoss, divisor, dLogits);
}

void correctCount(cudaStream_t stream, int64_t rows, int64_t classes,
                  const float *logits, const int32_t *labels, void *count,
                  ScalarType countType) {
  launchBlocks(stream, 1, crossEntropyForwardKernel, rows, classes, logits,
               labels, 1.f, static_cast<float *>(nullptr), count, countType);
}

void sgdUpdate(cudaStream_t stream, int64_t size,
               const kernels::SgdParams &p, const float *lr, int64_t step,
               float *param, const float *grad, float *momentumBuffer) {
  kernels::checkSgdArguments(p, step, momentumBuffer != nullptr);
  launch(stream, size, sgdKernel, size, static_cast<float>(p.momentum),
         static_cast<float>(1.0 - p.dampening),
         static_cast<float>(p.weightDecay), p.nesterov, step == 1, lr, param,
         grad, momentumBuffer);
}

void adamwUpdate(cudaStream_t stream, int64_t size,
                 const kernels::AdamWParams &params, const float *lr,
                 const int64_t *step, float *param, const float *grad,
                 float *expAvg, float *expAvgSq) {
  launch(stream, size, adamwKernel, size, params, lr, step, param, grad,
         expAvg, expAvgSq);
}

void fill(cudaStream_t stream, int64_t count, ScalarType type, double value,
          void *y) {
  launch(stream, count, fillKernel, count, type, value, y);
}

void accumulate(cudaStream_t stream, int64_t size, const float *x, float *y) {
  launch(stream, size, accumulateKernel, size, x, y);
}

void permute(cudaStream_t stream, const elements::PermuteIndex &index,
             int64_t size, const uint32_t *x, uint32_t *y) {
  launch(stream, size, permuteKernel, index, size, x, y);
}

void transpose2d(cudaStream_t stream, int64_t rows, int64_t cols,
                 const uint32_t *x, uint32_t *y) {
  launch(stream, rows * cols, transposeKernel, rows, cols, x, y);
}

void reduceSum(cudaStream_t stream, int rank, const int64_t *dims,
               const bool *reduced, const float *x, float *y) {
  if (rank > 8)
    throw std::invalid_argument("reduce_sum: rank above 8");
  elements::ReduceIndex r = elements::makeReduceIndex(rank, dims, reduced);
  launch(stream, r.kept, reduceSumKernel, r, x, y);
}

void divide(cudaStream_t stream, int64_t count, ScalarType type, int divisor,
            void *x) {
  launch(stream, count, divideKernel, count, type, divisor, x);
}

void addRowBias(cudaStream_t stream, int64_t rows, int64_t cols,
                const float *bias, float *y) {
  launch(stream, rows * cols, addRowBiasKernel, rows * cols, cols, bias, y);
}

void columnSums(cudaStream_t stream, int64_t rows, int64_t cols,
                const float *x, float *sums) {
  launch(stream, cols, columnSumsKernel, rows, cols, x, sums);
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
