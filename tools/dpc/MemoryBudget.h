//===- MemoryBudget.h - dpc compile --memory-budget -------------*- C++ -*-===//

#ifndef DPC_TOOLS_DPC_MEMORYBUDGET_H
#define DPC_TOOLS_DPC_MEMORYBUDGET_H

#include "tools/CompilePipeline.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <vector>

namespace dpc::cli {

/// What writes a compiled candidate: its module, the options it was
/// compiled with and its plan; returns the exit status.
using WriteCompiled = int (*)(mlir::ModuleOp, const PipelineOptions &,
                              const std::vector<uint8_t> *);

/// Compiles `flags` with the least sharding (then recomputation) whose
/// planned peak fits --memory-budget on every device (--shard's stage
/// only, when given) and hands it to `write`, after one line on stderr
/// that says why; 1 after one error line when none fits.
int compileUnderBudget(const PipelineOptions &flags, WriteCompiled write);

} // namespace dpc::cli

#endif // DPC_TOOLS_DPC_MEMORYBUDGET_H
