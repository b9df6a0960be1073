//===- ModelValidation.h - dpc's own check of an ONNX model -----*- C++ -*-===//
//
// What dpc relies on in a model file, checked before import, in place of
// ONNX's checker: Debian's ONNX 1.12 refuses IR versions above 8 and opsets
// above 17, which PyTorch 2's default exporter writes, and its messages
// span lines. The protobuf classes read newer files fine (unknown fields
// are skipped), so dpc checks the structure itself: the IR version, the
// default-domain opset, a graph in topological order with each value
// defined once, and every initializer's data, inline or external, of the
// size its dims and type say. Per-op rules are the importer's.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_MODELVALIDATION_H
#define DPC_FRONTEND_ONNX_MODELVALIDATION_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace dpc::frontend {

/// The IR versions and default-domain opsets dpc reads.
constexpr int64_t kMinIrVersion = 3, kMaxIrVersion = 10;
constexpr int64_t kMinOpset = 11, kMaxOpset = 21;

/// The first problem with `model` (read from a file in `modelDir`, where
/// external data lives), in one line; "" when it may be imported.
std::string validateModel(const onnx::ModelProto &model,
                          llvm::StringRef modelDir);

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_MODELVALIDATION_H
