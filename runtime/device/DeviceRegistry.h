//===- DeviceRegistry.h - the backends a runtime was built with -*- C++ -*-===//
//
// Generic code reaches a backend only through this registry, by device
// name (createDevice, createCommunicators and createRankCommunicator in
// Device.h). Each backend registers itself from its own folder
// (runtime/cpu, runtime/cuda); registerCompiledBackends, as IREE's
// hal/drivers/init.c, calls every registration compiled in, each behind its
// build flag, the first time a device is asked for.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_DEVICE_DEVICEREGISTRY_H
#define DPC_RUNTIME_DEVICE_DEVICEREGISTRY_H

#include "runtime/device/Device.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dpc::rt {

/// One backend: the devices whose names start with `prefix`, and the
/// collectives in their memory.
struct DeviceBackend {
  std::string prefix; // "cpu", "cuda"
  /// The device called `name` (which starts with `prefix`); throws
  /// std::runtime_error in one line.
  std::function<std::unique_ptr<Device>(const std::string &name,
                                        const DeviceOptions &options)>
      createDevice;
  /// The collectives of one process over `devices` when they are this
  /// backend's, empty when none is; unset for a backend whose memory is the
  /// host's (the in-process group serves).
  std::function<std::vector<std::unique_ptr<comm::Communicator>>(
      const std::vector<Device *> &devices)>
      createCommunicators;
  /// Rank mode: the communicator in `device`'s memory, null when `device`
  /// is not this backend's; unset as createCommunicators.
  std::function<std::unique_ptr<comm::Communicator>(
      Device &device, comm::Communicator &host,
      std::chrono::milliseconds timeout)>
      createRankCommunicator;
};

/// The backends, in the order registered.
class DeviceRegistry {
public:
  void add(DeviceBackend backend) { backends.push_back(std::move(backend)); }
  /// The backend of the device called `name`, or null.
  const DeviceBackend *find(const std::string &name) const {
    for (const DeviceBackend &backend : backends)
      if (name.rfind(backend.prefix, 0) == 0)
        return &backend;
    return nullptr;
  }
  const std::vector<DeviceBackend> &getBackends() const { return backends; }

private:
  std::vector<DeviceBackend> backends;
};

/// What a device error ends with: the devices every runtime has.
inline constexpr const char *kUseCpuAdvice =
    "; compile for --devices cpu:0[,cpu:1,...]";

/// Registers every backend this runtime was built with
/// (DeviceRegistry.cpp).
void registerCompiledBackends(DeviceRegistry &registry);

/// Each backend's registration, defined in its own folder.
void registerCpuBackend(DeviceRegistry &registry); // runtime/cpu
} // namespace dpc::rt

namespace dpc::cuda {
void registerCudaBackend(rt::DeviceRegistry &registry); // runtime/cuda
} // namespace dpc::cuda

#endif // DPC_RUNTIME_DEVICE_DEVICEREGISTRY_H
