//===- Reduce.cpp - reductions --------------------------------------------===//
//
// ReduceMean and ReduceSum over non-batch axes.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

void importReduce(Importer &im, const onnx::NodeProto &node, bool mean) {
  Value input = im.operand(node, 0);
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  // The axes: an attribute before opset 18 (ReduceSum: 13), an optional
  // input from it on.
  SmallVector<int64_t> axes;
  int64_t axesInputFrom = mean ? 18 : 13;
  if (im.getOpset() < axesInputFrom) {
    if (const onnx::AttributeProto *a = attr(node, "axes"))
      axes.assign(a->ints().begin(), a->ints().end());
  } else if (node.input_size() > 1 && !node.input(1).empty()) {
    axes = im.constantInts(node, 1);
  }
  if (axes.empty() && im.getOpset() >= axesInputFrom &&
      intAttr(node, "noop_with_empty_axes", 0))
    fail("noop_with_empty_axes is not supported");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  axes = normalizeAxes(axes, rank);
  llvm::sort(axes);
  bool keepDims = intAttr(node, "keepdims", 1) != 0;
  // The spatial mean of NCHW (what exporters write for AdaptiveAvgPool2d(1))
  // is a pooling; any other, a sum over the axes scaled by their size.
  if (!mean || rank != 4 || axes != SmallVector<int64_t>{2, 3}) {
    auto type = cast<RankedTensorType>(input.getType());
    for (int64_t axis : axes)
      if (type.isDynamicDim(axis))
        fail(std::string("a ") + (mean ? "mean" : "sum") +
             " over the batch dim (" + std::to_string(axis) +
             ") is not supported");
    int64_t count = 1;
    for (int64_t axis : axes)
      count *= type.getDimSize(axis);
    Value sum = im.create<nn::ReduceSumOp>(
        input, {im.i64Array("dims", axes),
                im.named("keep_dims", im.opBuilder().getBoolAttr(keepDims))});
    if (!mean) {
      im.define(node, 0, sum);
      return;
    }
    auto scalar = RankedTensorType::get({}, im.opBuilder().getF32Type());
    Value scale = im.create<nn::ConstantOp>(
        {}, {im.named("value",
                      DenseElementsAttr::get(scalar, 1.f / float(count)))});
    im.define(node, 0, im.create<nn::MulOp>({sum, scale}));
    return;
  }
  Value pooled = im.create<nn::GlobalAvgPool2dOp>(input);
  if (!keepDims)
    pooled = im.create<nn::FlattenOp>(
        pooled, {im.named("axis", im.opBuilder().getI64IntegerAttr(1))});
  im.define(node, 0, pooled);
}

} // namespace

void registerReduceOps(OnnxOpTable &table) {
  table.add("ReduceMean", [](Importer &im, const onnx::NodeProto &node) {
    importReduce(im, node, /*mean=*/true);
  });
  table.add("ReduceSum", [](Importer &im, const onnx::NodeProto &node) {
    importReduce(im, node, /*mean=*/false);
  });
}

} // namespace dpc::frontend
