//===- CudaProbe.cpp - is there a GPU this runtime can use? ---------------===//
//
// Exit 0 and "N usable GPU(s)" when device 0 takes a context and cuDNN and
// cuBLAS initialize on it; exit 1 and one line saying why not otherwise.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaDevice.h"

#include <cstdio>
#include <exception>

int main() {
  using namespace dpc::cuda;
  try {
    int count = getVisibleDeviceCount();
    CudaDevice device("cuda:0", 0);
    DeviceScope scope(0);
    cudnnHandle_t cudnn = nullptr;
    cublasHandle_t cublas = nullptr;
    DPC_CUDA_CHECK(cudnnCreate(&cudnn));
    DPC_CUDA_CHECK(cublasCreate(&cublas));
    DPC_CUDA_CHECK(cublasDestroy(cublas));
    DPC_CUDA_CHECK(cudnnDestroy(cudnn));
    std::printf("%d usable GPU(s)\n", count);
    return 0;
  } catch (const std::exception &error) {
    std::printf("no usable GPU: %s\n", error.what());
    return 1;
  }
}
