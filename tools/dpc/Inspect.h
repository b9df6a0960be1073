//===- Inspect.h - dpc inspect ----------------------------------*- C++ -*-===//

#ifndef DPC_TOOLS_DPC_INSPECT_H
#define DPC_TOOLS_DPC_INSPECT_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace dpc {
/// `dpc inspect PLAN [--json]` (argv[0] is "inspect"). Never throws; errors
/// are one line on stderr and exit code 1.
int inspectCommand(int argc, char **argv);
/// `dpc compile --report-memory`: each device's memory in the plan
/// `planBytes` (`name` stands for it in messages), as `dpc inspect` shows
/// it. Returns the exit code.
int printMemoryReport(const std::vector<uint8_t> &planBytes,
                      const std::string &name, std::FILE *out);
/// One device's planned peak in a plan, and the kind of memory that holds
/// the most of it (as `dpc inspect` names the kinds).
struct DevicePeak {
  std::string device;
  int64_t bytes = 0;
  std::string largestKind;
  int64_t largestBytes = 0;
};
/// Every device's peak in the plan `planBytes`; empty if it does not load.
std::vector<DevicePeak> getDevicePeaks(const std::vector<uint8_t> &planBytes);
/// "1.50 GiB", "300.00 MiB".
std::string formatBytes(int64_t bytes);
/// What the runtime's loader says of the plan `planBytes` (`name` stands
/// for it): "" if it loads, else its one line. `dpc compile` checks every
/// plan so before writing it.
std::string checkPlanLoads(const std::vector<uint8_t> &planBytes,
                           const std::string &name);
} // namespace dpc

#endif // DPC_TOOLS_DPC_INSPECT_H
