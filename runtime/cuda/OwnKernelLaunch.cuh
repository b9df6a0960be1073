//===- OwnKernelLaunch.cuh - launching dpc's own CUDA kernels --*- CUDA -*-===//
//
// Private to the Own*.cu files, one per op family: how they launch. One
// thread per output element (or per row, plane or channel where a reduction
// runs in a fixed order), grid-stride loops, 64-bit indices. The formulas are
// runtime/kernels/KernelMath.h, the CPU's; the index-heavy element bodies are
// KernelElements.h, checked on the CPU against the CPU kernels. The helpers
// sit in an anonymous namespace: each family file has its own copy.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_OWNKERNELLAUNCH_CUH
#define DPC_RUNTIME_CUDA_OWNKERNELLAUNCH_CUH

#include "runtime/cuda/CudaCheck.h"
#include "runtime/cuda/OwnKernels.h"

#include <algorithm>
#include <cstdint>

namespace dpc::cuda {
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

/// The threads of a block that reduces one item (a channel, a column):
/// the widest block, since a few channels can hold millions of terms. Every
/// such kernel needs at most 64 registers a thread (all take 42 or fewer).
constexpr int kReduceBlock = 1024;

/// One block of kReduceBlock threads per item (a channel).
template <typename... Params, typename... Args>
void launchBlocks(cudaStream_t stream, int64_t blocks,
                  void (*kernel)(Params...), Args... args) {
  if (blocks <= 0)
    return;
  kernel<<<static_cast<unsigned>(blocks), kReduceBlock, 0, stream>>>(args...);
  DPC_CUDA_CHECK(cudaGetLastError());
}

/// The sum of every thread's `value` over a block of kReduceBlock threads,
/// in a fixed tree order; every thread gets it.
__device__ double blockSum(double value) {
  __shared__ double partial[kReduceBlock];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int stride = kReduceBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  double total = partial[0];
  __syncthreads();
  return total;
}

/// Whether a reduction of `count` terms per output runs a block per output
/// (blockSum) rather than a thread: one thread adding thousands of terms in
/// a row is what made a convolution's bias gradient take milliseconds.
inline bool reduceByBlocks(int64_t count) { return count >= kReduceBlock; }

#define DPC_GRID_STRIDE(i, n)                                                  \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);    \
       i += int64_t(gridDim.x) * blockDim.x)

} // namespace
} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_OWNKERNELLAUNCH_CUH
