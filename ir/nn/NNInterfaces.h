//===- NNInterfaces.h - nn op interfaces ------------------------*- C++ -*-===//

#ifndef DPC_IR_NN_NNINTERFACES_H
#define DPC_IR_NN_NNINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace dpc {
/// What KernelLoweringOpInterface lowers through (codegen/lowering/).
class KernelBuilder;
} // namespace dpc

#include "ir/nn/NNInterfaces.h.inc"

namespace dpc::nn {
/// Attaches DifferentiableOpInterface to the forward ops, which are defined
/// without it so that their ODS says only what they compute.
void attachDifferentiableOpInterfaces(mlir::MLIRContext &context);
} // namespace dpc::nn

#endif // DPC_IR_NN_NNINTERFACES_H
