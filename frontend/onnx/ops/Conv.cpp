//===- Conv.cpp - ONNX convolutions ---------------------------------------===//
//
// Conv and ConvTranspose: 1-D, 2-D and 3-D, grouped and dilated; a known
// all-zero bias is none. A 1-D convolution runs as the 2-D one on
// [N, C, 1, L] with a [O, C/g, 1, k] filter (as PyTorch 2's exporter writes
// an adaptive 1-D pooling), so every backend's 2-D kernels serve it; a 3-D
// one is nn.conv2d on NCDHW (its attributes with a depth first). A
// transposed convolution is nn.conv_transpose2d (the input gradient of a
// convolution) plus its bias, broadcast over the spatial dims.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"
#include "runtime/abi/WindowMath.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

/// A convolution's input and filter in nn's form (a 1-D one's with a unit
/// height), and the filter's own spatial rank.
struct ConvOperands {
  Value input, filter;
  int64_t spatialRank;
};

/// Inputs 0 and 1 of `node`; a filter other than 1-D to 3-D is a failure
/// naming `what`.
ConvOperands getConvOperands(Importer &im, const onnx::NodeProto &node,
                             llvm::StringRef what) {
  ConvOperands conv{im.operand(node, 0), im.operand(node, 1), 0};
  conv.spatialRank =
      cast<RankedTensorType>(conv.filter.getType()).getRank() - 2;
  if (conv.spatialRank < 1 || conv.spatialRank > 3)
    fail("only 1-D to 3-D " + what.str() + " are supported (the filter has " +
         std::to_string(conv.spatialRank) + " spatial dims)");
  if (conv.spatialRank == 1) {
    conv.input = im.insertUnitDim(conv.input, 2);
    conv.filter = im.insertUnitDim(conv.filter, 2);
  }
  return conv;
}

/// Input 2's bias, or none: also when it is a known all-zero tensor
/// (PyTorch 2's exporter writes an Expand-ed zero for bias=False).
Value convBias(Importer &im, const onnx::NodeProto &node) {
  const KnownTensor *zeros = node.input_size() > 2 && !node.input(2).empty() &&
                                     !im.isInitializer(node.input(2))
                                 ? im.knownValue(node.input(2))
                                 : nullptr;
  if (zeros && zeros->isFloat() &&
      llvm::all_of(zeros->floats, [](double v) { return v == 0; }))
    return {};
  return im.optionalOperand(node, 2);
}

