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

#include "runtime/train/OnnxWriter.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace dpc::runtime {

/// `args` excludes "export". Returns the exit code.
int exportCommand(const std::vector<std::string> &args, std::ostream &out,
                  std::ostream &err);

/// What `dpc export` writes: the plan's parameters and buffers, each once
/// under its name in the model file, with the values of the checkpoint in
/// `checkpointDirectory` (empty: the plan's initial values). Throws
/// RunError or plan::PlanError naming the file at fault.
std::vector<train::ExportedTensor>
loadExportedTensors(const std::string &planPath,
                    const std::string &checkpointDirectory);

/// The usage text (`dpc export --help`).
const char *getExportUsage();

} // namespace dpc::runtime

#endif // DPC_RUNTIME_TRAIN_EXPORTCOMMAND_H
