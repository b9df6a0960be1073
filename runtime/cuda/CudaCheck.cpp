//===- CudaCheck.cpp - one checked form for every CUDA library status -----===//

#include "runtime/cuda/CudaCheck.h"

#include <cstdio>

namespace dpc::cuda {

std::string describeStatus(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + " (" +
         cudaGetErrorString(status) + ")";
}

std::string describeStatus(cudnnStatus_t status) {
  // cudnnGetErrorString gives the enum's name; cudnnGetLastErrorString the
  // detail of the latest failure on this thread, when there is one.
  std::string text = cudnnGetErrorString(status);
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  if (detail[0]) {
    std::string line(detail);
    for (char &c : line)
      if (c == '\n' || c == '\r')
        c = ' ';
    text += " (" + line + ")";
  }
  return text;
}

std::string describeStatus(cublasStatus_t status) {
  return std::string(cublasGetStatusName(status)) + " (" +
         cublasGetStatusString(status) + ")";
}

std::string describeStatus(ncclResult_t status) {
  return std::string("NCCL error ") + std::to_string(int(status)) + " (" +
         ncclGetErrorString(status) + ")";
}

bool meansNoGpu(cudaError_t status) {
  return status == cudaErrorInsufficientDriver ||
         status == cudaErrorNoDevice || status == cudaErrorInvalidDevice ||
         status == cudaErrorDevicesUnavailable ||
         status == cudaErrorSystemDriverMismatch ||
         status == cudaErrorCompatNotSupportedOnDevice ||
         status == cudaErrorNoKernelImageForDevice;
}

bool meansNoGpu(cudnnStatus_t status) {
  return status == CUDNN_STATUS_NOT_INITIALIZED;
}

bool meansNoGpu(cublasStatus_t status) {
  return status == CUBLAS_STATUS_NOT_INITIALIZED;
}

bool meansNoGpu(ncclResult_t status) { return status == ncclUnhandledCudaError; }

std::string currentDeviceName() {
  int device = -1;
  // Not checked: this runs while reporting another failure.
  if (cudaGetDevice(&device) != cudaSuccess || device < 0) // lint: allowed
    return "cuda:?";
  return "cuda:" + std::to_string(device);
}

void reportLine(const std::string &line) {
  std::fprintf(stderr, "dpc: %s\n", line.c_str());
}

} // namespace dpc::cuda
