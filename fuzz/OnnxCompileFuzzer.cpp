//===- OnnxCompileFuzzer.cpp - model bytes through all of dpc compile -----===//
//
// What `dpc compile MODEL.onnx --batch 3 --devices cpu:0,cpu:1 -o PLAN`
// does with a model file: import, differentiate, partition (an uneven
// split), lower, plan memory and write the plan, which the runtime's loader
// must then accept: the compiler never writes a plan its own loader
// refuses. A model refused anywhere on the way must come back as one-line
// diagnostics, never as a failure that says nothing. The seeds are the ONNX
// import target's (corpus/onnx-compile is a link to them).
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanLoader.h"
#include "tools/CompilePipeline.h"
#include "tools/Registration.h"

#include "fuzz/FuzzInput.h"
#include "fuzz/FuzzModel.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::DialectRegistry registry;
  dpc::registerAllDialects(registry);
  // A context per input, threading off: see OnnxImportFuzzer.cpp.
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  int errors = 0;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
      dpc::fuzz::checkErrorLine(diag.str(), "");
      ++errors;
    }
  });

  std::string path;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      dpc::fuzz::importModel(data, size, context, path);
  if (!module)
    return 0;
  dpc::PipelineOptions pipeline;
  pipeline.batch = 3;
  pipeline.training = pipeline.partitions = pipeline.lowers = true;
  pipeline.rematerializes = true; // as dpc compile: with --remat none
  pipeline.devices = "cpu:0,cpu:1";
  mlir::PassManager pm(&context);
  dpc::buildCompilePipeline(pm, pipeline);
  if (mlir::failed(pm.run(*module))) {
    if (errors == 0) {
      std::fprintf(stderr, "dpc fuzz: compiling failed without an error\n");
      std::abort();
    }
    return 0;
  }
  std::string error;
  mlir::FailureOr<std::vector<uint8_t>> plan =
      dpc::buildModelPlan(*module, path, pipeline.batch, "fuzz", error);
  if (mlir::failed(plan)) {
    if (!error.empty())
      dpc::fuzz::checkErrorLine(error, "");
    else if (errors == 0) {
      std::fprintf(stderr, "dpc fuzz: writing the plan failed without an "
                           "error\n");
      std::abort();
    }
    return 0;
  }
  try {
    dpc::plan::LoadedPlan::fromBytes(std::move(*plan), "fuzz.plan");
  } catch (const dpc::plan::PlanError &refused) {
    std::fprintf(stderr,
                 "dpc fuzz: the compiler wrote a plan its loader refuses: "
                 "%s\n",
                 refused.what());
    std::abort();
  }
  return 0;
}
