//===- OnnxNormalize.cpp - --normalize inside an exported graph -----------===//
//
// Field numbers are onnx.proto's: GraphProto node 1, initializer 5, input
// 11; NodeProto input 1, output 2, name 3, op_type 4, attribute 5;
// AttributeProto name 1, t 5, type 20 (TENSOR = 4); TensorProto dims 1,
// data_type 2, name 8, raw_data 9; ValueInfoProto name 1, type 2;
// TypeProto tensor_type 1; TypeProto.Tensor elem_type 1, shape 2;
// TensorShapeProto dim 1; Dimension dim_value 1.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/OnnxNormalize.h"
#include "runtime/train/ProtoWire.h"
#include "runtime/train/Trainer.h"

#include <cstring>
#include <map>

namespace dpc::train {

namespace {

constexpr int64_t kOnnxFloat = 1;  // TensorProto.FLOAT
constexpr int64_t kTensorAttr = 4; // AttributeProto.TENSOR

/// A graph input that the data loader normalized: its name and channels
/// (0 where the model leaves the dim open).
struct ImageInput {
  std::string name;
  int64_t channels = 0;
};

class GraphReader {
public:
  GraphReader(std::string_view graph, const std::string &planName)
      : graph(graph), planName(planName) {}

  /// The payload of the first field `number` of `message` (empty if none).
  std::string_view getMessage(std::string_view message, int number) {
    ProtoReader reader(message);
    ProtoField field;
    while (reader.next(field))
      if (field.number == number && field.type == LengthDelimited)
        return field.payload;
    check(reader);
    return {};
  }

  /// Every name the graph gives a value, and its image inputs.
  void scan(const std::set<std::string> &state, std::set<std::string> &names,
            std::vector<ImageInput> &images) {
    std::vector<std::string_view> inputs;
    std::set<std::string> initializers;
    ProtoReader reader(graph);
    ProtoField field;
    while (reader.next(field)) {
      if (field.type != LengthDelimited)
        continue;
      if (field.number == 1) { // node: its inputs and outputs
        ProtoReader node(field.payload);
        ProtoField part;
        while (node.next(part))
          if ((part.number == 1 || part.number == 2) &&
              part.type == LengthDelimited)
            names.emplace(part.payload);
        check(node);
      } else if (field.number == 5) {
        std::string name(getMessage(field.payload, 8));
        initializers.insert(name);
        names.insert(name);
      } else if (field.number == 11) {
        inputs.push_back(field.payload);
      }
    }
    check(reader);
    for (std::string_view input : inputs) {
      std::string name(getMessage(input, 1));
      names.insert(name);
      if (initializers.count(name) || state.count(name))
        continue;
      std::string_view tensor = getMessage(getMessage(input, 2), 1);
      int64_t elemType = 0;
      std::vector<int64_t> dims; // 0 where open
      ProtoReader type(tensor);
      ProtoField part;
      while (type.next(part)) {
        if (part.number == 1 && part.type == Varint)
          elemType = int64_t(part.value);
        if (part.number != 2 || part.type != LengthDelimited)
          continue;
        ProtoReader shape(part.payload);
        ProtoField dim;
        while (shape.next(dim)) {
          if (dim.number != 1 || dim.type != LengthDelimited)
            continue;
          dims.push_back(0);
          ProtoReader value(dim.payload);
          ProtoField v;
          while (value.next(v))
            if (v.number == 1 && v.type == Varint)
              dims.back() = int64_t(v.value);
          check(value);
        }
        check(shape);
      }
      check(type);
      if (elemType == kOnnxFloat && dims.size() == 4)
        images.push_back({name, dims[1]});
    }
  }

