//===- FuzzModel.h - a fuzz input imported as an ONNX model -----*- C++ -*-===//
//
// The first step of both ONNX targets: the bytes as a model file, through
// the importer, with the importer's contract checked.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FUZZ_FUZZMODEL_H
#define DPC_FUZZ_FUZZMODEL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace dpc::fuzz {

/// Writes the input as `model.onnx` in the scratch directory (its path goes
/// to `path`) and imports it into `context`. A refused model gives null
/// after checking that the error is one line; an accepted one must verify
/// (the importer builds IR it has checked: a module that does not verify is
/// a bug dpc would report as the model's fault), else this aborts with the
/// verifier's diagnostics.
mlir::OwningOpRef<mlir::ModuleOp> importModel(const uint8_t *data, size_t size,
                                              mlir::MLIRContext &context,
                                              std::string &path);

} // namespace dpc::fuzz

#endif // DPC_FUZZ_FUZZMODEL_H
