//===- OnnxWriterTest.cpp - the initializers an exported graph gets -------===//
//
// export-onnx-constants.test runs an exported model in onnxruntime; these
// are the initializers themselves, on graphs written here by the wire
// format: only the tensors the graph reads become initializers.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/OnnxWriter.h"
#include "runtime/train/ProtoWire.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dpc::train {
namespace {

std::string toString(const std::vector<uint8_t> &bytes) {
  return std::string(bytes.begin(), bytes.end());
}

/// NodeProto `op`(inputs) -> output, with `subgraph` (when given) as the
/// GraphProto of its attribute "body".
std::vector<uint8_t> encodeNode(const std::string &op,
                                const std::vector<std::string> &inputs,
                                const std::string &output,
                                const std::string &subgraph = "") {
  ProtoWriter node;
  for (const std::string &input : inputs)
    node.bytesField(1, input);
  node.bytesField(2, output);
  node.bytesField(4, op);
  if (!subgraph.empty()) {
    ProtoWriter attribute;
    attribute.bytesField(1, std::string("body"));
    attribute.bytesField(6, subgraph);
    node.bytesField(5, attribute.bytes);
  }
  return std::move(node.bytes);
}

/// graph { Mul(x, w) -> y; If(c) { Add(y, v) -> z }; output y, u }: w and v
/// are read by nodes, u is an output itself.
std::string encodeGraph() {
  ProtoWriter body;
  body.bytesField(1, encodeNode("Add", {"y", "v"}, "z"));
  ProtoWriter graph;
  graph.bytesField(1, encodeNode("Mul", {"x", "w"}, "y"));
  graph.bytesField(1, encodeNode("If", {"c"}, "r", toString(body.bytes)));
  graph.bytesField(2, std::string("g"));
  for (const char *output : {"y", "u"}) {
    ProtoWriter info;
    info.bytesField(1, std::string(output));
    graph.bytesField(12, info.bytes);
  }
  return toString(graph.bytes);
}

/// The names of the initializers of the model file `bytes`.
std::vector<std::string>
getInitializerNames(const std::vector<uint8_t> &bytes) {
  std::vector<std::string> names;
  ProtoReader file(bytes);
  ProtoField field;
  while (file.next(field)) {
    if (field.number != 7)
      continue;
    ProtoReader graph(field.payload);
    ProtoField part;
    while (graph.next(part)) {
      if (part.number != 5)
        continue;
      ProtoReader tensor(part.payload);
      ProtoField entry;
      while (tensor.next(entry))
        if (entry.number == 8)
          names.push_back(std::string(entry.payload));
    }
  }
  EXPECT_FALSE(file.failed());
  return names;
}

std::vector<uint8_t> encode(const std::string &graph, size_t &written) {
  flatbuffers::FlatBufferBuilder builder;
  plan::OnnxModelT model;
  model.ir_version = 8;
  model.opset = 17;
  builder.Finish(plan::OnnxModel::Pack(builder, &model));
  auto *packed =
      flatbuffers::GetRoot<plan::OnnxModel>(builder.GetBufferPointer());
  std::vector<ExportedTensor> tensors;
  for (const char *name : {"w", "constant.2.0123", "v", "u"})
    tensors.push_back({name, plan::DType::F32, {2}, std::vector<uint8_t>(8)});
  return encodeOnnxModel(*packed, graph, tensors, 17, "test.plan", {},
                         &written);
}

TEST(OnnxWriterTest, WritesOnlyTheTensorsTheGraphReads) {
  size_t written = 0;
  std::vector<uint8_t> bytes = encode(encodeGraph(), written);
  EXPECT_EQ(written, 3u);
  EXPECT_EQ(getInitializerNames(bytes),
            (std::vector<std::string>{"w", "v", "u"}));
}

TEST(OnnxWriterTest, KeepsEveryTensorOfAGraphItCannotRead) {
  // A node whose length runs past the graph's end: nothing can be known.
  std::string graph = encodeGraph();
  graph.push_back(char(1 << 3 | LengthDelimited));
  graph.push_back(char(100));
  size_t written = 0;
  std::vector<uint8_t> bytes = encode(graph, written);
  EXPECT_EQ(written, 4u);
}

} // namespace
} // namespace dpc::train
