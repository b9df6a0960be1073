//===- OpsetConversion.cpp - an eval graph at another opset ---------------===//
//
// A node is converted by the version boundaries its operator crosses
// between the two opsets, in the order of travel. Operators whose new
// versions only add types or optional attributes (most of them) are
// listed as such; anything else with another version at the target is a
// problem rather than a guess.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/OpsetConversion.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <vector>

using namespace dpc::frontend;

namespace {

const std::map<std::string, std::vector<int64_t>> &getVersionTable() {
  static const std::map<std::string, std::vector<int64_t>> table = {
#define OP(name, ...) {#name, {__VA_ARGS__}},
#include "frontend/onnx/OnnxOpVersions.inc"
#undef OP
  };
  return table;
}

bool isDefaultDomain(const onnx::NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

/// Operators whose versions differ only in types or in optional inputs and
/// attributes that keep the old meaning when absent, or whose form changes
/// are converted below.
const std::set<std::string> &getConvertibleOperators() {
  static const std::set<std::string> ops = {"Abs",
                                            "Add",
                                            "And",
                                            "ArgMax",
                                            "ArgMin",
                                            "AveragePool",
                                            "BatchNormalization",
                                            "Cast",
                                            "CastLike",
                                            "Ceil",
                                            "Celu",
                                            "Clip",
                                            "Concat",
                                            "Constant",
                                            "ConstantOfShape",
                                            "Conv",
                                            "CumSum",
                                            "Div",
                                            "Dropout",
                                            "Einsum",
                                            "Elu",
                                            "Equal",
                                            "Erf",
                                            "Exp",
                                            "Expand",
                                            "Flatten",
                                            "Floor",
                                            "GRU",
                                            "Gather",
                                            "GatherElements",
                                            "Gelu",
                                            "Gemm",
                                            "GlobalAveragePool",
                                            "Greater",
                                            "GreaterOrEqual",
                                            "HardSigmoid",
                                            "HardSwish",
                                            "Hardmax",
                                            "Identity",
                                            "IsInf",
                                            "IsNaN",
                                            "LSTM",
                                            "LayerNormalization",
                                            "LeakyRelu",
                                            "Less",
                                            "LessOrEqual",
                                            "Log",
                                            "LogSoftmax",
                                            "MatMul",
                                            "Max",
                                            "MaxPool",
                                            "Mean",
                                            "Min",
                                            "Mod",
                                            "Mul",
                                            "Neg",
                                            "Not",
                                            "Or",
                                            "PRelu",
                                            "Pad",
                                            "Pow",
                                            "RNN",
                                            "Range",
                                            "Reciprocal",
                                            "ReduceL1",
                                            "ReduceL2",
                                            "ReduceLogSum",
                                            "ReduceLogSumExp",
                                            "ReduceMax",
                                            "ReduceMean",
                                            "ReduceMin",
                                            "ReduceProd",
                                            "ReduceSum",
                                            "ReduceSumSquare",
                                            "Relu",
                                            "Reshape",
                                            "ScatterElements",
                                            "Selu",
                                            "SequenceAt",
                                            "Shape",
                                            "Sigmoid",
                                            "Sign",
                                            "Size",
                                            "Slice",
                                            "Softmax",
                                            "Softplus",
                                            "Softsign",
                                            "Split",
                                            "SplitToSequence",
                                            "Sqrt",
                                            "Squeeze",
                                            "Sub",
                                            "Sum",
                                            "Tanh",
                                            "Tile",
                                            "Transpose",
                                            "Trilu",
                                            "Unsqueeze",
                                            "Where",
                                            "Xor"};
  return ops;
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

/// Removes `name`; returns whether the node had it.
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

/// The values of an INT64 tensor, or nothing for another type.
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

class Converter {
public:
  Converter(onnx::GraphProto &graph, int64_t from, int64_t to)
      : graph(graph), from(from), to(to) {}

  std::string run();

private:
  void collectNames();
  std::string convert(onnx::NodeProto node);
  std::string convertMissing(onnx::NodeProto &node);
  std::string moveAxes(onnx::NodeProto &node, int64_t boundary,
                       bool noopAttribute);
  std::string convertSplit(onnx::NodeProto &node);
  std::string convertSoftmax(onnx::NodeProto &node);
  std::string checkDowngrade(onnx::NodeProto &node);

  bool crosses(int64_t boundary) const {
    return std::min(from, to) < boundary && boundary <= std::max(from, to);
  }
  bool upward() const { return to > from; }
  std::string problem(const onnx::NodeProto &node, const std::string &what) {
    std::string label = node.name().empty() && node.output_size()
                            ? node.output(0)
                            : node.name();
    return node.op_type() + " node '" + label + "' " + what;
  }
  std::string getFreshName(const std::string &base);
  std::string addConstant(const std::string &base, onnx::TensorProto tensor);
  std::string addInts(const std::string &base,
                      const std::vector<int64_t> &values);
  std::string addFloat(const std::string &base, float value);
  std::string addNode(const std::string &op,
                      const std::vector<std::string> &inputs,
                      const std::string &output);
  std::optional<std::vector<int64_t>> getConstantInts(const std::string &name,
                                                      int depth = 0);

  onnx::GraphProto &graph;
  int64_t from, to;
  std::set<std::string> names;
  /// Dims of the values the file gives a shape (-1: unknown), by name.
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, int32_t> elementTypes;
  std::map<std::string, onnx::TensorProto> constants;
  /// The source graph's node computing each value.
  std::map<std::string, const onnx::NodeProto *> producers;
  std::vector<onnx::NodeProto> nodes;
};

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

/// Axes between an attribute (before `boundary`) and input 1 (from it).
std::string Converter::moveAxes(onnx::NodeProto &node, int64_t boundary,
                                bool noopAttribute) {
  if (!crosses(boundary))
    return "";
  if (upward()) {
    const onnx::AttributeProto *axes = findAttribute(node, "axes");
    if (!axes)
      return ""; // every axis, as before
    std::vector<int64_t> values(axes->ints().begin(), axes->ints().end());
    eraseAttribute(node, "axes");
    if (node.input_size() != 1)
      return problem(node, "has " + std::to_string(node.input_size()) +
                               " inputs, not 1");
    node.add_input(addInts(node.output(0) + "_axes", values));
    return "";
  }
  bool noop = noopAttribute && getIntAttribute(node, "noop_with_empty_axes", 0);
  eraseAttribute(node, "noop_with_empty_axes");
  if (node.input_size() < 2 || node.input(1).empty())
    return noop ? problem(node, "reduces no axis (noop_with_empty_axes), "
                                "which opsets before " +
                                    std::to_string(boundary) + " cannot say")
                : "";
  std::optional<std::vector<int64_t>> axes = getConstantInts(node.input(1));
  if (!axes)
    return problem(node, "takes its axes from a computed value, which "
                         "opsets before " +
                             std::to_string(boundary) +
                             " need as an attribute");
  node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
  if (axes->empty() && noop)
    return problem(node, "reduces no axis (noop_with_empty_axes), which "
                         "opsets before " +
                             std::to_string(boundary) + " cannot say");
  if (!axes->empty())
    setIntsAttribute(node, "axes", *axes);
  return "";
}

/// Split's sizes: an attribute before 13, input 1 from 13; from 18 one of
/// them or num_outputs (uneven: the last part smaller), before 18 none
/// meaning equal parts.
std::string Converter::convertSplit(onnx::NodeProto &node) {
  auto sizesToInput = [&](const std::vector<int64_t> &sizes) {
    if (node.input_size() < 2)
      node.add_input(addInts(node.output(0) + "_split", sizes));
    else
      node.set_input(1, addInts(node.output(0) + "_split", sizes));
  };
  auto at13 = [&]() -> std::string {
    if (!crosses(13))
      return "";
    if (upward()) {
      const onnx::AttributeProto *split = findAttribute(node, "split");
      if (!split)
        return "";
      std::vector<int64_t> sizes(split->ints().begin(), split->ints().end());
      eraseAttribute(node, "split");
      sizesToInput(sizes);
      return "";
    }
    if (node.input_size() < 2 || node.input(1).empty())
      return "";
    std::optional<std::vector<int64_t>> sizes = getConstantInts(node.input(1));
    if (!sizes)
      return problem(node, "takes its sizes from a computed value, which "
                           "opsets before 13 need as an attribute");
    node.mutable_input()->DeleteSubrange(1, node.input_size() - 1);
    setIntsAttribute(node, "split", *sizes);
    return "";
  };
  auto at18 = [&]() -> std::string {
    if (!crosses(18))
      return "";
    bool sized = node.input_size() > 1 && !node.input(1).empty();
    if (upward()) {
      if (!sized && !findAttribute(node, "split"))
        setIntAttribute(node, "num_outputs", node.output_size());
      return "";
    }
    if (!eraseAttribute(node, "num_outputs"))
      return "";
    // Equal parts stay implicit; uneven ones need their sizes.
    int64_t parts = node.output_size();
    auto shape = shapes.find(node.input(0));
    int64_t axis = getIntAttribute(node, "axis", 0);
    if (shape == shapes.end() || shape->second.empty())
      return problem(node, "splits into num_outputs parts of a value whose "
                           "shape the model file does not give");
    int64_t rank = int64_t(shape->second.size());
    if (axis < 0)
      axis += rank;
    int64_t dim = axis >= 0 && axis < rank ? shape->second[axis] : -1;
    if (dim < 0)
      return problem(node, "splits into num_outputs parts of a dim whose "
                           "size the model file does not give");
    if (dim % parts == 0)
      return "";
    int64_t part = (dim + parts - 1) / parts;
    std::vector<int64_t> sizes(parts, part);
    sizes.back() = dim - part * (parts - 1);
    if (to >= 13)
      sizesToInput(sizes);
    else
      setIntsAttribute(node, "split", sizes);
    return "";
  };
  if (upward()) {
    if (std::string failure = at13(); !failure.empty())
      return failure;
    return at18();
  }
  if (std::string failure = at18(); !failure.empty())
    return failure;
  return at13();
}

/// Before 13 the softmaxes flatten the dims from `axis` (default 1) into
/// one; from 13 they run along `axis` alone (default -1). The two agree
/// where the axis is the last dim.
std::string Converter::convertSoftmax(onnx::NodeProto &node) {
  if (!crosses(13))
    return "";
  int64_t axis = getIntAttribute(node, "axis", from < 13 ? 1 : -1);
  auto shape = shapes.find(node.input(0));
  int64_t rank = shape == shapes.end() ? -1 : int64_t(shape->second.size());
  if (axis != -1 && !(rank > 0 && (axis == rank - 1 || axis == -1)))
    return problem(node, rank < 0
                             ? "has an axis that opsets before 13 and from 13 "
                               "read differently unless it is the last dim, "
                               "and the model file gives no rank"
                             : "runs along dim " + std::to_string(axis) +
                                   " of " + std::to_string(rank) +
                                   ", which opsets before 13 read as the "
                                   "dims from there on");
  setIntAttribute(node, "axis", -1);
  return "";
}

/// Operators missing at the target opset, written with older ones.
std::string Converter::convertMissing(onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  const std::string x = node.input_size() ? node.input(0) : "";
  const std::string y = node.output_size() ? node.output(0) : "";
  auto name = [&](const std::string &suffix) {
    return getFreshName(y + "_" + suffix);
  };
  if (op == "Gelu") {
    const onnx::AttributeProto *approximate =
        findAttribute(node, "approximate");
    std::string mode = approximate ? approximate->s() : "none";
    std::string one = addFloat(y + "_one", 1.0f);
    std::string half = addFloat(y + "_half", 0.5f);
    std::string inner;
    if (mode == "none") {
      // x * 0.5 * (1 + erf(x / sqrt(2)))
      std::string root = addFloat(y + "_sqrt2", float(std::sqrt(2.0)));
      inner = addNode("Erf", {addNode("Div", {x, root}, name("scaled"))},
                      name("erf"));
    } else if (mode == "tanh") {
      // x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
      std::string cubic = addFloat(y + "_cubic", 0.044715f);
      std::string scale = addFloat(
          y + "_scale", float(std::sqrt(2.0 / 3.14159265358979323846)));
      std::string square = addNode("Mul", {x, x}, name("square"));
      std::string cube = addNode("Mul", {square, x}, name("cube"));
      std::string sum =
          addNode("Add", {x, addNode("Mul", {cube, cubic}, name("cubic_term"))},
                  name("sum"));
      inner = addNode("Tanh", {addNode("Mul", {sum, scale}, name("scaled"))},
                      name("tanh"));
    } else {
      return problem(node, "has approximate='" + mode + "'");
    }
    std::string gate = addNode("Add", {inner, one}, name("gate"));
    std::string product = addNode("Mul", {x, gate}, name("product"));
    addNode("Mul", {product, half}, y);
    return "";
  }
  if (op == "HardSwish") {
    // x * HardSigmoid(x; alpha 1/6, beta 1/2)
    onnx::NodeProto gate;
    gate.set_op_type("HardSigmoid");
    gate.add_input(x);
    std::string gateName = name("gate");
    gate.set_name(gateName);
    gate.add_output(gateName);
    auto *alpha = gate.add_attribute();
    alpha->set_name("alpha");
    alpha->set_type(onnx::AttributeProto::FLOAT);
    alpha->set_f(1.0f / 6.0f);
    nodes.push_back(std::move(gate));
    addNode("Mul", {x, gateName}, y);
    return "";
  }
  if (op == "CastLike" && node.input_size() == 2) {
    auto type = elementTypes.find(node.input(1));
    if (type == elementTypes.end() || type->second == 0)
      return problem(node, "takes the type of a value whose type the model "
                           "file does not give");
    onnx::NodeProto cast;
    cast.set_op_type("Cast");
    cast.set_name(node.name());
    cast.add_input(x);
    cast.add_output(y);
    auto *attribute = cast.add_attribute();
    attribute->set_name("to");
    attribute->set_type(onnx::AttributeProto::INT);
    attribute->set_i(type->second);
    nodes.push_back(std::move(cast));
    return "";
  }
  const std::vector<int64_t> &versions = getVersionTable().at(op);
  return problem(node, "has no definition at opset " + std::to_string(to) +
                           (versions.front() > to
                                ? " (its first is at " +
                                      std::to_string(versions.front()) + ")"
                                : ""));
}

/// Attributes and inputs that newer versions added, which older opsets
/// cannot hold unless they are at their defaults.
std::string Converter::checkDowngrade(onnx::NodeProto &node) {
  if (upward())
    return "";
  const std::string &op = node.op_type();
  auto refuseUnless = [&](int64_t boundary, const std::string &attribute,
                          int64_t otherwise) -> std::string {
    if (!crosses(boundary))
      return "";
    if (getIntAttribute(node, attribute, otherwise) != otherwise)
      return problem(node, "sets " + attribute + ", which opsets before " +
                               std::to_string(boundary) + " lack");
    eraseAttribute(node, attribute);
    return "";
  };
  if (op == "AveragePool" && crosses(19)) {
    if (const auto *dilations = findAttribute(node, "dilations"))
      for (int64_t dilation : dilations->ints())
        if (dilation != 1)
          return problem(node, "sets dilations, which opsets before 19 lack");
    eraseAttribute(node, "dilations");
  }
  if (op == "Cast" && crosses(19))
    eraseAttribute(node, "saturate"); // float8 only, which 19 introduced
  if (op == "Shape" && crosses(15) &&
      (findAttribute(node, "start") || findAttribute(node, "end"))) {
    // Shape(x)[start:end]: the whole shape, then a Slice of it.
    std::string y = node.output(0);
    std::string start =
        addInts(y + "_start", {getIntAttribute(node, "start", 0)});
    std::string end = addInts(
        y + "_end",
        {getIntAttribute(node, "end", std::numeric_limits<int64_t>::max())});
    std::string whole = getFreshName(y + "_whole");
    node.clear_attribute();
    node.set_output(0, whole);
    nodes.push_back(node);
    addNode("Slice", {whole, start, end}, y);
    node.set_op_type("");
    return "";
  }
  if (op == "Reshape" && crosses(14) && node.input_size() == 2) {
    // allowzero only tells what a 0 in the shape means.
    std::optional<std::vector<int64_t>> shape = getConstantInts(node.input(1));
    if (shape && std::find(shape->begin(), shape->end(), 0) == shape->end())
      eraseAttribute(node, "allowzero");
    return refuseUnless(14, "allowzero", 0);
  }
  if (op == "LSTM" || op == "GRU" || op == "RNN")
    return refuseUnless(14, "layout", 0);
  if (op == "ArgMax" || op == "ArgMin")
    return refuseUnless(12, "select_last_index", 0);
  if (op == "Pad") {
    if (crosses(18) && node.input_size() > 3 && !node.input(3).empty())
      return problem(node, "takes axes, which opsets before 18 lack");
    const onnx::AttributeProto *mode = findAttribute(node, "mode");
    if (crosses(19) && mode && mode->s() == "wrap")
      return problem(node, "pads in wrap mode, which opsets before 19 lack");
  }
  if (op == "Constant" && crosses(12) && node.attribute_size() == 1 &&
      node.attribute(0).name() != "value" &&
      node.attribute(0).name() != "sparse_value") {
    // value_int(s) and value_float(s): the tensor they stand for.
    const onnx::AttributeProto &value = node.attribute(0);
    onnx::TensorProto tensor;
    const std::string &name = value.name();
    if (name == "value_int" || name == "value_ints") {
      tensor.set_data_type(onnx::TensorProto::INT64);
      if (name == "value_int")
        tensor.add_int64_data(value.i());
      else
        tensor.mutable_int64_data()->CopyFrom(value.ints());
    } else if (name == "value_float" || name == "value_floats") {
      tensor.set_data_type(onnx::TensorProto::FLOAT);
      if (name == "value_float")
        tensor.add_float_data(value.f());
      else
        tensor.mutable_float_data()->CopyFrom(value.floats());
    } else {
      return problem(node, "sets " + name + ", which opsets before 12 lack");
    }
    if (name == "value_ints")
      tensor.add_dims(value.ints_size());
    if (name == "value_floats")
      tensor.add_dims(value.floats_size());
    node.clear_attribute();
    auto *attribute = node.add_attribute();
    attribute->set_name("value");
    attribute->set_type(onnx::AttributeProto::TENSOR);
    *attribute->mutable_t() = std::move(tensor);
  }
  if (op == "ScatterElements") {
    const onnx::AttributeProto *reduction = findAttribute(node, "reduction");
    std::string kind = reduction ? reduction->s() : "none";
    if ((crosses(16) && kind != "none") ||
        (crosses(18) && (kind == "max" || kind == "min")))
      return problem(node, "reduces by " + kind + ", which opsets before " +
                               std::string(crosses(16) ? "16" : "18") +
                               " lack");
    if (crosses(16))
      eraseAttribute(node, "reduction");
  }
  return "";
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

} // namespace

int64_t dpc::frontend::getOperatorVersion(const std::string &op,
                                          int64_t opset) {
  const auto &table = getVersionTable();
  auto it = table.find(op);
  if (it == table.end())
    return 0;
  int64_t version = 0;
  for (int64_t since : it->second)
    if (std::abs(since) <= opset)
      version = since;
  return std::max<int64_t>(version, 0);
}

bool dpc::frontend::keepsOperatorVersions(const onnx::GraphProto &graph,
                                          int64_t from, int64_t to) {
  for (const auto &node : graph.node()) {
    if (!isDefaultDomain(node))
      continue;
    int64_t version = getOperatorVersion(node.op_type(), from);
    if (version == 0 || getOperatorVersion(node.op_type(), to) != version)
      return false;
  }
  return true;
}

std::string dpc::frontend::convertOpset(onnx::GraphProto &graph, int64_t from,
                                        int64_t to) {
  return Converter(graph, from, to).run();
}
