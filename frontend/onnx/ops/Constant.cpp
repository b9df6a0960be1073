//===- Constant.cpp - constants and copies --------------------------------===//
//
// Constant nodes (materialized only where a node reads them as a tensor)
// and Identity (a copy of an initializer is a parameter of its own).
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

} // namespace

void registerConstantOps(OnnxOpTable &table) {
  table.add("Constant", importConstant);
  table.add("Identity", importIdentity);
}

} // namespace dpc::frontend
