//===- OwnTensorOps.cu - data movement as own CUDA kernels ----------------===//
//
// Fills, accumulation, permutations and transposes, the sum over dims, the
// division of an all-reduce's mean, a linear layer's bias and its gradient,
// and the embedding gather and its scatter-add.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/OwnKernelLaunch.cuh"
#include "runtime/kernels/KernelElements.h"

#include <cuda_bf16.h>

#include <cmath>
#include <stdexcept>

namespace dpc::cuda {

namespace elements = kernels::elements;
using kernels::EmbeddingShape;

namespace {

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
                                        const int32_t *indices, const float *dy,
                                        float *dTable) {
  DPC_GRID_STRIDE(d, s.dim) {
    elements::embeddingGradColumn(indices, s.count, s.dim, d, dy, dTable);
  }
}

__global__ void permuteKernel(elements::PermuteIndex index, int64_t n,
                              const uint32_t *x, uint32_t *y) {
  DPC_GRID_STRIDE(o, n) { y[o] = x[elements::permuteSource(index, o)]; }
}

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

__global__ void castToBf16Kernel(int64_t n, const float *x, uint16_t *y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    __nv_bfloat16 rounded = __float2bfloat16_rn(x[i]);
    y[i] = __bfloat16_as_ushort(rounded);
  }
}

__global__ void castFromBf16Kernel(int64_t n, const uint16_t *x, float *y) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    y[i] = __uint_as_float(uint32_t(x[i]) << 16); // exact
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

__global__ void reduceExtremumKernel(bool minimum, elements::ReduceIndex r,
                                     const float *x, float *y) {
  DPC_GRID_STRIDE(o, r.kept) {
    y[o] = elements::reduceExtremum(minimum, r, o, x);
  }
}

__global__ void reduceExtremumBackwardKernel(elements::ReduceIndex r,
                                             const float *x, const float *y,
                                             const float *dy, float *dx) {
  DPC_GRID_STRIDE(o, r.kept) {
    elements::reduceExtremumBackward(r, o, x, y, dy, dx);
  }
}

/// A block per kept element, for long reductions (a convolution's bias
/// gradient sums n*h*w terms per channel).
__global__ void reduceSumBlockKernel(elements::ReduceIndex r, const float *x,
                                     float *y) {
  int64_t o = blockIdx.x;
  const float *base =
      x + elements::offsetOf(o, r.keptRank, r.keptDims, r.keptStrides);
  double sum = 0.0;
  for (int64_t k = threadIdx.x; k < r.reduced; k += blockDim.x)
    sum += base[elements::offsetOf(k, r.redRank, r.redDims, r.redStrides)];
  sum = blockSum(sum);
  if (threadIdx.x == 0)
    y[o] = float(sum);
}

__global__ void divideKernel(int64_t n, ScalarType type, int divisor, void *x) {
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

__global__ void columnSumsBlockKernel(int64_t rows, int64_t cols,
                                      const float *x, float *sums) {
  int64_t c = blockIdx.x;
  double sum = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x)
    sum += x[r * cols + c];
  sum = blockSum(sum);
  if (threadIdx.x == 0)
    sums[c] = static_cast<float>(sum);
}

} // namespace

void embeddingForward(cudaStream_t stream, const EmbeddingShape &s,
                      const float *table, const int32_t *indices, float *y) {
  launch(stream, s.count * s.dim, embeddingForwardKernel, s, table, indices, y);
}

void embeddingBackward(cudaStream_t stream, const EmbeddingShape &s,
                       const int32_t *indices, const float *dy, float *dTable) {
  DPC_CUDA_CHECK(cudaMemsetAsync(
      dTable, 0, size_t(s.rows * s.dim) * sizeof(float), stream));
  launch(stream, s.dim, embeddingBackwardKernel, s, indices, dy, dTable);
}

void fill(cudaStream_t stream, int64_t count, ScalarType type, double value,
          void *y) {
  launch(stream, count, fillKernel, count, type, value, y);
}

void accumulate(cudaStream_t stream, int64_t size, const float *x, float *y) {
  launch(stream, size, accumulateKernel, size, x, y);
}

void castToBf16(cudaStream_t stream, int64_t size, const float *x,
                uint16_t *y) {
  launch(stream, size, castToBf16Kernel, size, x, y);
}

void castFromBf16(cudaStream_t stream, int64_t size, const uint16_t *x,
                  float *y) {
  launch(stream, size, castFromBf16Kernel, size, x, y);
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
  if (reduceByBlocks(r.reduced) && r.redRank > 0)
    launchBlocks(stream, r.kept, reduceSumBlockKernel, r, x, y);
  else
    launch(stream, r.kept, reduceSumKernel, r, x, y);
}

void reduceExtremum(cudaStream_t stream, bool minimum, int rank,
                    const int64_t *dims, const bool *reduced, const float *x,
                    float *y) {
  if (rank > 8)
    throw std::invalid_argument("reduce_max: rank above 8");
  elements::ReduceIndex r = elements::makeReduceIndex(rank, dims, reduced);
  launch(stream, r.kept, reduceExtremumKernel, minimum, r, x, y);
}

void reduceExtremumBackward(cudaStream_t stream, int rank, const int64_t *dims,
                            const bool *reduced, const float *x, const float *y,
                            const float *dy, float *dx) {
  if (rank > 8)
    throw std::invalid_argument("reduce_max: rank above 8");
  elements::ReduceIndex r = elements::makeReduceIndex(rank, dims, reduced);
  launch(stream, r.kept, reduceExtremumBackwardKernel, r, x, y, dy, dx);
}

void divide(cudaStream_t stream, int64_t count, ScalarType type, int divisor,
            void *x) {
  launch(stream, count, divideKernel, count, type, divisor, x);
}

void addRowBias(cudaStream_t stream, int64_t rows, int64_t cols,
                const float *bias, float *y) {
  launch(stream, rows * cols, addRowBiasKernel, rows * cols, cols, bias, y);
}

void columnSums(cudaStream_t stream, int64_t rows, int64_t cols, const float *x,
                float *sums) {
  if (reduceByBlocks(rows))
    launchBlocks(stream, cols, columnSumsBlockKernel, rows, cols, x, sums);
  else
    launch(stream, cols, columnSumsKernel, rows, cols, x, sums);
}

} // namespace dpc::cuda
