//===- Pooling.cpp - ONNX pooling -----------------------------------------===//
//
// AveragePool, MaxPool (2-D, without indices) and GlobalAveragePool.
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
  SmallVector<int64_t> kernel = intsAttr(node, "kernel_shape", {});
  if (kernel.size() != 2)
    fail("only 2-D pooling is supported (kernel_shape must have 2 entries)");
  SmallVector<NamedAttribute> attrs = {
      im.i64Array("kernel_size", kernel),
      im.i64Array("stride", intsAttr(node, "strides", {1, 1})),
      im.i64Array("padding", spatialPads(node)),
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
    attrs.push_back(
        im.i64Array("dilation", intsAttr(node, "dilations", {1, 1})));
    im.define(node, 0, im.create<nn::MaxPool2dOp>(input, attrs));
  } else {
    attrs.push_back(im.named(
        "count_include_pad",
        im.opBuilder().getBoolAttr(intAttr(node, "count_include_pad", 0))));
    im.define(node, 0, im.create<nn::AvgPool2dOp>(input, attrs));
  }
}

void importGlobalAveragePool(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.create<nn::GlobalAvgPool2dOp>(im.operand(node, 0)));
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
}

} // namespace dpc::frontend
