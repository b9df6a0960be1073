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

/// The layout "nChw16c" names (plan::getLayoutName's spelling), or none.
std::optional<plan::Layout> parseLayoutName(llvm::StringRef name);

/// The layout of `buffer`: its exec.arena's `layout`, else plain.
plan::Layout getBufferLayout(mlir::Value buffer);

} // namespace dpc::exec

#endif // DPC_IR_EXEC_EXECOPS_H
