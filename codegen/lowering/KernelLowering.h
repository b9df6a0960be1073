//===- KernelLowering.h - nn ops lowered to kernels, by family --*- C++ -*-===//
//
// KernelLoweringOpInterface's external models: each op family's file in
// this folder specializes lowerToKernels for its ops and attaches them in
// its attach...Lowerings; registerKernelLoweringModels (KernelLowering.cpp)
// registers them all for the tools' contexts.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_CODEGEN_LOWERING_KERNELLOWERING_H
#define DPC_CODEGEN_LOWERING_KERNELLOWERING_H

#include "codegen/lowering/KernelBuilder.h"
#include "ir/nn/NNInterfaces.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dpc {

/// Registers the kernel lowering of every nn op the plan can run.
void registerKernelLoweringModels(mlir::DialectRegistry &registry);

/// The kernel calls of one nn op: specialized for each op in its family's
/// file (an op attached without one does not link).
template <typename OpT>
mlir::LogicalResult lowerToKernels(OpT op, KernelBuilder &builder);

template <typename OpT>
struct KernelLoweringModel
    : public nn::KernelLoweringOpInterface::ExternalModel<
          KernelLoweringModel<OpT>, OpT> {
  mlir::LogicalResult lowerToKernels(mlir::Operation *op,
                                     KernelBuilder &builder) const {
    return dpc::lowerToKernels(mlir::cast<OpT>(op), builder);
  }
};

template <typename... OpTs>
void attachKernelLowerings(mlir::MLIRContext &context) {
  (OpTs::template attachInterface<KernelLoweringModel<OpTs>>(context), ...);
}

// One per family file.
void attachActivationLowerings(mlir::MLIRContext &context);
void attachConvLowerings(mlir::MLIRContext &context);
void attachElementwiseLowerings(mlir::MLIRContext &context);
void attachLossLowerings(mlir::MLIRContext &context);
void attachMatmulLowerings(mlir::MLIRContext &context);
void attachNormLowerings(mlir::MLIRContext &context);
void attachOptimizerLowerings(mlir::MLIRContext &context);
void attachPoolLowerings(mlir::MLIRContext &context);
void attachShapeLowerings(mlir::MLIRContext &context);

} // namespace dpc

#endif // DPC_CODEGEN_LOWERING_KERNELLOWERING_H
