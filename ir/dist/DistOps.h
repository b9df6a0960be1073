//===- DistOps.h - dist dialect ops -----------------------------*- C++ -*-===//

#ifndef DPC_IR_DIST_DISTOPS_H
#define DPC_IR_DIST_DISTOPS_H

#include "ir/dist/DistDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "ir/dist/DistOps.h.inc"

#endif // DPC_IR_DIST_DISTOPS_H
