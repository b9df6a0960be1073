//===- ONNXImporter.h - ONNX model file to nn IR ----------------*- C++ -*-===//
//
// Deliberately free of ONNX and protobuf headers: those need exceptions,
// which the MLIR-side code is built without.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_ONNXIMPORTER_H
#define DPC_FRONTEND_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::frontend {

/// Imports the ONNX model file at `path` as a module holding one function,
/// `@forward`: the model's forward pass in the nn dialect. Data inputs,
/// parameters and buffers (initializers: a buffer where a node reads it as
/// state or PyTorch 2's exporter tags it so) and outputs keep their ONNX
/// names as `nn.input`, `nn.param` / `nn.buffer` and `nn.output`
/// attributes. A symbolic batch dimension, or the static one the model was
/// exported with, becomes `?`.
///
/// On failure returns null and sets `error` to one line (without the file
/// name) saying what is wrong, naming the node and op type where one is at
/// fault.
mlir::OwningOpRef<mlir::ModuleOp> importONNXFile(llvm::StringRef path,
                                                 mlir::MLIRContext &context,
                                                 std::string &error);

/// The model file's tensors (initializers and Constant node values) by name,
/// as raw little-endian bytes: the initial values of its parameters. Data
/// stored outside the model file is read from where the model says. On
/// failure returns false and sets `error` to one line.
bool readONNXTensors(llvm::StringRef path,
                     llvm::StringMap<std::vector<uint8_t>> &tensors,
                     std::string &error);

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_ONNXIMPORTER_H
