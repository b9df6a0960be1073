//===- OpsetConversion.cpp - an eval graph at another opset ---------------===//
//
// A node is converted by the version boundaries its operator crosses
// between the two opsets, in the order of travel. Operators whose new
// versions only add types or optional attributes (most of them) are
// listed as such (OpsetVersions.cpp); anything else with another version
// at the target is a problem rather than a guess. This file walks the
// graph and edits it; OpsetRewrites.cpp rewrites the nodes.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/OpsetConversion.h"
#include "frontend/onnx/OpsetConverter.h"

#include <cstring>

using namespace dpc::frontend;

namespace dpc::frontend::opset {

bool isDefaultDomain(const onnx::NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

const onnx::AttributeProto *findAttribute(const onnx::NodeProto &node,
                                          const std::string &name) {
  for (const auto &attribute : node.attribute())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

int64_t getIntAttribute(const onnx::NodeProto &node, const std::string &name,
                        int64_t otherwise) {
  const onnx::AttributeProto *attribute = findAttribute(node, name);
  return attribute ? attribute->i() : otherwise;
}

bool eraseAttribute(onnx::NodeProto &node, const std::string &name) {
  auto *attributes = node.mutable_attribute();
  for (int i = 0; i < attributes->size(); ++i)
    if (attributes->Get(i).name() == name) {
      attributes->DeleteSubrange(i, 1);
      return true;
    }
  return false;
}

void setIntsAttribute(onnx::NodeProto &node, const std::string &name,
                      const std::vector<int64_t> &values) {
  eraseAttribute(node, name);
  auto *attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values)
    attribute->add_ints(value);
}

void setIntAttribute(onnx::NodeProto &node, const std::string &name,
                     int64_t value) {
  eraseAttribute(node, name);
  auto *attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

std::optional<std::vector<int64_t>> getInts(const onnx::TensorProto &tensor) {
  if (tensor.data_type() != onnx::TensorProto::INT64)
    return std::nullopt;
  if (!tensor.has_raw_data())
    return std::vector<int64_t>(tensor.int64_data().begin(),
                                tensor.int64_data().end());
  const std::string &raw = tensor.raw_data();
  std::vector<int64_t> values(raw.size() / sizeof(int64_t));
  if (!values.empty())
    std::memcpy(values.data(), raw.data(), values.size() * sizeof(int64_t));
  return values;
}

void Converter::collectNames() {
  auto addValueInfo = [&](const onnx::ValueInfoProto &value) {
    names.insert(value.name());
    if (!value.type().has_tensor_type())
      return;
    const auto &tensor = value.type().tensor_type();
    elementTypes[value.name()] = tensor.elem_type();
    if (!tensor.has_shape())
      return;
    std::vector<int64_t> &dims = shapes[value.name()];
    for (const auto &dim : tensor.shape().dim())
      dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  };
  for (const auto &value : graph.input())
    addValueInfo(value);
  for (const auto &value : graph.output())
    addValueInfo(value);
  for (const auto &value : graph.value_info())
    addValueInfo(value);
  for (const auto &init : graph.initializer()) {
    names.insert(init.name());
    constants[init.name()] = init;
    elementTypes[init.name()] = init.data_type();
    shapes[init.name()] = {init.dims().begin(), init.dims().end()};
  }
  for (const auto &node : graph.node()) {
    names.insert(node.input().begin(), node.input().end());
    names.insert(node.output().begin(), node.output().end());
    for (const std::string &output : node.output())
      producers[output] = &node;
    if (node.op_type() == "Constant" && node.output_size() == 1)
      if (const auto *value = findAttribute(node, "value"))
        constants[node.output(0)] = value->t();
  }
}

std::string Converter::getFreshName(const std::string &base) {
  std::string name = base;
  for (int i = 1; names.count(name); ++i)
    name = base + "_" + std::to_string(i);
  names.insert(name);
  return name;
}

std::string Converter::addConstant(const std::string &base,
                                   onnx::TensorProto tensor) {
  std::string name = getFreshName(base);
  onnx::NodeProto node;
  node.set_op_type("Constant");
  node.set_name(name);
  node.add_output(name);
  auto *value = node.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = std::move(tensor);
  constants[name] = value->t();
  nodes.push_back(std::move(node));
  return name;
}

std::string Converter::addInts(const std::string &base,
                               const std::vector<int64_t> &values) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(int64_t(values.size()));
  for (int64_t value : values)
    tensor.add_int64_data(value);
  return addConstant(base, std::move(tensor));
}

std::string Converter::addFloat(const std::string &base, float value) {
  onnx::TensorProto tensor;
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  tensor.add_float_data(value);
  return addConstant(base, std::move(tensor));
}

std::string Converter::addNode(const std::string &op,
                               const std::vector<std::string> &inputs,
                               const std::string &output) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(output);
  for (const std::string &input : inputs)
    node.add_input(input);
  node.add_output(output);
  nodes.push_back(std::move(node));
  return output;
}

/// The values of `name` where the graph computes them from constants
/// alone by ops that keep the values in order (what exporters write for
/// axes: a Reshape, Unsqueeze or Concat of Constants).
std::optional<std::vector<int64_t>>
Converter::getConstantInts(const std::string &name, int depth) {
  if (auto it = constants.find(name); it != constants.end())
    return getInts(it->second);
  auto producer = producers.find(name);
  if (producer == producers.end() || depth > 8)
    return std::nullopt;
  const onnx::NodeProto &node = *producer->second;
  const std::string &op = node.op_type();
  if (!isDefaultDomain(node) || node.input_size() == 0)
    return std::nullopt;
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "Identity" || op == "Flatten")
    return getConstantInts(node.input(0), depth + 1);
  if (op == "Constant" && node.attribute_size() == 1) {
    const onnx::AttributeProto &value = node.attribute(0);
    if (value.name() == "value_int")
      return std::vector<int64_t>{value.i()};
    if (value.name() == "value_ints")
      return std::vector<int64_t>(value.ints().begin(), value.ints().end());
  }
  if (op == "Concat" && getIntAttribute(node, "axis", 0) == 0) {
    std::vector<int64_t> values;
    for (const std::string &input : node.input()) {
      auto part = getConstantInts(input, depth + 1);
      if (!part)
        return std::nullopt;
      values.insert(values.end(), part->begin(), part->end());
    }
    return values;
  }
  return std::nullopt;
}

