//===- Conv.cpp - ONNX convolutions ---------------------------------------===//
//
// Conv: 2-D, grouped and dilated; a known all-zero bias is none.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

void importConv(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0), filter = im.operand(node, 1);
  if (cast<RankedTensorType>(filter.getType()).getRank() != 4)
    fail("only 2-D convolutions are supported");
  SmallVector<Value> operands = {input, filter};
  // A known all-zero bias (PyTorch 2's exporter writes an Expand-ed zero
  // for bias=False) is no bias.
  const KnownTensor *zeros = node.input_size() > 2 && !node.input(2).empty() &&
                                     !im.isInitializer(node.input(2))
                                 ? im.knownValue(node.input(2))
                                 : nullptr;
  bool zeroBias = zeros && zeros->isFloat() &&
                  llvm::all_of(zeros->floats, [](double v) { return v == 0; });
  if (!zeroBias)
    if (Value bias = im.optionalOperand(node, 2))
      operands.push_back(bias);
  im.define(node, 0,
            im.create<nn::Conv2dOp>(
                operands,
                {im.i64Array("stride", intsAttr(node, "strides", {1, 1})),
                 im.i64Array("padding", spatialPads(node)),
                 im.i64Array("dilation", intsAttr(node, "dilations", {1, 1})),
                 im.named("groups", im.opBuilder().getI64IntegerAttr(
                                        intAttr(node, "group", 1)))}));
}

} // namespace

void registerConvOps(OnnxOpTable &table) { table.add("Conv", importConv); }

} // namespace dpc::frontend
