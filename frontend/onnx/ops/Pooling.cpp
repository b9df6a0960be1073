//===- Pooling.cpp - ONNX pooling -----------------------------------------===//
//
// AveragePool, MaxPool (1-D to 3-D, without indices), LpPool (as
// PyTorch's LPPool computes it), GlobalAveragePool and GlobalMaxPool (a max
// pool whose window is the whole plane). A 1-D pooling runs as the 2-D one
// on [N, C, 1, L] (Conv.cpp), a 3-D one as two 2-D ones (pool3d), and a
// global 3-D one as the 2-D one on [N, C, D x H, W].
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

/// A pooling window in nn's 2-D form: [h, w] kernel, stride and dilation,
/// [top, left, bottom, right] padding.
struct PoolWindow {
  SmallVector<int64_t> kernel, stride, padding, dilation;
};

/// nn.max_pool2d or nn.avg_pool2d of NCHW `input` over `window`, with
/// `node`'s ceil_mode and count_include_pad (the padding counted, whatever
/// the node says, where `countPadding` is set).
Value pool2d(Importer &im, const onnx::NodeProto &node, Value input,
             const PoolWindow &window, bool isMax, bool countPadding) {
  SmallVector<NamedAttribute> attrs = {
      im.i64Array("kernel_size", window.kernel),
      im.i64Array("stride", window.stride),
      im.i64Array("padding", window.padding),
      im.named("ceil_mode",
               im.opBuilder().getBoolAttr(intAttr(node, "ceil_mode", 0)))};
  if (isMax)
    attrs.push_back(im.i64Array("dilation", window.dilation));
  else
    attrs.push_back(
        im.named("count_include_pad",
                 im.opBuilder().getBoolAttr(
                     countPadding || intAttr(node, "count_include_pad", 0))));
  return isMax ? im.create<nn::MaxPool2dOp>(input, attrs)
               : im.create<nn::AvgPool2dOp>(input, attrs);
}

/// Whether pooling over `window` leaves every element as it is (a 1 x 1
/// window, unpadded, in steps of 1), whatever the pooling.
bool isIdentity(const PoolWindow &window) {
  auto ones = [](ArrayRef<int64_t> values) {
    return llvm::all_of(values, [](int64_t v) { return v == 1; });
  };
  return ones(window.kernel) && ones(window.stride) &&
         llvm::all_of(window.padding, [](int64_t v) { return v == 0; });
}

/// A 3-D pooling of NCDHW `input` as two 2-D ones (one where the other is
/// an identity, AvgPool3d((1, 3, 3))): over each depth slice's
/// [H, W] (the depths as channels), then over the depth (the pooled planes
/// flattened to a width). A window's max, or its sum and its divisor
/// (PyTorch's, clipped or counting padding, is a product of one factor per
/// axis), is the same taken axis group by axis group, so the result is the
/// 3-D pooling's; the first maximum in (d, h, w) order takes a max's
/// gradient, as PyTorch's. The 2-D kernels of every backend serve it.
Value pool3d(Importer &im, const onnx::NodeProto &node, Value input, bool isMax,
             bool countPadding) {
  SmallVector<int64_t> kernel = spatialInts(node, "kernel_shape", 3, 1),
                       stride = spatialInts(node, "strides", 3, 1),
                       dilation = spatialInts(node, "dilations", 3, 1),
                       pads = spatialPads(node, 3);
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getRank() != 5 ||
      llvm::any_of(type.getShape().drop_front(), ShapedType::isDynamic))
    fail("a 3-D pooling needs a static [N, C, D, H, W] input, got " +
         typeToString(type));
  int64_t n = type.getDimSize(0), c = type.getDimSize(1),
          d = type.getDimSize(2);
  PoolWindow planar = {{kernel[1], kernel[2]},
                       {stride[1], stride[2]},
                       {pads[1], pads[2], pads[4], pads[5]},
                       {dilation[1], dilation[2]}};
  PoolWindow depthwise = {{kernel[0], 1},
                          {stride[0], 1},
                          {pads[0], 0, pads[3], 0},
                          {dilation[0], 1}};
  Value pooled = im.createReshape(
      input, {n, c * d, type.getDimSize(3), type.getDimSize(4)});
  if (!isIdentity(planar))
    pooled = pool2d(im, node, pooled, planar, isMax, countPadding);
  auto pooledType = cast<RankedTensorType>(pooled.getType());
  int64_t outH = pooledType.getDimSize(2), outW = pooledType.getDimSize(3);
  Value result = im.createReshape(pooled, {n, c, d, outH * outW});
  if (!isIdentity(depthwise))
    result = pool2d(im, node, result, depthwise, isMax, countPadding);
  int64_t outD = cast<RankedTensorType>(result.getType()).getDimSize(2);
  return im.createReshape(result, {n, c, outD, outH, outW});
}

