//===- Pooling.cpp - ONNX pooling -----------------------------------------===//
//
// AveragePool, MaxPool (1-D and 2-D, without indices), GlobalAveragePool
// and GlobalMaxPool (a max pool whose window is the whole plane). A 1-D pooling
// runs as the 2-D one on [N, C, 1, L] (Conv.cpp).
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

void importPool(Importer &im, const onnx::NodeProto &node, bool isMax) {
  Value input = im.operand(node, 0);
  int64_t spatialRank = intsAttr(node, "kernel_shape", {}).size();
  if (spatialRank != 1 && spatialRank != 2)
    fail("only 1-D and 2-D pooling are supported (kernel_shape has " +
         std::to_string(spatialRank) + " entries)");
  if (spatialRank == 1)
    input = im.insertUnitDim(input, 2);
  SmallVector<NamedAttribute> attrs = {
      im.i64Array("kernel_size",
                  spatialInts(node, "kernel_shape", spatialRank, 1)),
      im.i64Array("stride", spatialInts(node, "strides", spatialRank, 1)),
      im.i64Array("padding", spatialPads(node, spatialRank)),
      im.named("ceil_mode",
               im.opBuilder().getBoolAttr(intAttr(node, "ceil_mode", 0)))};
  if (isMax) {
    if (intAttr(node, "storage_order", 0) != 0)
      fail("storage_order=1 is not supported");
    if (node.output_size() > 1 && !node.output(1).empty())
      im.markUnavailable(node.output(1),
                         "value '" + node.output(1) +
                             "' (max-pool indices) is read by a node; indices "
                             "are not supported");
    attrs.push_back(im.i64Array(
        "dilation", spatialInts(node, "dilations", spatialRank, 1)));
  } else {
    attrs.push_back(im.named(
        "count_include_pad",
        im.opBuilder().getBoolAttr(intAttr(node, "count_include_pad", 0))));
  }
  Value result = isMax ? im.create<nn::MaxPool2dOp>(input, attrs)
                       : im.create<nn::AvgPool2dOp>(input, attrs);
  im.define(node, 0, spatialRank == 1 ? im.removeUnitDim(result, 2) : result);
}

void importGlobalAveragePool(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  bool oneD = cast<RankedTensorType>(input.getType()).getRank() == 3;
  Value result = im.create<nn::GlobalAvgPool2dOp>(
      oneD ? im.insertUnitDim(input, 2) : input);
  im.define(node, 0, oneD ? im.removeUnitDim(result, 2) : result);
}

void importGlobalMaxPool(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getRank() != 3 && type.getRank() != 4)
    fail("only 1-D and 2-D global max pooling are supported, got " +
         typeToString(type));
  bool oneD = type.getRank() == 3;
  if (oneD)
    input = im.insertUnitDim(input, 2);
  ArrayRef<int64_t> plane =
      cast<RankedTensorType>(input.getType()).getShape().take_back(2);
  Value result = im.create<nn::MaxPool2dOp>(
      input, {im.i64Array("kernel_size", plane),
              im.i64Array("stride", SmallVector<int64_t>{1, 1})});
  im.define(node, 0, oneD ? im.removeUnitDim(result, 2) : result);
}

} // namespace

void registerPoolingOps(OnnxOpTable &table) {
  table.add("AveragePool", [](Importer &im, const onnx::NodeProto &node) {
    importPool(im, node, /*isMax=*/false);
  });
  table.add("MaxPool", [](Importer &im, const onnx::NodeProto &node) {
    importPool(im, node, /*isMax=*/true);
  });
  table.add("GlobalAveragePool", importGlobalAveragePool);
  table.add("GlobalMaxPool", importGlobalMaxPool);
}

} // namespace dpc::frontend
