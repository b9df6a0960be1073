//===- CudaKernels.cpp - a KernelCall on a CUDA stream --------------------===//
//
// The CUDA backend's kernel table and its dispatch, the stream's library
// handles, and the helpers its family files share. The table's functions
// live in one file per op family (CudaKernelEntries.h lists them).
//
// Layouts: every tensor is plain row-major (NCHW), as the plan says, and
// float32. cuBLAS is column-major: a row-major [r, c] matrix is the
// column-major [c, r] one, so C = A·B row-major is computed as Cᵀ = Bᵀ·Aᵀ
// with the operands swapped and no copy (CudaLinear.cpp).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaKernels.h"
#include "runtime/abi/KernelDispatch.h"
#include "runtime/cuda/CudaKernelEntries.h"

#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace dpc::cuda {

using plan::KernelCall;

//===----------------------------------------------------------------------===//
// StreamContext
//===----------------------------------------------------------------------===//

StreamContext::~StreamContext() {
  if (cudnn)
    DPC_CUDA_REPORT(cudnnDestroy(cudnn));
  if (cublas)
    DPC_CUDA_REPORT(cublasDestroy(cublas));
}

cudnnHandle_t StreamContext::getCudnn() {
  if (!cudnn) {
    DPC_CUDA_CHECK(cudnnCreate(&cudnn));
    DPC_CUDA_CHECK(cudnnSetStream(cudnn, stream));
  }
  return cudnn;
}

cublasHandle_t StreamContext::getCublas() {
  if (!cublas) {
    DPC_CUDA_CHECK(cublasCreate(&cublas));
    DPC_CUDA_CHECK(cublasSetStream(cublas, stream));
    // FP32 compute (no TF32 tensor-core rounding, which the default mode
    // never picks for Sgemm): results stay within the CPU's tolerances. A
    // TF32 or bf16 call asks for its compute type itself (cublasGemmEx).
    DPC_CUDA_CHECK(cublasSetMathMode(cublas, CUBLAS_DEFAULT_MATH));
  }
  return cublas;
}

//===----------------------------------------------------------------------===//
// Shared by the family files
//===----------------------------------------------------------------------===//

int toInt(int64_t value, const char *what) {
  if (value < 0 || value > INT_MAX)
    throw std::runtime_error(std::string("convolution: ") + what +
                             " does not fit cuDNN's int");
  return static_cast<int>(value);
}

ScalarType scalarTypeOf(const plan::TensorArg &arg) {
  switch (arg.dtype) {
  case plan::DType::F32:
    return ScalarType::F32;
  case plan::DType::F64:
    return ScalarType::F64;
  case plan::DType::I32:
    return ScalarType::I32;
  case plan::DType::I64:
    return ScalarType::I64;
  default:
    throw std::runtime_error("the CUDA backend has no 16-bit scalars yet");
  }
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

namespace {

void zeroNonEmptyResults(StreamContext &ctx, const KernelCall &call) {
  for (const plan::TensorArg &result : call.results)
    if (result.present && result.getNumElements() > 0)
      DPC_CUDA_CHECK(cudaMemsetAsync(result.data, 0, result.getNumBytes(),
                                     ctx.getStream()));
}

const plan::KernelTable<StreamContext> kCudaKernels = {"CUDA",
                                                       {
#define DPC_KERNEL(Name, ...) entries::run##Name,
#define DPC_INPUT_ACTIVATION(Name)                                             \
  entries::runInputActivationForward, entries::runInputActivationBackward,
#include "runtime/abi/Kernels.def"
                                                       },
                                                       &zeroNonEmptyResults,
                                                       /*blockedLayouts=*/false,
                                                       /*tensorFloat32=*/true};

} // namespace

const plan::KernelTable<StreamContext> &getCudaKernelTable() {
  return kCudaKernels;
}

void runCudaKernel(StreamContext &ctx, const KernelCall &call) {
  plan::dispatchKernel(kCudaKernels, ctx, call);
}

} // namespace dpc::cuda
