//===- OnnxWriter.h - a plan's model as an ONNX file ------------*- C++ -*-===//
//
// `dpc export -o model.onnx`: the eval graph that `dpc compile` recorded in
// the plan (Plan.fbs's OnnxModel), with the trained parameters and buffers
// as its initializers. The runtime has no protobuf library: the recorded
// graph is already serialized, and the few messages added around it (the
// initializers, the opset, the model) are encoded here by protobuf's wire
// format.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_TRAIN_ONNXWRITER_H
#define DPC_RUNTIME_TRAIN_ONNXWRITER_H

#include "runtime/plan/Plan_generated.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dpc::train {

/// A tensor as it leaves dpc: its name in the model file, plain layout,
/// raw little-endian elements.
struct ExportedTensor {
  std::string name;
  plan::DType dtype;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
  /// A parameter or a buffer (batch-norm statistics, a constant mask).
  plan::PersistentKind kind = plan::PersistentKind::Parameter;
};

/// Key and value of the model's metadata_props.
using OnnxMetadata = std::vector<std::pair<std::string, std::string>>;

/// The ONNX model file of `graph` (`model`'s, or an edited copy of it) with
/// those of `tensors` the graph reads as initializers (their count in
/// `written`, when given), importing the default domain at `opset`, with
/// `metadata` added to its metadata_props. Throws RunError (naming
/// `planName`) if the file would exceed protobuf's 2 GiB.
std::vector<uint8_t> encodeOnnxModel(const plan::OnnxModel &model,
                                     std::string_view graph,
                                     const std::vector<ExportedTensor> &tensors,
                                     int64_t opset, const std::string &planName,
                                     const OnnxMetadata &metadata = {},
                                     size_t *written = nullptr);

} // namespace dpc::train

#endif // DPC_RUNTIME_TRAIN_ONNXWRITER_H