/// MaxPool or AveragePool of `input` with `node`'s window attributes (an
/// average counting the padding, whatever the node says, where
/// `countPadding` is set).
Value pool(Importer &im, const onnx::NodeProto &node, Value input, bool isMax,
           bool countPadding = false) {
  int64_t spatialRank = intsAttr(node, "kernel_shape", {}).size();
  if (spatialRank < 1 || spatialRank > 3)
    fail("only 1-D to 3-D pooling is supported (kernel_shape has " +
         std::to_string(spatialRank) + " entries)");
  if (isMax) {
    if (intAttr(node, "storage_order", 0) != 0)
      fail("storage_order=1 is not supported");
    if (node.output_size() > 1 && !node.output(1).empty())
      im.markUnavailable(node.output(1),
                         "value '" + node.output(1) +
                             "' (max-pool indices) is read by a node; indices "
                             "are not supported");
  }
  if (spatialRank == 3)
    return pool3d(im, node, input, isMax, countPadding);
  if (spatialRank == 1)
    input = im.insertUnitDim(input, 2);
  Value result = pool2d(im, node, input,
                        {spatialInts(node, "kernel_shape", spatialRank, 1),
                         spatialInts(node, "strides", spatialRank, 1),
                         spatialPads(node, spatialRank),
                         spatialInts(node, "dilations", spatialRank, 1)},
                        isMax, countPadding);
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

/// `input` ([N, C, L], [N, C, H, W] or [N, C, D, H, W]) as the NCHW a 2-D
/// global pooling takes: [N, C, 1, L], itself, or [N, C, D x H, W] (the
/// same elements in each plane).
Value asPlanes(Importer &im, Value input, StringRef what) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getRank() < 3 || type.getRank() > 5)
    fail("only 1-D to 3-D global " + what.str() + " is supported, got " +
         typeToString(type));
  if (type.getRank() == 3)
    return im.insertUnitDim(input, 2);
  if (type.getRank() == 5)
    return im.createReshape(input, {type.getDimSize(0), type.getDimSize(1),
                                    type.getDimSize(2) * type.getDimSize(3),
                                    type.getDimSize(4)});
  return input;
}

/// A global pooling's [N, C, 1, 1] result as the rank of `input` has it.
Value fromPlanes(Importer &im, Value result, Value input) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  if (rank == 4)
    return result;
  SmallVector<int64_t> dims(
      cast<RankedTensorType>(result.getType()).getShape().take_front(2));
  dims.append(rank - 2, 1);
  return im.createReshape(result, dims);
}

void importGlobalAveragePool(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  Value result =
      im.create<nn::GlobalAvgPool2dOp>(asPlanes(im, input, "average pooling"));
  im.define(node, 0, fromPlanes(im, result, input));
}

void importGlobalMaxPool(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  Value planes = asPlanes(im, input, "max pooling");
  ArrayRef<int64_t> plane =
      cast<RankedTensorType>(planes.getType()).getShape().take_back(2);
  Value result = im.create<nn::MaxPool2dOp>(
      planes, {im.i64Array("kernel_size", plane),
               im.i64Array("stride", SmallVector<int64_t>{1, 1})});
  im.define(node, 0, fromPlanes(im, result, input));
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
