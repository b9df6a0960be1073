//===- PlanWriter.h - exec IR to a plan file --------------------*- C++ -*-===//

#ifndef DPC_CODEGEN_PLANWRITER_H
#define DPC_CODEGEN_PLANWRITER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dpc {

/// Plan.fbs's OnnxModel: the model's eval graph for `dpc export`.
struct OnnxModelRecord {
  int64_t irVersion = 0, opset = 0, minOpset = 0, maxOpset = 0;
  std::vector<uint8_t> head, graph;
  std::string problem;
  /// OnnxGraphForm: the graph (empty: `graph`) or the problem at opsets
  /// [minOpset, maxOpset].
  struct Form {
    int64_t minOpset = 0, maxOpset = 0;
    std::vector<uint8_t> graph;
    std::string problem;
  };
  std::vector<Form> forms;
};

struct PlanOptions {
  /// The model file, recorded in the plan.
  std::string modelPath;
  /// The compiled (maximum) batch: the size of `?` dims.
  int64_t batch = 0;
  /// The raw little-endian data of a model tensor by name, or null if the
  /// model has no such tensor.
  llvm::function_ref<const std::vector<uint8_t> *(llvm::StringRef)>
      initialValues;
  /// Recorded for plans compiled from an ONNX model.
  std::optional<OnnxModelRecord> onnxModel;
};

/// Serializes a module of exec.persistent and exec.step ops as a plan file
/// (runtime/plan/Plan.fbs). Emits a diagnostic and fails on anything the
/// schema cannot hold.
mlir::FailureOr<std::vector<uint8_t>> writePlan(mlir::ModuleOp module,
                                                const PlanOptions &options);

} // namespace dpc

#endif // DPC_CODEGEN_PLANWRITER_H
