//===- NNDialect.h - the nn dialect -----------------------------*- C++ -*-===//

#ifndef DPC_IR_NN_NNDIALECT_H
#define DPC_IR_NN_NNDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "ir/nn/NNOpsDialect.h.inc"

#endif // DPC_IR_NN_NNDIALECT_H
