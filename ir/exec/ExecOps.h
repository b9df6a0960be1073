//===- ExecOps.h - exec dialect ops -----------------------------*- C++ -*-===//

#ifndef DPC_IR_EXEC_EXECOPS_H
#define DPC_IR_EXEC_EXECOPS_H

#include "ir/exec/ExecDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "runtime/plan/Plan_generated.h"

#include <optional>

#define GET_OP_CLASSES
#include "ir/exec/ExecOps.h.inc"

namespace dpc::exec {

/// How many times the step's batch the `?` dim of `buffer` is: its arena or
/// view op's batch_scale, 1 for any other buffer.
int64_t getBatchScale(mlir::Value buffer);

/// The dims of `buffer` at a step batch of `batch`.
llvm::SmallVector<int64_t> getBufferDims(mlir::Value buffer, int64_t batch);

/// The layout "nChw16c" names (plan::getLayoutName's spelling), or none.
std::optional<plan::Layout> parseLayoutName(llvm::StringRef name);

/// The buffer `buffer` views, through every exec.view (itself if none).
mlir::Value getRootBuffer(mlir::Value buffer);

/// The layout of `buffer`: its exec.arena's `layout`, else plain.
plan::Layout getBufferLayout(mlir::Value buffer);

} // namespace dpc::exec

#endif // DPC_IR_EXEC_EXECOPS_H
