//===- Registration.cpp - everything dpc's tools register -----------------===//

#include "tools/Registration.h"

#include "ir/nn/NNDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void dpc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::func::FuncDialect, nn::NNDialect>();
}

void dpc::registerAllPasses() {
  dpc::registerDPCPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
}
