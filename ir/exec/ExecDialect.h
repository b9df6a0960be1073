//===- ExecDialect.h - the exec dialect -------------------------*- C++ -*-===//

#ifndef DPC_IR_EXEC_EXECDIALECT_H
#define DPC_IR_EXEC_EXECDIALECT_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dialect.h"

#include "runtime/plan/Plan_generated.h"

#include "ir/exec/ExecOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/exec/ExecAttrs.h.inc"

#endif // DPC_IR_EXEC_EXECDIALECT_H
