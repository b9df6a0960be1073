//===- ExecOps.h - exec dialect ops -----------------------------*- C++ -*-===//

#ifndef DPC_IR_EXEC_EXECOPS_H
#define DPC_IR_EXEC_EXECOPS_H

#include "ir/exec/ExecDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "ir/exec/ExecOps.h.inc"

#endif // DPC_IR_EXEC_EXECOPS_H
