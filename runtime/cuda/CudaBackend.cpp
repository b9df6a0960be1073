//===- CudaBackend.cpp - the CUDA backend in the device registry ----------===//

#include "runtime/cuda/CudaDevice.h"
#include "runtime/device/DeviceRegistry.h"

#include <stdexcept>

namespace dpc::cuda {

namespace {

/// The device called `name`, or one line that says why it is not
/// available and what to compile for instead.
std::unique_ptr<rt::Device> createAvailableDevice(const std::string &name) {
  try {
    return createCudaDevice(name);
  } catch (const CudaError &error) {
    throw std::runtime_error(
        "device '" + name + "' is not available: " +
        (error.noGpu ? "no usable GPU (" + std::string(error.what()) + ")"
                     : std::string(error.what())) +
        rt::kUseCpuAdvice);
  } catch (const std::exception &error) {
    throw std::runtime_error(error.what() + std::string(rt::kUseCpuAdvice));
  }
}

} // namespace

void registerCudaBackend(rt::DeviceRegistry &registry) {
  rt::DeviceBackend backend;
  backend.prefix = "cuda";
  backend.createDevice = [](const std::string &name,
                            const rt::DeviceOptions &) {
    return createAvailableDevice(name);
  };
  backend.createCommunicators = createCudaCommunicators;
  backend.createRankCommunicator = createCudaRankCommunicator;
  registry.add(std::move(backend));
}

} // namespace dpc::cuda