std::string Converter::convert(onnx::NodeProto node) {
  const std::string &op = node.op_type();
  if (!isDefaultDomain(node)) {
    nodes.push_back(std::move(node));
    return "";
  }
  int64_t before = getOperatorVersion(op, from);
  int64_t after = getOperatorVersion(op, to);
  if (before == 0)
    return problem(node, "is not an operator of opset " + std::to_string(from));
  if (after == 0)
    return convertMissing(node);
  if (before != after && !getConvertibleOperators().count(op))
    return problem(node, "is version " + std::to_string(before) + " at opset " +
                             std::to_string(from) + " and " +
                             std::to_string(after) + " at opset " +
                             std::to_string(to) +
                             ", which dpc does not convert");
  std::string failure;
  if (op == "ReduceSum")
    failure = moveAxes(node, 13, true);
  else if (op.rfind("Reduce", 0) == 0)
    failure = moveAxes(node, 18, true);
  else if (op == "Squeeze" || op == "Unsqueeze")
    failure = moveAxes(node, 13, false);
  else if (op == "Split")
    failure = convertSplit(node);
  else if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax")
    failure = convertSoftmax(node);
  else if (op == "Dropout" && crosses(12)) {
    // Inference form: the identity, which every opset writes alike.
    node.set_op_type("Identity");
    node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
    node.mutable_output()->DeleteSubrange(1, node.output_size() - 1);
    node.clear_attribute();
  }
  if (failure.empty())
    failure = checkDowngrade(node);
  if (!failure.empty())
    return failure;
  if (!node.op_type().empty()) // else replaced by the nodes added
    nodes.push_back(std::move(node));
  return "";
}

std::string Converter::run() {
  collectNames();
  for (const onnx::NodeProto &node : graph.node())
    if (std::string failure = convert(node); !failure.empty())
      return failure;
  graph.clear_node();
  for (onnx::NodeProto &node : nodes)
    *graph.add_node() = std::move(node);
  return "";
}

} // namespace dpc::frontend::opset

std::string dpc::frontend::convertOpset(onnx::GraphProto &graph, int64_t from,
                                        int64_t to) {
  return opset::Converter(graph, from, to).run();
}
