//===- MemoryBudget.h - dpc compile --memory-budget -------------*- C++ -*-===//

#ifndef DPC_TOOLS_DPC_MEMORYBUDGET_H
#define DPC_TOOLS_DPC_MEMORYBUDGET_H

#include "tools/CompilePipeline.h"

#include "mlir/Support/LogicalResult.h"

namespace dpc::cli {

/// `flags` with the least sharding whose planned peak fits --memory-budget
/// on every device (--shard's stage only, when given), after one line on
/// stderr that says why; failure after one error line when none fits.
mlir::FailureOr<PipelineOptions>
chooseUnderBudget(const PipelineOptions &flags);

} // namespace dpc::cli

#endif // DPC_TOOLS_DPC_MEMORYBUDGET_H
