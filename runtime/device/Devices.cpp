//===- Devices.cpp - devices and communicators by name --------------------===//
//
// The one place that knows which backends this runtime was built with.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/InProcessCommunicator.h"
#include "runtime/cpu/CpuDevice.h"

#ifdef DPC_HAVE_CUDA
#include "runtime/cuda/CudaDevice.h"
#endif

#include <algorithm>
#include <omp.h>
#include <stdexcept>

namespace dpc::exec {

namespace {
const char *const kUseCpu = "; compile for --devices cpu:0[,cpu:1,...]";
} // namespace

std::unique_ptr<Device> createDevice(const std::string &name,
                                     const DeviceOptions &options) {
  if (name.rfind("cpu", 0) == 0) {
    // The creating thread's count: OMP_NUM_THREADS, or the cores.
    int cores = omp_get_max_threads();
    int local = std::max(1, options.numLocalDevices);
    int threads = std::max(1, cores / local);
    int reduction =
        std::max(1, cores / std::max(local, options.numPlanDevices));
    return std::make_unique<CpuDevice>(name, threads, reduction);
  }
#ifdef DPC_HAVE_CUDA
  if (name.rfind("cuda", 0) == 0) {
    try {
      return cuda::createCudaDevice(name);
    } catch (const cuda::CudaError &error) {
      throw std::runtime_error(
          "device '" + name + "' is not available: " +
          (error.noGpu ? "no usable GPU (" + std::string(error.what()) + ")"
                       : std::string(error.what())) +
          kUseCpu);
    } catch (const std::exception &error) {
      throw std::runtime_error(error.what() + std::string(kUseCpu));
    }
  }
#endif
  throw std::runtime_error(
      "device '" + name +
      "' is not available: this runtime has no CUDA backend or GPU" + kUseCpu);
}

std::vector<std::unique_ptr<comm::Communicator>>
createCommunicators(const std::vector<Device *> &devices) {
#ifdef DPC_HAVE_CUDA
  auto group = cuda::createCudaCommunicators(devices);
  if (!group.empty())
    return group;
#endif
  return comm::createInProcessGroup(static_cast<int>(devices.size()));
}

std::unique_ptr<comm::Communicator>
createRankCommunicator([[maybe_unused]] Device &device,
                       [[maybe_unused]] comm::Communicator &host,
                       [[maybe_unused]] std::chrono::milliseconds timeout) {
#ifdef DPC_HAVE_CUDA
  return cuda::createCudaRankCommunicator(device, host, timeout);
#else
  return nullptr; // only CPU devices: host memory
#endif
}

} // namespace dpc::exec
