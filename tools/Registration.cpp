//===- Registration.cpp - everything dpc's tools register -----------------===//

#include "tools/Registration.h"

#include "codegen/Passes.h"
#include "codegen/StepMemory.h"
#include "codegen/lowering/KernelLowering.h"
#include "ir/dist/DistDialect.h"
#include "ir/exec/ExecDialect.h"
#include "ir/nn/NNDialect.h"
#include "passes/Passes.h"
#include "tools/CompilePipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/ErrorHandling.h"

void dpc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::func::FuncDialect, mlir::memref::MemRefDialect,
                  nn::NNDialect, dist::DistDialect, exec::ExecDialect>();
  registerKernelLoweringModels(registry);
}

/// dpc-rematerialize with the back end's memory estimate, which budget=SIZE
/// needs. The pass registry keeps the first registration of an argument, so
/// this one must come before registerDPCPasses' own (without an estimate):
/// checked here rather than left to the order of the calls.
static void registerRematerializeWithEstimate() {
  using namespace dpc;
  [[maybe_unused]] static const bool once = [] {
    auto allocate = [] {
      return createRematerialize(RematerializeOptions(), planStepMemory);
    };
    if (mlir::PassInfo::lookup(allocate()->getArgument()))
      llvm::report_fatal_error("dpc-rematerialize was registered without the "
                               "back end's memory estimate");
    mlir::registerPass(allocate);
    return true;
  }();
}

void dpc::registerAllPasses() {
  registerRematerializeWithEstimate();
  dpc::registerDPCPasses();
  dpc::registerCompilePipelines();
  dpc::registerDPCCodegenPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
}
