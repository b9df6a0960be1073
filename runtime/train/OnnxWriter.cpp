//===- OnnxWriter.cpp - a plan's model as an ONNX file --------------------===//
//
// Field numbers are onnx.proto's (ModelProto: ir_version 1, graph 7,
// opset_import 8, metadata_props 14; GraphProto: node 1, initializer 5,
// output 12; NodeProto: input 1, attribute 5; AttributeProto: g 6, graphs
// 11; ValueInfoProto: name 1; TensorProto: dims 1, data_type 2, name 8,
// raw_data 9; OperatorSetIdProto: domain 1, version 2). A message's fields may
// come in any order, so the recorded bytes are written as they are and the new
// fields after them.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/OnnxWriter.h"
#include "runtime/train/ProtoWire.h"
#include "runtime/train/Trainer.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>

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
  case plan::DType::TF32: // a compute type: no tensor holds it
    return 0;
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

/// Adds to `names` every value `graph` reads: its nodes' inputs (those of
/// subgraphs in attributes too) and its outputs. False on malformed bytes.
bool collectReadNames(std::string_view graph, std::set<std::string> &names) {
  ProtoReader reader(graph);
  ProtoField field;
  while (reader.next(field)) {
    if (field.number == 12 && field.type == LengthDelimited) {
      ProtoReader output(field.payload);
      ProtoField entry;
      while (output.next(entry))
        if (entry.number == 1 && entry.type == LengthDelimited)
          names.insert(std::string(entry.payload));
      if (output.failed())
        return false;
      continue;
    }
    if (field.number != 1 || field.type != LengthDelimited)
      continue;
    ProtoReader node(field.payload);
    ProtoField part;
    while (node.next(part)) {
      if (part.number == 1 && part.type == LengthDelimited) {
        names.insert(std::string(part.payload));
      } else if (part.number == 5 && part.type == LengthDelimited) {
        ProtoReader attribute(part.payload);
        ProtoField entry;
        while (attribute.next(entry))
          if ((entry.number == 6 || entry.number == 11) &&
              entry.type == LengthDelimited &&
              !collectReadNames(entry.payload, names))
            return false;
        if (attribute.failed())
          return false;
      }
    }
    if (node.failed())
      return false;
  }
  return !reader.failed();
}

} // namespace

std::vector<uint8_t> encodeOnnxModel(const plan::OnnxModel &model,
                                     std::string_view graphBytes,
                                     const std::vector<ExportedTensor> &tensors,
                                     int64_t opset, const std::string &planName,
                                     const OnnxMetadata &metadata,
                                     size_t *written) {
  // Only what the graph reads: the plan also holds the constants dpc
  // folded at import (an attention mask), which the graph computes itself;
  // onnxruntime would warn about them and drop them.
  std::set<std::string> read;
  bool known = collectReadNames(graphBytes, read);
  ProtoWriter graph;
  graph.raw(graphBytes);
  size_t count = 0;
  for (const ExportedTensor &tensor : tensors)
    if (!known || read.count(tensor.name)) {
      graph.bytesField(5, encodeInitializer(tensor));
      ++count;
    }
  if (written)
    *written = count;

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
