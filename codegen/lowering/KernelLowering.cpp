//===- KernelLowering.cpp - registers the nn ops' kernel lowerings --------===//

#include "codegen/lowering/KernelLowering.h"

#include "ir/nn/NNDialect.h"

#include "mlir/IR/DialectRegistry.h"

void dpc::registerKernelLoweringModels(mlir::DialectRegistry &registry) {
  registry.addExtension(+[](mlir::MLIRContext *context, nn::NNDialect *) {
    attachActivationLowerings(*context);
    attachConvLowerings(*context);
    attachElementwiseLowerings(*context);
    attachLossLowerings(*context);
    attachMatmulLowerings(*context);
    attachNormLowerings(*context);
    attachOptimizerLowerings(*context);
    attachPoolLowerings(*context);
    attachShapeLowerings(*context);
  });
}
