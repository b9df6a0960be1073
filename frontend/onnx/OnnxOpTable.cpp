//===- OnnxOpTable.cpp - which handler imports an ONNX op -----------------===//

#include "frontend/onnx/OnnxOpTable.h"
#include "frontend/onnx/ModelValidation.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <optional>
#include <vector>

using namespace llvm;

namespace dpc::frontend {
namespace {

struct OnnxOpVersions {
  const char *name;
  std::vector<int64_t> versions;
};

/// Each operator's versions: those it got a new definition at, a negative
/// one where it was deprecated.
const std::vector<OnnxOpVersions> &getOnnxOpVersions() {
  static const std::vector<OnnxOpVersions> versions = {
#define OP(name, ...) {#name, {__VA_ARGS__}},
#include "frontend/onnx/OnnxOpVersions.inc"
#undef OP
  };
  return versions;
}

} // namespace

void OnnxOpTable::add(StringRef opType, OnnxOpHandler handler) {
  for (const OnnxOpVersions &op : getOnnxOpVersions()) {
    if (opType != op.name)
      continue;
    // From its first definition to the version before it was deprecated.
    std::optional<int64_t> since;
    int64_t last = kMaxOpset;
    for (int64_t version : op.versions) {
      if (version > 0 && !since)
        since = version;
      else if (version < 0 && since && last == kMaxOpset)
        last = -version - 1;
    }
    if (!since)
      report_fatal_error(Twine("ONNX deprecated operator ") + opType);
    return add(opType, *since, last, handler);
  }
  report_fatal_error(Twine("ONNX has no operator ") + opType);
}

void OnnxOpTable::add(StringRef opType, int64_t sinceVersion,
                      int64_t lastVersion, OnnxOpHandler handler) {
  SmallVector<OnnxOpRow, 1> &opRows = rows[opType];
  for (const OnnxOpRow &row : opRows)
    if (row.sinceVersion <= lastVersion && sinceVersion <= row.lastVersion)
      report_fatal_error(Twine("two importer rows for ") + opType +
                         " cover the same opset");
  opRows.push_back({sinceVersion, lastVersion, handler});
}

OnnxOpHandler OnnxOpTable::lookup(StringRef opType, int64_t opset) const {
  auto it = rows.find(opType);
  if (it == rows.end())
    return nullptr;
  for (const OnnxOpRow &row : it->second)
    if (row.sinceVersion <= opset && opset <= row.lastVersion)
      return row.handler;
  return nullptr;
}

const OnnxOpTable &getOnnxOpTable() {
  static const OnnxOpTable table = [] {
    OnnxOpTable table;
    registerActivationOps(table);
    registerConstantOps(table);
    registerConvOps(table);
    registerElementwiseOps(table);
    registerMatMulOps(table);
    registerNormalizationOps(table);
    registerPoolingOps(table);
    registerReduceOps(table);
    registerResamplingOps(table);
    registerShapeOps(table);
    registerSlicingOps(table);
    registerThresholdOps(table);
    return table;
  }();
  return table;
}

} // namespace dpc::frontend
