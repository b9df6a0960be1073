//===- ExportCommand.h - `dpc export` ---------------------------*- C++ -*-===//
//
// Writes a plan's trained parameters and buffers (batch-norm running
// statistics), from a checkpoint or the plan's own initial values, by the
// names the model file gives them, as an .npz archive or a safetensors
// file: what PyTorch's load_state_dict takes once turned into tensors.
// Optimizer state stays out. It never throws: every error is one line on
// stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_EXPORTCOMMAND_H
#define DPC_RUNTIME_TRAIN_EXPORTCOMMAND_H

#include <iosfwd>
#include <string>
#include <vector>

namespace dpc::runtime {

/// `args` excludes "export". Returns the exit code.
int exportCommand(const std::vector<std::string> &args, std::ostream &out,
                  std::ostream &err);

/// The usage text (`dpc export --help`).
const char *getExportUsage();

} // namespace dpc::runtime

#endif // DPC_RUNTIME_TRAIN_EXPORTCOMMAND_H
