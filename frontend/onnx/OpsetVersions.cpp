//===- OpsetVersions.cpp - which operators change between opsets ---------===//
//
// The versions of each operator, from OnnxOpVersions.inc (generated from a
// current ONNX), and the operators whose version changes the conversion
// can follow.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/OpsetConversion.h"
#include "frontend/onnx/OpsetConverter.h"

#include <cmath>
#include <iterator>

using namespace dpc::frontend;
using namespace dpc::frontend::opset;

namespace {

/// See getConvertibleOperators.
const char *const kConvertibleOperators[] = {"Abs",
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

} // namespace

const std::map<std::string, std::vector<int64_t>> &opset::getVersionTable() {
  static const std::map<std::string, std::vector<int64_t>> table = {
#define OP(name, ...) {#name, {__VA_ARGS__}},
#include "frontend/onnx/OnnxOpVersions.inc"
#undef OP
  };
  return table;
}

const std::set<std::string> &opset::getConvertibleOperators() {
  static const std::set<std::string> ops(std::begin(kConvertibleOperators),
                                         std::end(kConvertibleOperators));
  return ops;
}

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
