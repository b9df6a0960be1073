//===- EvalExportNote.h - a model exported in eval mode? --------*- C++ -*-===//
//
// PyTorch's eval-mode export drops dropout and (with constant folding)
// folds batch norm into the convolutions: training the file then trains a
// different network, and no check of the file alone can prove it. What it
// can see is a hint: no batch norm or dropout in training form, yet names
// (`bn1.weight`, `/dropout/...`, `BatchNorm`) that say the model had them.
//
// Deliberately free of ONNX and protobuf headers (see ONNXImporter.h).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_EVALEXPORTNOTE_H
#define DPC_FRONTEND_ONNX_EVALEXPORTNOTE_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace dpc::frontend {

/// True if `name` (a node, value or initializer name) suggests batch norm
/// or dropout: `bn`, `bn2` as a name part, `batchnorm`, `batch_norm` or
/// `dropout`, in any case.
bool suggestsNormOrDropout(llvm::StringRef name);

/// The one-line note (without the file name) for the ONNX model at `path`
/// when it has no batch norm or dropout in training form but names that
/// suggest it had; "" otherwise, and for a file that cannot be read (the
/// importer reports that).
std::string getEvalExportNote(llvm::StringRef path);

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_EVALEXPORTNOTE_H
