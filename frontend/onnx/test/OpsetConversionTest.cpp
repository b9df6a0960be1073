//===- OpsetConversionTest.cpp - an eval graph at another opset -----------===//
//
// export-onnx-opsets.test runs converted exports of PyTorch's files in
// onnxruntime; these are the rewrites those files do not reach.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/OpsetConversion.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

namespace dpc::frontend {
namespace {

onnx::NodeProto *addNode(onnx::GraphProto &graph, const std::string &op,
                         std::vector<std::string> inputs,
                         std::vector<std::string> outputs) {
  onnx::NodeProto *node = graph.add_node();
  node->set_op_type(op);
  node->set_name(outputs.front());
  for (const std::string &input : inputs)
    node->add_input(input);
  for (const std::string &output : outputs)
    node->add_output(output);
  return node;
}

void addIntAttribute(onnx::NodeProto *node, const std::string &name,
                     int64_t value) {
  auto *attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

/// A graph input `name` of f32 with `dims` (-1: open).
void addInput(onnx::GraphProto &graph, const std::string &name,
              std::vector<int64_t> dims) {
  auto *type = graph.add_input();
  type->set_name(name);
  auto *tensor = type->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) {
    auto *entry = tensor->mutable_shape()->add_dim();
    if (dim >= 0)
      entry->set_dim_value(dim);
    else
      entry->set_dim_param("batch");
  }
}

std::string describe(const onnx::GraphProto &graph) {
  std::string text;
  for (const auto &node : graph.node()) {
    text += node.op_type() + "(";
    for (int i = 0; i < node.input_size(); ++i)
      text += (i ? "," : "") + node.input(i);
    text += ")";
    for (const auto &attribute : node.attribute()) {
      text += " " + attribute.name() + "=";
      if (attribute.type() == onnx::AttributeProto::INTS)
        for (int i = 0; i < attribute.ints_size(); ++i)
          text += (i ? "," : "") + std::to_string(attribute.ints(i));
      else if (attribute.type() == onnx::AttributeProto::INT)
        text += std::to_string(attribute.i());
    }
    text += "; ";
  }
  return text;
}

TEST(OpsetConversionTest, OperatorVersionsComeFromTheTable) {
  EXPECT_EQ(getOperatorVersion("ReduceMean", 17), 13);
  EXPECT_EQ(getOperatorVersion("ReduceMean", 21), 18);
  EXPECT_EQ(getOperatorVersion("Gelu", 19), 0);
  EXPECT_EQ(getOperatorVersion("Gelu", 20), 20);
  EXPECT_EQ(getOperatorVersion("Upsample", 11), 0); // deprecated at 10
  EXPECT_EQ(getOperatorVersion("NoSuchOp", 17), 0);
}

TEST(OpsetConversionTest, UnevenSplitGetsItsSizesBefore18) {
  onnx::GraphProto graph;
  addInput(graph, "x", {-1, 10});
  auto *split = addNode(graph, "Split", {"x"}, {"a", "b", "c"});
  addIntAttribute(split, "axis", 1);
  addIntAttribute(split, "num_outputs", 3);
  onnx::GraphProto at13 = graph, at12 = graph;
  ASSERT_EQ(convertOpset(at13, 18, 13), "");
  EXPECT_EQ(describe(at13), "Constant() value=; Split(x,a_split) axis=1; ");
  ASSERT_EQ(convertOpset(at12, 18, 12), "");
  EXPECT_EQ(describe(at12), "Split(x) axis=1 split=4,4,2; ");
  // Even parts need no sizes; an open dim cannot be split in the old form.
  graph.mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(9);
  onnx::GraphProto even = graph;
  ASSERT_EQ(convertOpset(even, 18, 17), "");
  EXPECT_EQ(describe(even), "Split(x) axis=1; ");
  graph.mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_param("n");
  EXPECT_EQ(convertOpset(graph, 18, 17),
            "Split node 'a' splits into num_outputs parts of a dim whose size "
            "the model file does not give");
}

TEST(OpsetConversionTest, SplitUpwardNamesItsParts) {
  onnx::GraphProto graph;
  addNode(graph, "Split", {"x"}, {"a", "b"});
  ASSERT_EQ(convertOpset(graph, 12, 18), "");
  EXPECT_EQ(describe(graph), "Split(x) num_outputs=2; ");
}

TEST(OpsetConversionTest, SoftmaxAxisMustBeTheLastDim) {
  onnx::GraphProto graph;
  addInput(graph, "x", {-1, 4, 5});
  auto *softmax = addNode(graph, "Softmax", {"x"}, {"y"});
  addIntAttribute(softmax, "axis", 1);
  onnx::GraphProto middle = graph;
  EXPECT_EQ(convertOpset(middle, 13, 12),
            "Softmax node 'y' runs along dim 1 of 3, which opsets before 13 "
            "read as the dims from there on");
  softmax->mutable_attribute(0)->set_i(2);
  ASSERT_EQ(convertOpset(graph, 13, 12), "");
  EXPECT_EQ(describe(graph), "Softmax(x) axis=-1; ");
}

TEST(OpsetConversionTest, MissingOperatorsAreDecomposedOrRefused) {
  onnx::GraphProto graph;
  addNode(graph, "HardSwish", {"x"}, {"y"});
  ASSERT_EQ(convertOpset(graph, 14, 13), "");
  EXPECT_EQ(describe(graph), "HardSigmoid(x) alpha=; Mul(x,y_gate); ");
  onnx::GraphProto norm;
  addNode(norm, "LayerNormalization", {"x", "w", "b"}, {"y"});
  EXPECT_EQ(convertOpset(norm, 17, 16),
            "LayerNormalization node 'y' has no definition at opset 16 (its "
            "first is at 17)");
  onnx::GraphProto resize;
  addNode(resize, "Resize", {"x", "", "s"}, {"y"});
  EXPECT_EQ(convertOpset(resize, 13, 11),
            "Resize node 'y' is version 13 at opset 13 and 11 at opset 11, "
            "which dpc does not convert");
}

TEST(OpsetConversionTest, ReduceAxesBetweenAttributeAndInput) {
  onnx::GraphProto graph;
  auto *mean = addNode(graph, "ReduceMean", {"x"}, {"y"});
  auto *axes = mean->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(2);
  axes->add_ints(3);
  onnx::GraphProto up = graph;
  ASSERT_EQ(convertOpset(up, 17, 18), "");
  EXPECT_EQ(describe(up), "Constant() value=; ReduceMean(x,y_axes); ");
  ASSERT_EQ(convertOpset(up, 18, 13), "");
  EXPECT_EQ(describe(up), "Constant() value=; ReduceMean(x) axes=2,3; ");
  // Axes computed at run time cannot become an attribute.
  onnx::GraphProto computed;
  addNode(computed, "ReduceMean", {"x", "axes"}, {"y"});
  EXPECT_EQ(convertOpset(computed, 18, 17),
            "ReduceMean node 'y' takes its axes from a computed value, which "
            "opsets before 18 need as an attribute");
}

} // namespace
} // namespace dpc::frontend
