//===- CudaCheck.h - one checked form for every CUDA library status -*- C++ -*-===//
//
// Every call into the CUDA runtime, cuDNN, cuBLAS or NCCL in runtime/cuda is
// wrapped in DPC_CUDA_CHECK (or, in destructors, DPC_CUDA_REPORT), which turns
// a failed status into one line naming the call, the device and what the
// status means:
//
//   cuda:1: cudnnConvolutionForward(...) failed: CUDNN_STATUS_BAD_PARAM
//   (an incorrect value or parameter was passed)
//
// tools/lint/check_cuda_calls.py (a lit test) fails on any unwrapped call.
// Statuses that mean "there is no usable GPU" (no driver, no device, a
// library that cannot initialize) make a CudaError with noGpu set, which
// createDevice turns into the "compile for --devices cpu:..." advice.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_CUDACHECK_H
#define DPC_RUNTIME_CUDA_CUDACHECK_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace dpc::cuda {

struct CudaError : std::runtime_error {
  CudaError(const std::string &message, bool noGpu)
      : std::runtime_error(message), noGpu(noGpu) {}
  /// The status means that no usable GPU (or driver) is present.
  bool noGpu;
};

/// "<call> failed: <name> (<meaning>)", for each library's status type.
std::string describeStatus(cudaError_t status);
std::string describeStatus(cudnnStatus_t status);
std::string describeStatus(cublasStatus_t status);
std::string describeStatus(ncclResult_t status);

bool meansNoGpu(cudaError_t status);
bool meansNoGpu(cudnnStatus_t status);
bool meansNoGpu(cublasStatus_t status);
bool meansNoGpu(ncclResult_t status);

inline bool failed(cudaError_t status) { return status != cudaSuccess; }
inline bool failed(cudnnStatus_t status) {
  return status != CUDNN_STATUS_SUCCESS;
}
inline bool failed(cublasStatus_t status) {
  return status != CUBLAS_STATUS_SUCCESS;
}
inline bool failed(ncclResult_t status) { return status != ncclSuccess; }

/// Statuses that say "not done yet" rather than "failed": a nonblocking NCCL
/// communicator's call going on in the background, a stream still busy.
inline bool isPending(ncclResult_t status) { return status == ncclInProgress; }
inline bool isPending(cudaError_t status) {
  return status == cudaErrorNotReady;
}

/// "cuda:K" for the calling thread's current device, "cuda:?" without one.
std::string currentDeviceName();

template <typename Status>
[[noreturn]] void throwStatus(Status status, const char *call) {
  throw CudaError(currentDeviceName() + ": " + call + " failed: " +
                      describeStatus(status),
                  meansNoGpu(status));
}

/// DPC_CUDA_PENDING's check: true for a pending status, false for success.
template <typename Status> bool checkPending(Status status, const char *call) {
  if (isPending(status))
    return true;
  if (failed(status))
    throwStatus(status, call);
  return false;
}

/// For destructors, which must not throw: prints the line to stderr.
void reportLine(const std::string &line);

template <typename Status> void reportStatus(Status status, const char *call) {
  reportLine(currentDeviceName() + ": " + call +
             " failed: " + describeStatus(status));
}

} // namespace dpc::cuda

/// Throws dpc::cuda::CudaError when `call` (a CUDA runtime, cuDNN, cuBLAS or
/// NCCL call) does not succeed.
#define DPC_CUDA_CHECK(call)                                                   \
  do {                                                                         \
    auto dpcStatus_ = (call);                                                  \
    if (::dpc::cuda::failed(dpcStatus_))                                       \
      ::dpc::cuda::throwStatus(dpcStatus_, #call);                             \
  } while (false)

/// As DPC_CUDA_CHECK, but a "not done yet" status (ncclInProgress,
/// cudaErrorNotReady: see isPending) is no failure: evaluates to true for it,
/// to false for success; the caller polls until done.
#define DPC_CUDA_PENDING(call) ::dpc::cuda::checkPending((call), #call)

/// As DPC_CUDA_CHECK, but reports on stderr instead of throwing.
#define DPC_CUDA_REPORT(call)                                                  \
  do {                                                                         \
    auto dpcStatus_ = (call);                                                  \
    if (::dpc::cuda::failed(dpcStatus_))                                       \
      ::dpc::cuda::reportStatus(dpcStatus_, #call);                            \
  } while (false)

#endif // DPC_RUNTIME_CUDA_CUDACHECK_H
