//===- Registration.cpp - everything dpc's tools register -----------------===//

#include "tools/Registration.h"

#include "codegen/Passes.h"
#include "codegen/StepMemory.h"
#include "codegen/lowering/KernelLowering.h"
#include "ir/dist/DistDialect.h"
#include "ir/exec/ExecDialect.h"
#include "ir/nn/NNDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void dpc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::func::FuncDialect, mlir::memref::MemRefDialect,
                  nn::NNDialect, dist::DistDialect, exec::ExecDialect>();
  registerKernelLoweringModels(registry);
}

void dpc::registerAllPasses() {
  // Before registerDPCPasses, whose own registration of the pass (without
  // the back end's memory estimate) then leaves this one in place.
  mlir::registerPass([] {
    return createRematerialize(RematerializeOptions(), planStepMemory);
  });
  dpc::registerDPCPasses();
  dpc::registerDPCCodegenPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
}
