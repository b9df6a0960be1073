//===- Pooling.cpp - ONNX pooling -----------------------------------------===//
//
// AveragePool, MaxPool (1-D and 2-D, without indices), LpPool (as
// PyTorch's LPPool computes it), GlobalAveragePool and GlobalMaxPool (a max
// pool whose window is the whole plane). A 1-D pooling runs as the 2-D one
// on [N, C, 1, L] (Conv.cpp).
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

/// MaxPool or AveragePool of `input` with `node`'s window attributes (an
/// average counting the padding, whatever the node says, where
/// `countPadding` is set).
Value pool(Importer &im, const onnx::NodeProto &node, Value input, bool isMax,
           bool countPadding = false) {
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
    attrs.push_back(
        im.named("count_include_pad",
                 im.opBuilder().getBoolAttr(
                     countPadding || intAttr(node, "count_include_pad", 0))));
  }
  Value result = isMax ? im.create<nn::MaxPool2dOp>(input, attrs)
                       : im.create<nn::AvgPool2dOp>(input, attrs);
  return spatialRank == 1 ? im.removeUnitDim(result, 2) : result;
}

void importPool(Importer &im, const onnx::NodeProto &node, bool isMax) {
  im.define(node, 0, pool(im, node, im.operand(node, 0), isMax));
}

/// LpPool: (the sum of |x|^p over each window)^(1 / p), as PyTorch's
/// LPPool computes it: the average of |x|^p (the padding counted) times
/// the window's size, then the root (nn.sqrt for p = 2).
void importLpPool(Importer &im, const onnx::NodeProto &node) {
  int64_t p = intAttr(node, "p", 2);
  if (p < 1 || p > 4)
    fail("only p of 1 to 4 is supported, got " + std::to_string(p));
  if (intAttr(node, "ceil_mode", 0))
    fail("ceil_mode is not supported (a window past the end sums fewer "
         "elements than its average times its size)");
  for (int64_t d : intsAttr(node, "dilations", {}))
    if (d != 1)
      fail("dilations are not supported");
  Value x = im.operand(node, 0);
  Value magnitude = p % 2 ? im.create<nn::AbsOp>(x) : x, power = magnitude;
  for (int64_t i = 1; i < p; ++i)
    power = im.create<nn::MulOp>({power, magnitude});
  int64_t window = 1;
  for (int64_t k : intsAttr(node, "kernel_shape", {}))
    window *= k;
  auto scalar = RankedTensorType::get({}, im.opBuilder().getF32Type());
  Value sums = im.create<nn::MulOp>(
      {pool(im, node, power, /*isMax=*/false, /*countPadding=*/true),
       im.create<nn::ConstantOp>(
           {}, {im.named("value", DenseElementsAttr::get(
                                      scalar, static_cast<float>(window)))})});
  Value root = sums;
  if (p == 2)
    root = im.create<nn::SqrtOp>(sums);
  else if (p > 2)
    root = im.create<nn::PowOp>(
        sums, {im.named("exponent", im.opBuilder().getF64FloatAttr(1.0 / p))});
  im.define(node, 0, root);
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
  table.add("LpPool", importLpPool);
}

} // namespace dpc::frontend
