//===- CpuBackend.cpp - the CPU backend in the device registry ------------===//

#include "runtime/cpu/CpuDevice.h"
#include "runtime/device/DeviceRegistry.h"

#include <algorithm>
#include <omp.h>

namespace dpc::rt {

void registerCpuBackend(DeviceRegistry &registry) {
  DeviceBackend cpu;
  cpu.prefix = "cpu";
  cpu.createDevice =
      [](const std::string &name,
         const DeviceOptions &options) -> std::unique_ptr<Device> {
    // The creating thread's count: OMP_NUM_THREADS, or the cores.
    int cores = omp_get_max_threads();
    int local = std::max(1, options.numLocalDevices);
    int threads = std::max(1, cores / local);
    int reduction =
        std::max(1, cores / std::max(local, options.numPlanDevices));
    return std::make_unique<CpuDevice>(name, threads, reduction);
  };
  // Host memory: no communicators of its own.
  registry.add(std::move(cpu));
}

} // namespace dpc::rt
