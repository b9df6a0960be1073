// Calls the lint must reject (see check-cuda-calls.test), beside ones it
// must accept.
#include "runtime/cuda/CudaCheck.h"

__global__ void kernel(float *x) { x[0] = 1.f; }

void bad(float *x, cudaStream_t stream, cudnnHandle_t handle) {
  cudaMemsetAsync(x, 0, 4, stream);
  cudaError_t kept = cudaStreamSynchronize(stream);
  DPC_CUDA_CHECK(cudaSetDevice(0) == cudaSuccess ? cudaSuccess : cudaSuccess);
  if (cudnnSetStream(handle, stream) != CUDNN_STATUS_SUCCESS)
    return;
  ncclGroupStart();
  kernel<<<1, 1, 0, stream>>>(x);
  cublasCreate(nullptr);
  (void)kept;
}

void good(float *x, cudaStream_t stream) {
  DPC_CUDA_CHECK(cudaMemsetAsync(x, 0, 4, stream));
  DPC_CUDA_REPORT(ncclGroupEnd());
  kernel<<<1, 1, 0, stream>>>(x);
  DPC_CUDA_CHECK(cudaGetLastError());
  const char *text = cudaGetErrorString(cudaErrorInvalidValue);
  // cudaFree(x) in a comment, and "cudaFree(x)" in a string, are not calls.
  const char *quoted = "cudaFree(x)";
  cudaError_t status = cudaFree(x); // lint: checked
  (void)text, (void)quoted, (void)status;
  while (DPC_CUDA_PENDING(cudaStreamQuery(stream)))
    continue;
}
