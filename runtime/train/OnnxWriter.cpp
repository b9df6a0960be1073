//===- OnnxWriter.cpp - a plan's model as an ONNX file --------------------===//
//
// Field numbers are onnx.proto's (ModelProto: ir_version 1, graph 7,
// opset_import 8, metadata_props 14; GraphProto: initializer 5; TensorProto:
// dims 1, data_type 2, name 8, raw_data 9; OperatorSetIdProto: domain 1,
// version 2). A message's fields may come in any order, so the recorded
// bytes are written as they are and the new fields after them.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/OnnxWriter.h"
#include "runtime/train/ProtoWire.h"
#include "runtime/train/Trainer.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace dpc::train {

namespace {

/// onnx.TensorProto.DataType.
int64_t getOnnxDataType(plan::DType dtype) {
  switch (dtype) {
  case plan::DType::F32:
    return 1;
  case plan::DType::U8:
    return 2;
  case plan::DType::I32:
    return 6;
  case plan::DType::I64:
    return 7;
  case plan::DType::F16:
    return 10;
  case plan::DType::F64:
    return 11;
  case plan::DType::BF16:
    return 16;
  }
  return 0;
}

/// The lowest IR version of the ONNX release that introduced `opset`.
int64_t getMinIrVersion(int64_t opset) {
  static const int64_t irVersions[] = {3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 5,
                                       6, 7, 7, 7, 8, 8, 8, 8, 9, 9, 10};
  int64_t last = int64_t(std::size(irVersions)) - 1;
  return irVersions[std::clamp<int64_t>(opset, 0, last)];
}

std::vector<uint8_t> encodeInitializer(const ExportedTensor &tensor) {
  ProtoWriter writer;
  for (int64_t dim : tensor.dims)
    writer.intField(1, dim);
  writer.intField(2, getOnnxDataType(tensor.dtype));
  writer.bytesField(8, tensor.name);
  writer.bytesField(9, tensor.bytes);
  return std::move(writer.bytes);
}

} // namespace

std::vector<uint8_t> encodeOnnxModel(const plan::OnnxModel &model,
                                     std::string_view graphBytes,
                                     const std::vector<ExportedTensor> &tensors,
                                     int64_t opset, const std::string &planName,
                                     const OnnxMetadata &metadata) {
  ProtoWriter graph;
  graph.raw(graphBytes);
  for (const ExportedTensor &tensor : tensors)
    graph.bytesField(5, encodeInitializer(tensor));

  ProtoWriter opsetImport;
  opsetImport.bytesField(1, std::string());
  opsetImport.intField(2, opset);

  ProtoWriter file;
  // A newer opset than the model's may need a newer IR version.
  file.intField(1, std::max(model.ir_version(), getMinIrVersion(opset)));
  if (model.head())
    file.raw(*model.head());
  file.bytesField(8, opsetImport.bytes);
  file.bytesField(7, graph.bytes);
  for (const auto &[key, value] : metadata) {
    ProtoWriter entry; // StringStringEntryProto: key 1, value 2
    entry.bytesField(1, key);
    entry.bytesField(2, value);
    file.bytesField(14, entry.bytes);
  }
  if (file.bytes.size() > size_t(std::numeric_limits<int32_t>::max()))
    throw RunError(planName + ": the model's ONNX file would have " +
                   std::to_string(file.bytes.size()) +
                   " bytes, more than protobuf's 2 GiB");
  return std::move(file.bytes);
}

} // namespace dpc::train
