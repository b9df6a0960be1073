//===- OnnxOpTable.h - which handler imports an ONNX op ---------*- C++ -*-===//
//
// One row per ONNX operator dpc imports: its op type, the opsets the row
// covers and the handler that imports a node of it. Each op family
// (ops/*.cpp) adds its rows in its own register function; getOnnxOpTable
// calls them all, in a fixed order, the first time it is asked (explicit
// calls, not static initializers, which a static library may drop). The
// importer looks each node up here, as onnx-mlir's import_handler_map_.
//
// A row's opsets default to those at which ONNX defines the operator
// (OnnxOpVersions.inc) within dpc's kMinOpset..kMaxOpset; a handler follows
// the operator's changes between those versions itself.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_ONNXOPTABLE_H
#define DPC_FRONTEND_ONNX_ONNXOPTABLE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace dpc::frontend {

class Importer;

/// Imports `node`, binding its outputs in the importer; fails (fail())
/// naming what it does not support.
using OnnxOpHandler = void (*)(Importer &importer, const onnx::NodeProto &node);

struct OnnxOpRow {
  /// The opsets [sinceVersion, lastVersion] this row imports.
  int64_t sinceVersion;
  int64_t lastVersion;
  OnnxOpHandler handler;
};

class OnnxOpTable {
public:
  /// Adds `opType` for the opsets ONNX defines it at (OnnxOpVersions.inc).
  void add(llvm::StringRef opType, OnnxOpHandler handler);
  /// Adds `opType` for opsets [sinceVersion, lastVersion].
  void add(llvm::StringRef opType, int64_t sinceVersion, int64_t lastVersion,
           OnnxOpHandler handler);
  /// The handler for `opType` at `opset`, or null if no row covers it.
  OnnxOpHandler lookup(llvm::StringRef opType, int64_t opset) const;

private:
  llvm::StringMap<llvm::SmallVector<OnnxOpRow, 1>> rows;
};

/// The table of every op family, built once.
const OnnxOpTable &getOnnxOpTable();

// Each family's rows (ops/<Family>.cpp).
void registerActivationOps(OnnxOpTable &table);
void registerConstantOps(OnnxOpTable &table);
void registerConvOps(OnnxOpTable &table);
void registerElementwiseOps(OnnxOpTable &table);
void registerMatMulOps(OnnxOpTable &table);
void registerNormalizationOps(OnnxOpTable &table);
void registerPoolingOps(OnnxOpTable &table);
void registerReduceOps(OnnxOpTable &table);
void registerResamplingOps(OnnxOpTable &table);
void registerShapeOps(OnnxOpTable &table);
void registerSlicingOps(OnnxOpTable &table);
void registerThresholdOps(OnnxOpTable &table);

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_ONNXOPTABLE_H
