//===- FuzzModel.cpp - a fuzz input imported as an ONNX model -------------===//

#include "fuzz/FuzzModel.h"

#include "frontend/onnx/ONNXImporter.h"
#include "fuzz/FuzzInput.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdio>
#include <cstdlib>

mlir::OwningOpRef<mlir::ModuleOp>
dpc::fuzz::importModel(const uint8_t *data, size_t size,
                       mlir::MLIRContext &context, std::string &path) {
  path = writeScratchFile("model.onnx", data, size);
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      dpc::frontend::importONNXFile(path, context, error);
  if (!module) {
    checkErrorLine(error, "");
    return nullptr;
  }
  // The verifier's diagnostics go here, before any handler of the caller's.
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler collect(&context, [&](mlir::Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
  });
  if (mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr, "dpc fuzz: the imported module does not verify:\n%s",
                 diagnostics.c_str());
    std::abort();
  }
  return module;
}
