//===- Constant.cpp - constants and copies --------------------------------===//
//
// Constant nodes (materialized only where a node reads them as a tensor),
// Identity (a copy of an initializer is a parameter of its own), and If
// on a condition known at import.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

void importConstant(Importer &im, const onnx::NodeProto &node) {
  if (node.attribute_size() != 1)
    fail("a Constant node must have exactly one attribute");
  const onnx::AttributeProto &a = node.attribute(0);
  onnx::TensorProto *tensor = im.ownTensor();
  tensor->set_name(node.output(0));
  if (a.name() == "value") {
    tensor->CopyFrom(a.t());
    tensor->set_name(node.output(0));
  } else if (a.name() == "value_float" || a.name() == "value_floats") {
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    if (a.name() == "value_float") {
      tensor->add_float_data(a.f());
    } else {
      tensor->add_dims(a.floats_size());
      for (float f : a.floats())
        tensor->add_float_data(f);
    }
  } else if (a.name() == "value_int" || a.name() == "value_ints") {
    tensor->set_data_type(onnx::TensorProto::INT64);
    if (a.name() == "value_int") {
      tensor->add_int64_data(a.i());
    } else {
      tensor->add_dims(a.ints_size());
      for (int64_t i : a.ints())
        tensor->add_int64_data(i);
    }
  } else {
    fail("Constant attribute '" + a.name() + "' is not supported");
  }
  // Materialized as an nn.constant only if a node reads it as a tensor.
  im.bindConstantNode(node.output(0), tensor);
}

void importIdentity(Importer &im, const onnx::NodeProto &node) {
  if (node.input_size() < 1 || node.output_size() < 1)
    fail("Identity needs one input and one output");
  const std::string &input = node.input(0), &output = node.output(0);
  // A copy of an initializer is a parameter of its own that starts out equal
  // to the source, not a tie: training must update the two separately.
  if (!im.copyInitializer(input, output))
    im.define(node, 0, im.operand(node, 0));
}

/// If on a condition known at import (the legacy exporter's
/// LocalResponseNorm tests a static dim): the branch it takes, inline.
void importIf(Importer &im, const onnx::NodeProto &node) {
  std::optional<double> condition = im.knownScalar(node, 0);
  if (!condition)
    fail("only a condition known at import is supported");
  const char *taken = *condition != 0 ? "then_branch" : "else_branch";
  const onnx::AttributeProto *branch = attr(node, taken);
  if (!branch || !branch->has_g())
    fail(std::string("the ") + taken + " graph is missing");
  im.importBranch(branch->g());
  const onnx::GraphProto &graph = branch->g();
  if (graph.output_size() != node.output_size())
    fail(std::string("the ") + taken + " has " +
         std::to_string(graph.output_size()) + " outputs, If " +
         std::to_string(node.output_size()));
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &name = graph.output(i).name();
    if (const KnownTensor *known = im.knownValue(name))
      im.bindKnown(node.output(i), *known);
    else
      im.define(node, i, im.lookup(name));
  }
}

} // namespace

void registerConstantOps(OnnxOpTable &table) {
  table.add("Constant", importConstant);
  table.add("Identity", importIdentity);
  table.add("If", importIf);
}

} // namespace dpc::frontend