  void check(const ProtoReader &reader) {
    if (reader.failed())
      throw RunError(planName + ": its recorded ONNX graph is malformed");
  }

private:
  std::string_view graph;
  const std::string &planName;
};

std::vector<uint8_t> encodeConstantNode(const std::string &output,
                                        const std::vector<float> &values) {
  ProtoWriter tensor;
  for (int64_t dim :
       {int64_t(1), int64_t(values.size()), int64_t(1), int64_t(1)})
    tensor.intField(1, dim);
  tensor.intField(2, kOnnxFloat);
  std::vector<uint8_t> raw(values.size() * sizeof(float));
  if (!raw.empty())
    std::memcpy(raw.data(), values.data(), raw.size());
  tensor.bytesField(9, raw);
  ProtoWriter attribute;
  attribute.bytesField(1, std::string("value"));
  attribute.bytesField(5, tensor.bytes);
  attribute.intField(20, kTensorAttr);
  ProtoWriter node;
  node.bytesField(2, output);
  node.bytesField(3, output);
  node.bytesField(4, std::string("Constant"));
  node.bytesField(5, attribute.bytes);
  return std::move(node.bytes);
}

std::vector<uint8_t> encodeBinaryNode(const std::string &op,
                                      const std::string &a,
                                      const std::string &b,
                                      const std::string &output) {
  ProtoWriter node;
  node.bytesField(1, a);
  node.bytesField(1, b);
  node.bytesField(2, output);
  node.bytesField(3, output);
  node.bytesField(4, op);
  return std::move(node.bytes);
}

/// `base` or, where the graph has that name, base_1, base_2, ...
std::string getFreshName(const std::string &base,
                         std::set<std::string> &names) {
  std::string name = base;
  for (int i = 1; names.count(name); ++i)
    name = base + "_" + std::to_string(i);
  names.insert(name);
  return name;
}

} // namespace

std::vector<uint8_t>
normalizeImageInputs(std::string_view graph, const std::set<std::string> &state,
                     const data::Normalization &normalization,
                     const std::string &planName) {
  GraphReader reader(graph, planName);
  std::set<std::string> names;
  std::vector<ImageInput> images;
  reader.scan(state, names, images);
  int64_t channels = int64_t(normalization.mean.size());
  ProtoWriter out;
  std::map<std::string, std::string> renamed;
  for (const ImageInput &image : images) {
    if (image.channels && image.channels != channels)
      throw RunError(planName + ": the model's image input '" + image.name +
                     "' has " + std::to_string(image.channels) +
                     " channels, but the checkpoint's --normalize has " +
                     std::to_string(channels));
    std::string mean = getFreshName(image.name + "_dpc_mean", names);
    std::string deviation = getFreshName(image.name + "_dpc_std", names);
    std::string centered = getFreshName(image.name + "_dpc_centered", names);
    std::string normalized =
        getFreshName(image.name + "_dpc_normalized", names);
    out.bytesField(1, encodeConstantNode(mean, normalization.mean));
    out.bytesField(1, encodeConstantNode(deviation, normalization.std));
    out.bytesField(1, encodeBinaryNode("Sub", image.name, mean, centered));
    out.bytesField(1, encodeBinaryNode("Div", centered, deviation, normalized));
    renamed[image.name] = normalized;
  }
  // The nodes, after the new ones, read the normalized values instead.
  ProtoReader fields(graph);
  ProtoField field;
  while (fields.next(field)) {
    if (field.number != 1 || field.type != LengthDelimited) {
      out.raw(field.encoding);
      continue;
    }
    ProtoWriter node;
    ProtoReader parts(field.payload);
    ProtoField part;
    while (parts.next(part)) {
      auto it = part.number == 1 && part.type == LengthDelimited
                    ? renamed.find(std::string(part.payload))
                    : renamed.end();
      if (it == renamed.end())
        node.raw(part.encoding);
      else
        node.bytesField(1, it->second);
    }
    reader.check(parts);
    out.bytesField(1, node.bytes);
  }
  reader.check(fields);
  return std::move(out.bytes);
}

} // namespace dpc::train
