//===- PlanMemory.cpp - the memory a plan needs, per device ---------------===//

#include "runtime/plan/PlanMemory.h"

#include "runtime/abi/PlanTypes.h"
#include "runtime/plan/ByteSize.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace dpc::plan;

/// The input buffers of `step` on device `deviceName`.
static int64_t getInputBytes(const Step &step, const std::string &deviceName) {
  int64_t bytes = 0;
  if (const auto *inputs = step.inputs())
    for (const Binding *binding : *inputs) {
      const Tensor &tensor = *step.tensors()->Get(binding->tensor());
      bytes += getByteSize(tensor.dtype(), toDims(tensor.dims()));
    }
  bool cpu = deviceName.rfind("cpu:", 0) == 0;
  return cpu ? 2 * bytes : bytes;
}

std::vector<DeviceMemory> dpc::plan::summarizeMemory(const Plan &plan) {
  std::vector<DeviceMemory> devices(plan.devices()->size());
  for (size_t d = 0; d < devices.size(); ++d)
    devices[d].name = plan.devices()->Get(d)->name()->str();
  for (const PersistentTensor *tensor : *plan.persistent()) {
    DeviceMemory &device = devices.at(tensor->device());
    int64_t bytes =
        getNumElements(toDims(tensor->dims())) * getDTypeSize(tensor->dtype());
    switch (tensor->kind()) {
    case PersistentKind::Parameter:
      device.parameterBytes += bytes;
      break;
    case PersistentKind::Buffer:
      device.bufferBytes += bytes;
      break;
    case PersistentKind::OptimizerState:
    case PersistentKind::GradAccumulator:
      device.optimizerBytes += bytes;
      break;
    }
  }
  for (const Step *step : *plan.steps()) {
    DeviceMemory &device = devices.at(step->device());
    device.rematFlops += step->remat_flops();
    device.inputBytes += getInputBytes(*step, device.name);
    if (!device.peakStep.empty() && step->arena_bytes() <= device.arenaBytes)
      continue;
    device.arenaBytes = step->arena_bytes();
    device.peakStep = step->name()->str();
    device.activationBytes = step->activation_bytes();
    device.gradientBytes = step->gradient_bytes();
    device.gatheredParameterBytes = step->gathered_parameter_bytes();
    device.workspaceBytes = std::max<int64_t>(
        0, device.arenaBytes - device.activationBytes - device.gradientBytes -
               device.gatheredParameterBytes);
    device.liveAtPeak.clear();
    if (step->live_at_peak())
      for (const LiveTensor *tensor : *step->live_at_peak())
        device.liveAtPeak.push_back(tensor);
  }
  return devices;
}

std::string dpc::plan::formatBytes(int64_t bytes) {
  char text[32];
  if (bytes >= (int64_t(1) << 30))
    std::snprintf(text, sizeof(text), "%.2f GiB", bytes / 1073741824.0);
  else
    std::snprintf(text, sizeof(text), "%.2f MiB", bytes / 1048576.0);
  return text;
}

/// MemAvailable from /proc/meminfo, in bytes; 0 if unknown.
static int64_t availablePhysicalMemory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:")
      return kib * 1024;
  }
  return 0;
}

void dpc::plan::checkDeviceMemory(const LoadedPlan &loaded) {
  std::vector<DeviceMemory> devices = summarizeMemory(loaded.get());
  if (const char *fake = std::getenv("DPC_DEVICE_MEMORY")) {
    std::optional<int64_t> capacity = parseByteSize(fake);
    if (!capacity)
      loaded.fail(std::string("DPC_DEVICE_MEMORY: '") + fake +
                  "' is not a size (e.g. 1.5GiB, 300MiB)");
    for (const DeviceMemory &device : devices)
      if (device.requiredBytes() > *capacity)
        loaded.fail("the plan needs " + formatBytes(device.requiredBytes()) +
                    " on " + device.name + " but the device has " +
                    formatBytes(*capacity) + " (DPC_DEVICE_MEMORY)");
    return;
  }
  // CPU devices share the machine's memory.
  int64_t needed = 0;
  size_t cpus = 0;
  for (const DeviceMemory &device : devices)
    if (device.name.rfind("cpu:", 0) == 0) {
      needed += device.requiredBytes();
      ++cpus;
    }
  int64_t available = availablePhysicalMemory();
  if (cpus && available && needed > available)
    loaded.fail("the plan needs " + formatBytes(needed) + " on its " +
                std::to_string(cpus) + " CPU device(s) but " +
                formatBytes(available) +
                " of physical memory is available; compile with "
                "--remat=auto or a smaller --batch");
}
