//===- Conv.cpp - ONNX convolutions ---------------------------------------===//
//
// Conv: 1-D and 2-D, grouped and dilated; a known all-zero bias is none. A
// 1-D convolution runs as the 2-D one on [N, C, 1, L] with a [O, C/g, 1, k]
// filter (as PyTorch 2's exporter writes an adaptive 1-D pooling), so
// every backend's 2-D kernels serve it.
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
  int64_t spatialRank = cast<RankedTensorType>(filter.getType()).getRank() - 2;
  if (spatialRank != 1 && spatialRank != 2)
    fail("only 1-D and 2-D convolutions are supported (the filter has " +
         std::to_string(spatialRank) + " spatial dims)");
  if (spatialRank == 1) {
    input = im.insertUnitDim(input, 2);
    filter = im.insertUnitDim(filter, 2);
  }
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
  Value result = im.create<nn::Conv2dOp>(
      operands,
      {im.i64Array("stride", spatialInts(node, "strides", spatialRank, 1)),
       im.i64Array("padding", spatialPads(node, spatialRank)),
       im.i64Array("dilation", spatialInts(node, "dilations", spatialRank, 1)),
       im.named("groups",
                im.opBuilder().getI64IntegerAttr(intAttr(node, "group", 1)))});
  im.define(node, 0, spatialRank == 1 ? im.removeUnitDim(result, 2) : result);
}

} // namespace

void registerConvOps(OnnxOpTable &table) { table.add("Conv", importConv); }

} // namespace dpc::frontend
