//===- Normalization.cpp - batch and layer normalization ------------------===//
//
// BatchNormalization and LayerNormalization. Their statistics outputs
// have no nn counterpart: reading one fails.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

#include "frontend/onnx/ModelValidation.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

void importBatchNorm(Importer &im, const onnx::NodeProto &node) {
  SmallVector<Value> operands = {im.operand(node, 0), im.operand(node, 1),
                                 im.operand(node, 2),
                                 im.operand(node, 3, /*isBuffer=*/true),
                                 im.operand(node, 4, /*isBuffer=*/true)};
  // ONNX's momentum weighs the running value; PyTorch's (and nn's) the batch.
  double momentum = shortestDecimal(static_cast<float>(
      1.0 - shortestDecimal(floatAttr(node, "momentum", 0.9f))));
  im.define(
      node, 0,
      im.create<nn::BatchNormOp>(
          operands,
          {im.named("epsilon", im.opBuilder().getF64FloatAttr(shortestDecimal(
                                   floatAttr(node, "epsilon", 1e-5f)))),
           im.named("momentum", im.opBuilder().getF64FloatAttr(momentum))}));
  // A training-mode export also outputs the updated running statistics (and
  // before opset 14, the batch statistics): in dpc the training step updates
  // them, so they have no value in the forward graph.
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      im.markUnavailable(
          node.output(i),
          "value '" + node.output(i) +
              "' (batch-norm statistics output) is read by a node; dpc's "
              "training step updates running statistics itself");
}

void importLayerNorm(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  int64_t axis = intAttr(node, "axis", -1);
  if (axis < -rank || axis >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for rank " +
         std::to_string(rank));
  if (axis < 0)
    axis += rank;
  // Mean and InvStdDev are outputs for training frameworks' own backward.
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      im.markUnavailable(
          node.output(i),
          "value '" + node.output(i) +
              "' (layer-norm statistics output) is read by a node; dpc's "
              "backward recomputes them");
  SmallVector<Value> operands = {input, im.operand(node, 1)};
  if (Value bias = im.optionalOperand(node, 2))
    operands.push_back(bias);
  im.define(
      node, 0,
      im.create<nn::LayerNormOp>(
          operands,
          {im.named("axis", im.opBuilder().getI64IntegerAttr(axis)),
           im.named("epsilon", im.opBuilder().getF64FloatAttr(shortestDecimal(
                                   floatAttr(node, "epsilon", 1e-5f))))}));
}

} // namespace

void registerNormalizationOps(OnnxOpTable &table) {
  table.add("BatchNormalization", importBatchNorm);
  // dpc has read LayerNormalization at every opset it imports, also
  // before ONNX defined it (17); kept so.
  table.add("LayerNormalization", kMinOpset, kMaxOpset, importLayerNorm);
}

} // namespace dpc::frontend
