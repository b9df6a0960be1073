//===- OpsetConverter.h - converting a graph between opsets -----*- C++ -*-===//
//
// Private to the opset conversion: OpsetConversion.cpp walks the graph and
// edits it, OpsetRewrites.cpp rewrites the operators whose form changed,
// OpsetVersions.cpp knows each operator's versions.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_OPSETCONVERTER_H
#define DPC_FRONTEND_ONNX_OPSETCONVERTER_H

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dpc::frontend::opset {

/// Each default-domain operator's versions (OnnxOpVersions.inc): the
/// opsets that gave it a new definition; a negative one: deprecated from
/// then on.
const std::map<std::string, std::vector<int64_t>> &getVersionTable();

/// Operators whose versions differ only in types or in optional inputs and
/// attributes that keep the old meaning when absent, or whose form changes
/// are converted (OpsetRewrites.cpp).
const std::set<std::string> &getConvertibleOperators();

bool isDefaultDomain(const onnx::NodeProto &node);

const onnx::AttributeProto *findAttribute(const onnx::NodeProto &node,
                                          const std::string &name);
int64_t getIntAttribute(const onnx::NodeProto &node, const std::string &name,
                        int64_t otherwise);
/// Removes `name`; returns whether the node had it.
bool eraseAttribute(onnx::NodeProto &node, const std::string &name);
void setIntsAttribute(onnx::NodeProto &node, const std::string &name,
                      const std::vector<int64_t> &values);
void setIntAttribute(onnx::NodeProto &node, const std::string &name,
                     int64_t value);
/// The values of an INT64 tensor, or nothing for another type.
std::optional<std::vector<int64_t>> getInts(const onnx::TensorProto &tensor);

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
  void sliceShape(onnx::NodeProto &node);
  std::string convertConstantValue(onnx::NodeProto &node);

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

} // namespace dpc::frontend::opset

#endif // DPC_FRONTEND_ONNX_OPSETCONVERTER_H
