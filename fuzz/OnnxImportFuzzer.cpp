//===- OnnxImportFuzzer.cpp - model bytes to the ONNX importer ------------===//
//
// What `dpc compile MODEL.onnx` does with a model file before the passes:
// import it into the nn dialect, verify the module, read the initial
// parameter values, look for the names of an eval-mode export. A model the
// importer refuses must come back as one line; one it accepts must verify.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/EvalExportNote.h"
#include "frontend/onnx/ONNXImporter.h"
#include "ir/nn/NNDialect.h"

#include "fuzz/FuzzInput.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = dpc::fuzz::writeScratchFile("model.onnx", data, size);
  // A context per input: nothing one model interns can hide a bug in the
  // next. Threading off: a fuzz input is small, and threads cost more.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<dpc::nn::NNDialect, mlir::func::FuncDialect>();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
      diagnostics += diag.str() + "\n";
  });

  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      dpc::frontend::importONNXFile(path, context, error);
  if (!module) {
    dpc::fuzz::checkErrorLine(error, "");
    return 0;
  }
  // The importer builds IR it has checked: a module that does not verify
  // is a bug in the importer, which dpc would report as the model's fault.
  if (mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr, "dpc fuzz: the imported module does not verify:\n%s",
                 diagnostics.c_str());
    std::abort();
  }
  llvm::StringMap<std::vector<uint8_t>> tensors;
  if (!dpc::frontend::readONNXTensors(path, tensors, error))
    dpc::fuzz::checkErrorLine(error, "");
  (void)dpc::frontend::getEvalExportNote(path);
  return 0;
}
