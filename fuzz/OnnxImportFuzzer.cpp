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
#include "fuzz/FuzzModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per input: nothing one model interns can hide a bug in the
  // next. Threading off: a fuzz input is small, and threads cost more.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<dpc::nn::NNDialect, mlir::func::FuncDialect>();
  std::string path;
  if (!dpc::fuzz::importModel(data, size, context, path))
    return 0;
  std::string error;
  llvm::StringMap<std::vector<uint8_t>> tensors;
  if (!dpc::frontend::readONNXTensors(path, tensors, error))
    dpc::fuzz::checkErrorLine(error, "");
  (void)dpc::frontend::getEvalExportNote(path);
  return 0;
}
