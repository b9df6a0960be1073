//===- OnnxNormalizeTest.cpp - --normalize inside an exported graph -------===//
//
// export-onnx-normalize.test runs exported graphs in onnxruntime; these
// are the edits themselves, on graphs written here by the wire format.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/OnnxNormalize.h"
#include "runtime/train/ProtoWire.h"
#include "runtime/train/Trainer.h"

#include <gtest/gtest.h>

namespace dpc::train {
namespace {

std::string toString(const std::vector<uint8_t> &bytes) {
  return std::string(bytes.begin(), bytes.end());
}

/// A graph input `name` of f32 [batch, channels, 4, 4].
std::vector<uint8_t> encodeImageInput(const std::string &name,
                                      int64_t channels) {
  ProtoWriter shape;
  for (int64_t dim : {int64_t(0), channels, int64_t(4), int64_t(4)}) {
    ProtoWriter dimension;
    if (dim)
      dimension.intField(1, dim);
    else
      dimension.bytesField(2, std::string("batch"));
    shape.bytesField(1, dimension.bytes);
  }
  ProtoWriter tensor;
  tensor.intField(1, 1);
  tensor.bytesField(2, shape.bytes);
  ProtoWriter type;
  type.bytesField(1, tensor.bytes);
  ProtoWriter input;
  input.bytesField(1, name);
  input.bytesField(2, type.bytes);
  return std::move(input.bytes);
}

/// graph { input x [N, channels, 4, 4]; Relu(x) -> y; Add(x, y) -> z }
std::string encodeGraph(int64_t channels) {
  ProtoWriter relu, add, graph;
  relu.bytesField(1, std::string("x"));
  relu.bytesField(2, std::string("y"));
  relu.bytesField(4, std::string("Relu"));
  add.bytesField(1, std::string("x"));
  add.bytesField(1, std::string("y"));
  add.bytesField(2, std::string("z"));
  add.bytesField(4, std::string("Add"));
  graph.bytesField(1, relu.bytes);
  graph.bytesField(1, add.bytes);
  graph.bytesField(2, std::string("g"));
  graph.bytesField(11, encodeImageInput("x", channels));
  return toString(graph.bytes);
}

/// Each node's op type and inputs, in order.
std::vector<std::string> describeNodes(const std::string &graph) {
  std::vector<std::string> nodes;
  ProtoReader reader(graph);
  ProtoField field;
  while (reader.next(field)) {
    if (field.number != 1)
      continue;
    std::string op, inputs;
    ProtoReader node(field.payload);
    ProtoField part;
    while (node.next(part)) {
      if (part.number == 4)
        op = std::string(part.payload);
      if (part.number == 1)
        inputs += " " + std::string(part.payload);
    }
    nodes.push_back(op + inputs);
  }
  EXPECT_FALSE(reader.failed());
  return nodes;
}

TEST(OnnxNormalizeTest, NodesReadTheNormalizedInput) {
  data::Normalization normalization{{0.5f, 0.25f}, {0.2f, 0.1f}};
  std::string graph = toString(
      normalizeImageInputs(encodeGraph(2), {}, normalization, "m.plan"));
  EXPECT_EQ(describeNodes(graph),
            (std::vector<std::string>{
                "Constant", "Constant", "Sub x x_dpc_mean",
                "Div x_dpc_centered x_dpc_std", "Relu x_dpc_normalized",
                "Add x_dpc_normalized y"}));
}

TEST(OnnxNormalizeTest, StateAndOtherInputsStayAsTheyAre) {
  data::Normalization normalization{{0.5f}, {0.2f}};
  std::string graph = encodeGraph(1);
  // x named as a parameter (an IR 3 initializer input): not an image.
  EXPECT_EQ(toString(normalizeImageInputs(graph, {"x"}, normalization, "p")),
            graph);
}

TEST(OnnxNormalizeTest, BadGraphsAreOneLineNamingThePlan) {
  data::Normalization normalization{{0.5f, 0.25f, 0.125f}, {1, 1, 1}};
  try {
    normalizeImageInputs(encodeGraph(2), {}, normalization, "m.plan");
    FAIL() << "no error";
  } catch (const RunError &error) {
    EXPECT_STREQ(error.what(), "m.plan: the model's image input 'x' has 2 "
                               "channels, but the checkpoint's --normalize "
                               "has 3");
  }
  std::string truncated = encodeGraph(3);
  truncated.resize(truncated.size() - 3);
  try {
    normalizeImageInputs(truncated, {}, normalization, "m.plan");
    FAIL() << "no error";
  } catch (const RunError &error) {
    EXPECT_STREQ(error.what(), "m.plan: its recorded ONNX graph is malformed");
  }
}

} // namespace
} // namespace dpc::train
