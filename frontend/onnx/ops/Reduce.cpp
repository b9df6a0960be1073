//===- Reduce.cpp - reductions --------------------------------------------===//
//
// ReduceMean, ReduceSum, ReduceL2, ReduceMax and ReduceMin over non-batch
// axes.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

/// The axes a reduction reduces, sorted: an attribute before opset
/// `axesInputFrom`, an optional input from it on; none, every axis.
SmallVector<int64_t> reducedAxes(Importer &im, const onnx::NodeProto &node,
                                 int64_t rank, int64_t axesInputFrom) {
  SmallVector<int64_t> axes;
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
  return axes;
}

/// Refuses a reduction over the batch (a dynamic dim): each replica holds
/// only its share of it.
void checkNotOverBatch(RankedTensorType type, ArrayRef<int64_t> axes,
                       const char *what) {
  for (int64_t axis : axes)
    if (type.isDynamicDim(axis))
      fail(std::string("a ") + what + " over the batch dim (" +
           std::to_string(axis) + ") is not supported");
}

void importReduce(Importer &im, const onnx::NodeProto &node, bool mean) {
  Value input = im.operand(node, 0);
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  // ReduceSum takes its axes as an input from opset 13, ReduceMean from 18.
  SmallVector<int64_t> axes = reducedAxes(im, node, rank, mean ? 18 : 13);
  bool keepDims = intAttr(node, "keepdims", 1) != 0;
  // The spatial mean of NCHW (what exporters write for AdaptiveAvgPool2d(1))
  // is a pooling; any other, a sum over the axes scaled by their size.
  if (!mean || rank != 4 || axes != SmallVector<int64_t>{2, 3}) {
    auto type = cast<RankedTensorType>(input.getType());
    checkNotOverBatch(type, axes, mean ? "mean" : "sum");
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

/// ReduceL2 (torch.linalg.vector_norm, the dynamo export's CosineSimilarity
/// and PairwiseDistance): the square root of the sum of squares.
void importReduceL2(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> axes = reducedAxes(im, node, type.getRank(), 18);
  checkNotOverBatch(type, axes, "norm");
  bool keepDims = intAttr(node, "keepdims", 1) != 0;
  Value squares = im.create<nn::MulOp>({input, input});
  Value sum = im.create<nn::ReduceSumOp>(
      squares, {im.i64Array("dims", axes),
                im.named("keep_dims", im.opBuilder().getBoolAttr(keepDims))});
  im.define(node, 0, im.create<nn::SqrtOp>(sum));
}

/// ReduceMax or ReduceMin (torch.amax, amin; axes an input from opset 18).
template <typename OpT>
void importReduceExtremum(Importer &im, const onnx::NodeProto &node,
                          const char *what) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> axes = reducedAxes(im, node, type.getRank(), 18);
  checkNotOverBatch(type, axes, what);
  bool keepDims = intAttr(node, "keepdims", 1) != 0;
  im.define(node, 0,
            im.create<OpT>(
                input,
                {im.i64Array("dims", axes),
                 im.named("keep_dims", im.opBuilder().getBoolAttr(keepDims))}));
}

} // namespace

void registerReduceOps(OnnxOpTable &table) {
  table.add("ReduceMean", [](Importer &im, const onnx::NodeProto &node) {
    importReduce(im, node, /*mean=*/true);
  });
  table.add("ReduceSum", [](Importer &im, const onnx::NodeProto &node) {
    importReduce(im, node, /*mean=*/false);
  });
  table.add("ReduceL2", importReduceL2);
  table.add("ReduceMax", [](Importer &im, const onnx::NodeProto &node) {
    importReduceExtremum<nn::ReduceMaxOp>(im, node, "max");
  });
  table.add("ReduceMin", [](Importer &im, const onnx::NodeProto &node) {
    importReduceExtremum<nn::ReduceMinOp>(im, node, "min");
  });
}

} // namespace dpc::frontend
