//===- InferenceModel.h - the model's eval graph for export -----*- C++ -*-===//
//
// What `dpc export -o model.onnx` needs to write the trained model back as
// ONNX, recorded in the plan at compile time (Plan.fbs's OnnxModel): the
// model file's graph in eval form -- batch norm with its running statistics
// and a single output, dropout off -- without the initializers that are
// training state, which export adds from a checkpoint under the same names.
// Built here, where the ONNX classes are, so that the runtime only has to
// append tensors to serialized bytes.
//
// Deliberately free of ONNX and protobuf headers (see ONNXImporter.h).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_INFERENCEMODEL_H
#define DPC_FRONTEND_ONNX_INFERENCEMODEL_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::frontend {

/// A parameter or buffer of the plan: export writes it as the initializer
/// `name` of type `type`.
struct StateTensor {
  std::string name;
  mlir::RankedTensorType type;
};

/// Plan.fbs's OnnxGraphForm: the graph at opsets [minOpset, maxOpset],
/// when it differs from the model's (an empty graph: the same), or why it
/// cannot be written there.
struct GraphForm {
  int64_t minOpset = 0, maxOpset = 0;
  std::vector<uint8_t> graph;
  std::string problem;
};

/// The fields of Plan.fbs's OnnxModel.
struct InferenceModel {
  int64_t irVersion = 0, opset = 0, minOpset = 0, maxOpset = 0;
  /// ModelProto without ir_version, default-domain opset_import and graph.
  std::vector<uint8_t> head;
  /// GraphProto in eval form without the state's initializers.
  std::vector<uint8_t> graph;
  /// Why the model cannot be exported; empty when head and graph are set.
  std::string problem;
  /// The graph at the other opsets dpc writes.
  std::vector<GraphForm> forms;
};

/// The eval-form graph of the ONNX model at `path` for a plan whose
/// training state is `state`; `tensors` are the model's tensors as
/// readONNXTensors read them (kept initializers stored outside the model
/// file are inlined from there). A model that cannot be rebuilt gives a
/// result with `problem` set, since compiling it still succeeds; false (and
/// `error`, one line) only when the file cannot be read.
bool buildInferenceModel(llvm::StringRef path,
                         llvm::ArrayRef<StateTensor> state,
                         const llvm::StringMap<std::vector<uint8_t>> &tensors,
                         llvm::StringRef producerVersion,
                         InferenceModel &result, std::string &error);

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_INFERENCEMODEL_H