void importConv(Importer &im, const onnx::NodeProto &node) {
  auto [input, filter, spatialRank] = getConvOperands(im, node, "convolutions");
  SmallVector<Value> operands = {input, filter};
  if (Value bias = convBias(im, node))
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

/// The geometry of a transposed convolution in nn's form (a 1-D one's on
/// the width of a unit height), one entry per axis.
struct TransposedWindow {
  SmallVector<int64_t> kernel, stride, dilation, outputPadding, pads;
};

/// ConvTranspose's pads where `output_shape` is given: the full output
/// cropped to it. ONNX's text puts an odd total's extra row at the start,
/// onnxruntime at the end, so only even totals are taken.
SmallVector<int64_t> padsForOutputShape(const onnx::NodeProto &node,
                                        RankedTensorType input,
                                        const TransposedWindow &w,
                                        int64_t spatialRank) {
  SmallVector<int64_t> shape = intsAttr(node, "output_shape", {});
  int64_t given = static_cast<int64_t>(shape.size());
  if (given != spatialRank && given != spatialRank + 2)
    fail("output_shape has " + std::to_string(given) + " dims, expected " +
         std::to_string(spatialRank) + " (or " +
         std::to_string(spatialRank + 2) + " with batch and channels)");
  shape.erase(shape.begin(), shape.end() - spatialRank);
  if (spatialRank == 1)
    shape.insert(shape.begin(), 1);
  size_t axes = w.kernel.size();
  SmallVector<int64_t> pads(2 * axes);
  for (size_t axis = 0; axis < axes; ++axis) {
    std::string name = axis + 1 == axes   ? "width"
                       : axis + 2 == axes ? "height"
                                          : "depth";
    int64_t extent = input.getDimSize(2 + axis);
    // In range, no term below overflows (as nn.conv_transpose2d's).
    if (!plan::windowArgumentsInRange(extent, w.kernel[axis], w.stride[axis], 0,
                                      0, w.dilation[axis]) ||
        w.outputPadding[axis] < 0 || w.outputPadding[axis] >= w.stride[axis] ||
        shape[axis] < 1 || shape[axis] > plan::kMaxWindowArgument)
      fail("output_shape along the " + name +
           " needs a static input extent, a positive output_shape and "
           "kernel, stride and dilation, and an output_padding below the "
           "stride, each at most " +
           std::to_string(plan::kMaxWindowArgument));
    int64_t full = w.stride[axis] * (extent - 1) + w.outputPadding[axis] +
                   w.dilation[axis] * (w.kernel[axis] - 1) + 1;
    int64_t total = full - shape[axis];
    if (total < 0)
      fail("output_shape " + std::to_string(shape[axis]) + " along the " +
           name + " exceeds the full transposed output " +
           std::to_string(full) + "; give output_padding instead");
    if (total % 2 != 0)
      fail("output_shape " + std::to_string(shape[axis]) + " along the " +
           name + " crops an odd " + std::to_string(total) +
           " from the full output, which ONNX and onnxruntime split "
           "differently; give pads instead");
    pads[axis] = pads[axis + axes] = total / 2;
  }
  return pads;
}

/// ConvTranspose: nn.conv_transpose2d, and the bias added over the spatial
/// dims.
void importConvTranspose(Importer &im, const onnx::NodeProto &node) {
  auto [input, filter, spatialRank] =
      getConvOperands(im, node, "transposed convolutions");
  auto filterType = cast<RankedTensorType>(filter.getType());
  TransposedWindow w;
  w.kernel = SmallVector<int64_t>(filterType.getShape().drop_front(2));
  if (attr(node, "kernel_shape") &&
      spatialInts(node, "kernel_shape", spatialRank, 1) != w.kernel)
    fail("kernel_shape does not match the spatial dims of the filter, " +
         typeToString(im.operand(node, 1).getType()));
  w.stride = spatialInts(node, "strides", spatialRank, 1);
  w.dilation = spatialInts(node, "dilations", spatialRank, 1);
  w.outputPadding = spatialInts(node, "output_padding", spatialRank, 0);
  w.pads = spatialPads(node, spatialRank);
  if (attr(node, "output_shape"))
    w.pads = padsForOutputShape(node, cast<RankedTensorType>(input.getType()),
                                w, spatialRank);
  Value result = im.create<nn::ConvTranspose2dOp>(
      {input, filter},
      {im.i64Array("stride", w.stride), im.i64Array("padding", w.pads),
       im.i64Array("output_padding", w.outputPadding),
       im.i64Array("dilation", w.dilation),
       im.named("groups",
                im.opBuilder().getI64IntegerAttr(intAttr(node, "group", 1)))});
  if (spatialRank == 1)
    result = im.removeUnitDim(result, 2);
  if (Value bias = convBias(im, node)) {
    // [C] -> [C, 1(, 1)]: broadcast over the spatial dims.
    SmallVector<int64_t> dims(spatialRank + 1, 1);
    dims[0] = cast<RankedTensorType>(bias.getType()).getDimSize(0);
    result = im.create<nn::AddOp>({result, im.createReshape(bias, dims)});
  }
  im.define(node, 0, result);
}

} // namespace

void registerConvOps(OnnxOpTable &table) {
  table.add("Conv", importConv);
  table.add("ConvTranspose", importConvTranspose);
}

} // namespace dpc::frontend
