//===- CudaKernels.h - a KernelCall on a CUDA stream ------------*- C++ -*-===//
//
// The CUDA twin of runtime/cpu/CpuKernels.h: turns one KernelCall into
// cuDNN (convolutions, batch norm), cuBLAS (linear layers, matmuls), NCCL
// (AllReduce) or dpc's own kernels (OwnKernels.h), enqueued on one stream.
// Nothing here waits for the GPU.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_CUDAKERNELS_H
#define DPC_RUNTIME_CUDA_CUDAKERNELS_H

#include "runtime/abi/KernelCall.h"
#include "runtime/abi/KernelDispatch.h"
#include "runtime/cuda/CudaCheck.h"
#include "runtime/kernels/Conv.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace dpc::cuda {

/// A convolution shape's cuDNN descriptors and its algorithms, chosen once.
struct ConvPlan;

/// Per device: convolution algorithms by shape and workspace (the first
/// call of a shape asks cuDNN's heuristics for the fastest algorithms that
/// fit the workspace the plan gives the call; later calls reuse them).
class ConvPlanCache {
public:
  ConvPlanCache();
  ~ConvPlanCache();
  const ConvPlan &get(cudnnHandle_t handle, const kernels::Conv2dShape &shape,
                      size_t workspaceBytes);
  /// One line per shape: the algorithms chosen and their workspace.
  std::vector<std::string> getChoices() const;

private:
  mutable std::mutex mutex;
  std::vector<std::string> choices;
  /// By every field of the shape that changes the plan, and the workspace.
  std::map<std::vector<int64_t>, std::unique_ptr<ConvPlan>> plans;
};

/// What one stream's kernels need: library handles bound to the stream.
/// Scratch memory is the plan's (KernelCall::workspace, in the arena).
/// Created and used on the device's dispatch thread only.
class StreamContext {
public:
  StreamContext(cudaStream_t stream, ConvPlanCache &convPlans)
      : stream(stream), convPlans(convPlans) {}
  ~StreamContext();
  StreamContext(const StreamContext &) = delete;
  StreamContext &operator=(const StreamContext &) = delete;

  cudaStream_t getStream() const { return stream; }
  cudnnHandle_t getCudnn();
  cublasHandle_t getCublas();
  ConvPlanCache &getConvPlans() { return convPlans; }

private:
  cudaStream_t stream;
  ConvPlanCache &convPlans;
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;
};

/// Enqueues `call` on the context's stream. Throws std::runtime_error (a
/// ShapeError, a CudaError, an unsupported attribute) before enqueueing
/// anything that could touch memory it should not.
void runCudaKernel(StreamContext &context, const plan::KernelCall &call);

/// The CUDA backend's table: an entry for every kernel of Kernels.def.
const plan::KernelTable<StreamContext> &getCudaKernelTable();

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_CUDAKERNELS_H
