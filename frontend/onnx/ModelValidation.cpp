//===- ModelValidation.cpp - dpc's own check of an ONNX model -------------===//

#include "frontend/onnx/ModelValidation.h"
#include "frontend/onnx/SchemaCheck.h"
#include "runtime/abi/CheckedMath.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

#include <optional>

using namespace llvm;

namespace dpc::frontend {
namespace {

/// Bytes per element of the types whose data dpc can read; 0 otherwise.
int64_t elementBytes(int32_t type) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
    return 4;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
    return 8;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    return 2;
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT8:
    return 1;
  default:
    return 0;
  }
}

/// Elements of `tensor`, or nullopt for a negative dim or a count past 2^48.
std::optional<int64_t> countElements(const onnx::TensorProto &tensor) {
  return checkedProduct(tensor.dims(), int64_t(1) << 48);
}

/// How many values the typed field for `tensor`'s type holds.
int64_t typedValueCount(const onnx::TensorProto &tensor) {
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return tensor.float_data_size();
  case onnx::TensorProto::DOUBLE:
    return tensor.double_data_size();
  case onnx::TensorProto::INT64:
    return tensor.int64_data_size();
  default: // int32_data holds every narrower integer and the 16-bit floats
    return tensor.int32_data_size();
  }
}

std::string checkExternalData(const onnx::TensorProto &tensor,
                              StringRef modelDir, int64_t bytes) {
  std::string location;
  std::optional<uint64_t> length;
  for (const auto &entry : tensor.external_data()) {
    uint64_t value = 0;
    bool isNumber = entry.key() == "offset" || entry.key() == "length";
    if (isNumber && StringRef(entry.value()).getAsInteger(10, value))
      return entry.key() + " '" + entry.value() + "' is not a byte count";
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "length")
      length = value;
  }
  if (location.empty())
    return "keeps its data in an external file but names none";
  if (sys::path::is_absolute(location))
    return "keeps its data at the absolute path '" + location +
           "'; ONNX wants it next to the model";
  for (auto part = sys::path::begin(location), end = sys::path::end(location);
       part != end; ++part)
    if (*part == "..")
      return "keeps its data outside the model's folder ('" + location + "')";
  SmallString<256> file(modelDir);
  sys::path::append(file, location);
  if (!sys::fs::exists(file))
    return "keeps its data in '" + std::string(file) +
           "', which does not exist";
  if (length && *length != static_cast<uint64_t>(bytes))
    return "has " + std::to_string(*length) + " bytes of external data; its " +
           "dims and type need " + std::to_string(bytes);
  // Whether the file holds the bytes is checked when they are read: an
  // import that needs only shapes (--emit=nn) does not read them.
  return "";
}

std::string checkInitializer(const onnx::TensorProto &tensor,
                             StringRef modelDir) {
  std::optional<int64_t> count = countElements(tensor);
  if (!count)
    return "has invalid dims";
  int64_t size = elementBytes(tensor.data_type());
  if (size == 0)
    return ""; // an element type dpc never reads as data: the importer says
  int64_t bytes = *count * size;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return checkExternalData(tensor, modelDir, bytes);
  if (tensor.has_raw_data()) {
    if (static_cast<int64_t>(tensor.raw_data().size()) != bytes)
      return "holds " + std::to_string(tensor.raw_data().size()) +
             " bytes of data; its dims and type need " + std::to_string(bytes);
    return "";
  }
  int64_t values = typedValueCount(tensor);
  if (values != *count)
    return "holds " + std::to_string(values) + " values; its dims need " +
           std::to_string(*count);
  return "";
}

} // namespace

std::string validateModel(const onnx::ModelProto &model, StringRef modelDir) {
  int64_t ir = model.ir_version();
  if (ir < kMinIrVersion || ir > kMaxIrVersion)
    return "IR version " + std::to_string(ir) + " is not supported (" +
           std::to_string(kMinIrVersion) + " to " +
           std::to_string(kMaxIrVersion) + ")";
  int64_t opset = 0; // none: the importer names what is missing
  for (const auto &import : model.opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx")
      opset = import.version();
  const onnx::GraphProto &graph = model.graph();
  StringSet<> defined;
  auto define = [&](const std::string &name) {
    return name.empty() || defined.insert(name).second;
  };
  StringSet<> inputs, initializers;
  for (const auto &input : graph.input()) {
    if (!inputs.insert(input.name()).second)
      return "graph input '" + input.name() + "' is listed twice";
    define(input.name()); // older exports list initializers here too
  }
  for (const auto &init : graph.initializer()) {
    if (!initializers.insert(init.name()).second)
      return "initializer '" + init.name() + "' is defined twice";
    define(init.name());
    if (std::string problem = checkInitializer(init, modelDir);
        !problem.empty())
      return "initializer '" + init.name() + "' " + problem;
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    std::string label =
        "node '" +
        (node.name().empty() ? "#" + std::to_string(i) : node.name()) + "' (" +
        node.op_type() + ")";
    if (node.op_type().empty())
      return label + " has no operator";
    if (std::string problem = checkNodeSchema(node, opset); !problem.empty())
      return label + ": " + problem;
    for (const std::string &input : node.input())
      if (!input.empty() && !defined.contains(input))
        return label + " reads '" + input +
               "' before any input, initializer or node defines it";
    for (const std::string &output : node.output())
      if (!define(output))
        return label + " defines '" + output + "' a second time";
  }
  if (graph.output_size() == 0)
    return "the graph has no output";
  for (const auto &output : graph.output())
    if (!defined.contains(output.name()))
      return "graph output '" + output.name() + "' is never defined";
  return "";
}

} // namespace dpc::frontend
