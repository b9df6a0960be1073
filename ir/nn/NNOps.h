//===- NNOps.h - nn dialect ops ---------------------------------*- C++ -*-===//

#ifndef DPC_IR_NN_NNOPS_H
#define DPC_IR_NN_NNOPS_H

#include "ir/nn/NNDialect.h"
#include "ir/nn/NNInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/nn/NNEnums.h.inc"

#define GET_OP_CLASSES
#include "ir/nn/NNOps.h.inc"

namespace dpc::nn {
/// Sets the result types of `op` to those its operands and attributes imply.
/// If they are invalid, emits a diagnostic at the op's location and fails,
/// leaving the op unchanged. Serves shape propagation and the importers,
/// which build ops with placeholder result types and then call this.
mlir::LogicalResult inferResultTypes(mlir::InferTypeOpInterface op);
} // namespace dpc::nn

#endif // DPC_IR_NN_NNOPS_H
