//===- OpsetRewrites.cpp - operators whose form changed between opsets ---===//
//
// The rewrites of the nodes whose operator changed form across a version
// boundary (axes and sizes between attributes and inputs, the softmaxes'
// axis), is missing at the target opset (decomposed into older
// operators), or gained attributes an older opset cannot hold.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/OpsetConverter.h"

#include <cmath>
#include <limits>

namespace dpc::frontend::opset {

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
    sliceShape(node);
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
      node.attribute(0).name() != "sparse_value")
    return convertConstantValue(node);
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

/// Shape(x)[start:end], which opsets before 15 lack: the whole shape, then
/// a Slice of it, which replace `node` (its operator cleared).
void Converter::sliceShape(onnx::NodeProto &node) {
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
}

/// A Constant's value_int(s) or value_float(s), which opsets before 12
/// lack: the tensor they stand for.
std::string Converter::convertConstantValue(onnx::NodeProto &node) {
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
  return "";
}

} // namespace dpc::frontend::opset
