//===- RunCommand.h - `dpc run` ---------------------------------*- C++ -*-===//
//
// The entry point of `dpc run` (tools/dpc) and of the standalone dpc-run.
// It never throws: every error is one line on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_RUNCOMMAND_H
#define DPC_RUNTIME_TRAIN_RUNCOMMAND_H

#include <iosfwd>
#include <string>
#include <vector>

namespace dpc::runtime {

/// argv[0] is "run"; the flags follow. Returns the exit code.
int runCommand(int argc, char **argv);

/// The same with explicit streams (for tests); `args` excludes "run".
/// Progress bars are drawn only when `out` is std::cout on a terminal.
int runCommand(const std::vector<std::string> &args, std::ostream &out,
               std::ostream &err);

} // namespace dpc::runtime

#endif // DPC_RUNTIME_TRAIN_RUNCOMMAND_H
