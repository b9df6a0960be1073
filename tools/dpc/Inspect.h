//===- Inspect.h - dpc inspect ----------------------------------*- C++ -*-===//

#ifndef DPC_TOOLS_DPC_INSPECT_H
#define DPC_TOOLS_DPC_INSPECT_H

namespace dpc {
/// `dpc inspect PLAN [--json]` (argv[0] is "inspect"). Never throws; errors
/// are one line on stderr and exit code 1.
int inspectCommand(int argc, char **argv);
} // namespace dpc

#endif // DPC_TOOLS_DPC_INSPECT_H
