//===- DeviceRegistry.cpp - devices and communicators by name -------------===//
//
// The one place that knows which backends this runtime was built with:
// registerCompiledBackends, each behind its build flag. Everything else
// asks the registry.
//
//===----------------------------------------------------------------------===//

#include "runtime/device/DeviceRegistry.h"
#include "runtime/comm/InProcessCommunicator.h"

#include <stdexcept>

namespace dpc::rt {

void registerCompiledBackends(DeviceRegistry &registry) {
  registerCpuBackend(registry);
#ifdef DPC_HAVE_CUDA
  cuda::registerCudaBackend(registry);
#endif
}

namespace {

const DeviceRegistry &getRegistry() {
  static const DeviceRegistry registry = [] {
    DeviceRegistry compiled;
    registerCompiledBackends(compiled);
    return compiled;
  }();
  return registry;
}

} // namespace

std::unique_ptr<Device> createDevice(const std::string &name,
                                     const DeviceOptions &options) {
  if (const DeviceBackend *backend = getRegistry().find(name))
    return backend->createDevice(name, options);
  throw std::runtime_error(
      "device '" + name +
      "' is not available: this runtime has no CUDA backend or GPU" +
      kUseCpuAdvice);
}

std::vector<std::unique_ptr<comm::Communicator>>
createCommunicators(const std::vector<Device *> &devices) {
  for (const DeviceBackend &backend : getRegistry().getBackends())
    if (backend.createCommunicators) {
      auto group = backend.createCommunicators(devices);
      if (!group.empty())
        return group;
    }
  // Host memory: threads of this process.
  return comm::createInProcessGroup(static_cast<int>(devices.size()));
}

std::unique_ptr<comm::Communicator>
createRankCommunicator(Device &device, comm::Communicator &host,
                       std::chrono::milliseconds timeout) {
  for (const DeviceBackend &backend : getRegistry().getBackends())
    if (backend.createRankCommunicator)
      if (auto communicator =
              backend.createRankCommunicator(device, host, timeout))
        return communicator;
  return nullptr; // host memory: `host` serves
}

} // namespace dpc::rt
