//===- Normalization.cpp - batch and layer normalization ------------------===//
//
// BatchNormalization and LayerNormalization (their statistics outputs have
// no nn counterpart: reading one fails), InstanceNormalization and
// GroupNormalization. Instance and group norm normalize each sample's
// channel (or group of channels) over the rest with its own statistics:
// that is a layer norm from dim 2 on [N, C, ...] (or on [N, G, C/G x ...]),
// without its affine part, then the per-channel scale and bias as a
// broadcast Mul and Add (where they are not known ones and zeros, as the
// exporters write them for GroupNorm). So the layer norm's kernels, VJP and
// backends serve both, and the statistics never mix samples: exact under
// data parallelism with no synchronization. LRN is the exporters'
// decomposition of PyTorch's LocalResponseNorm, written here.
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
  // Statistics are per channel over every other dim, so a BatchNorm3d's
  // [N, C, D, H, W] runs as [N, C, D x H, W]: the kernels stop at rank 4.
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getRank() > 4) {
    SmallVector<int64_t> dims(type.getShape().take_front(2));
    dims.push_back(type.getDimSize(2));
    for (int64_t d = 3; d + 1 < type.getRank(); ++d)
      dims.back() *= type.getDimSize(d);
    dims.push_back(type.getShape().back());
    input = im.createReshape(input, dims);
  }
  SmallVector<Value> operands = {input, im.operand(node, 1),
                                 im.operand(node, 2),
                                 im.operand(node, 3, /*isBuffer=*/true),
                                 im.operand(node, 4, /*isBuffer=*/true)};
  // ONNX's momentum weighs the running value; PyTorch's (and nn's) the batch.
  double momentum = shortestDecimal(static_cast<float>(
      1.0 - shortestDecimal(floatAttr(node, "momentum", 0.9f))));
  Value output = im.create<nn::BatchNormOp>(
      operands,
      {im.named("epsilon", im.opBuilder().getF64FloatAttr(shortestDecimal(
                               floatAttr(node, "epsilon", 1e-5f)))),
       im.named("momentum", im.opBuilder().getF64FloatAttr(momentum))});
  im.define(node, 0,
            output.getType() == type
                ? output
                : im.createReshape(output, type.getShape()));
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

/// Whether input `i` of `node` is known to hold `value` everywhere (a
/// float initializer is a parameter: never known).
bool isKnownFill(Importer &im, const onnx::NodeProto &node, int i,
                 double value) {
  if (node.input_size() <= i || node.input(i).empty() ||
      im.isInitializer(node.input(i)))
    return false;
  const KnownTensor *known = im.knownValue(node.input(i));
  return known && known->isFloat() &&
         llvm::all_of(known->floats, [&](double v) { return v == value; });
}

/// Each [dim 0, dim 1] row of `input` normalized over the dims from 2 on.
Value normalizeFromDim2(Importer &im, Value input, double epsilon) {
  auto type = cast<RankedTensorType>(input.getType());
  auto unitType = RankedTensorType::get(type.getShape().drop_front(2),
                                        type.getElementType());
  Value ones = im.create<nn::ConstantOp>(
      {}, {im.named("value", DenseElementsAttr::get(unitType, 1.f))});
  return im.create<nn::LayerNormOp>(
      {input, ones},
      {im.named("axis", im.opBuilder().getI64IntegerAttr(2)),
       im.named("epsilon", im.opBuilder().getF64FloatAttr(epsilon))});
}

/// `y * scale + bias` with inputs 1 and 2 of `node` ([dim 1 of y]) broadcast
/// over y's dims from 2 on; known ones and zeros are left out.
Value applyChannelAffine(Importer &im, const onnx::NodeProto &node, Value y) {
  auto type = cast<RankedTensorType>(y.getType());
  SmallVector<int64_t> perChannel(type.getRank() - 1, 1);
  perChannel[0] = type.getDimSize(1);
  for (auto [i, neutral] : {std::pair{1, 1.0}, std::pair{2, 0.0}}) {
    if (isKnownFill(im, node, i, neutral))
      continue;
    Value param = im.operand(node, i);
    if (cast<RankedTensorType>(param.getType()).getShape() !=
        ArrayRef<int64_t>(perChannel).take_front(1))
      fail(std::string(i == 1 ? "the scale" : "the bias") +
           " must hold one value per channel, [" +
           std::to_string(perChannel[0]) + "], got " +
           typeToString(param.getType()));
    param = im.createReshape(param, perChannel);
    y = i == 1 ? im.create<nn::MulOp>({y, param})
               : im.create<nn::AddOp>({y, param});
  }
  return y;
}

double epsilonOf(const onnx::NodeProto &node) {
  return shortestDecimal(floatAttr(node, "epsilon", 1e-5f));
}

void importInstanceNorm(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  if (cast<RankedTensorType>(input.getType()).getRank() < 3)
    fail("InstanceNormalization needs an [N, C, ...] input of rank 3 or "
         "more, got " +
         typeToString(input.getType()));
  im.define(node, 0,
            applyChannelAffine(im, node,
                               normalizeFromDim2(im, input, epsilonOf(node))));
}

void importGroupNorm(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  int64_t groups = intAttr(node, "num_groups", 0);
  if (type.getRank() < 3 || type.isDynamicDim(1))
    fail("GroupNormalization needs an [N, C, ...] input of rank 3 or more, "
         "got " +
         typeToString(type));
  int64_t channels = type.getDimSize(1);
  if (groups <= 0 || channels % groups != 0)
    fail("num_groups " + std::to_string(groups) +
         " does not divide the input's " + std::to_string(channels) +
         " channels");
  // Each sample's group of channels is one row of [N, G, C/G x spatial].
  SmallVector<int64_t> grouped = {type.getDimSize(0), groups,
                                  staticElements(type) / groups};
  if (!type.isDynamicDim(0))
    grouped[2] /= type.getDimSize(0);
  Value y =
      normalizeFromDim2(im, im.createReshape(input, grouped), epsilonOf(node));
  // Scale and bias per channel: opset 21's (18's, per group, is deprecated
  // and refused by the model check).
  im.define(node, 0,
            applyChannelAffine(im, node, im.createReshape(y, type.getShape())));
}

/// A 0-d f32 constant.
Value scalarConstant(Importer &im, float value) {
  auto type = RankedTensorType::get({}, im.opBuilder().getF32Type());
  return im.create<nn::ConstantOp>(
      {}, {im.named("value", DenseElementsAttr::get(type, value))});
}

/// LRN: x / (bias + alpha / size * (the sum of x^2 over `size` channels
/// around))^beta, as the exporters write PyTorch's LocalResponseNorm: the
/// squares of [N, C, ...] viewed as [N, 1, C, rest], zero-padded along C
/// and averaged over windows of `size` channels (ONNX's window starts
/// floor((size - 1) / 2) channels before; PyTorch's, for odd sizes, too).
void importLrn(Importer &im, const onnx::NodeProto &node) {
  Value x = im.operand(node, 0);
  auto type = cast<RankedTensorType>(x.getType());
  int64_t size = intAttr(node, "size", 0);
  if (type.getRank() < 3)
    fail("LRN takes [N, C, D1, ...] input");
  for (int64_t d = 1; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      fail("LRN needs static dims after the batch");
  if (size < 1)
    fail("LRN's size must be positive");
  int64_t rest = 1;
  for (int64_t d = 2; d < type.getRank(); ++d)
    rest *= type.getDimSize(d);
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  Value squares = im.create<nn::MulOp>({x, x});
  Value planes = im.createReshape(
      squares, {type.getDimSize(0), 1, type.getDimSize(1), rest});
  Value padded =
      im.create<nn::PadOp>(planes, {im.i64Array("low", {0, 0, before, 0}),
                                    im.i64Array("high", {0, 0, after, 0})});
  Value averages =
      im.create<nn::AvgPool2dOp>(padded, {im.i64Array("kernel_size", {size, 1}),
                                          im.i64Array("stride", {1, 1})});
  Value sums = im.createReshape(averages, type.getShape());
  Value scaled = im.create<nn::MulOp>(
      {sums, scalarConstant(im, floatAttr(node, "alpha", 1e-4f))});
  Value base = im.create<nn::AddOp>(
      {scaled, scalarConstant(im, floatAttr(node, "bias", 1.f))});
  Value divisor = im.create<nn::PowOp>(
      base,
      {im.named("exponent", im.opBuilder().getF64FloatAttr(shortestDecimal(
                                floatAttr(node, "beta", 0.75f))))});
  im.define(node, 0,
            im.create<nn::MulOp>({x, im.create<nn::ReciprocalOp>(divisor)}));
}

} // namespace

void registerNormalizationOps(OnnxOpTable &table) {
  table.add("BatchNormalization", importBatchNorm);
  // dpc has read LayerNormalization at every opset it imports, also
  // before ONNX defined it (17); kept so.
  table.add("LayerNormalization", kMinOpset, kMaxOpset, importLayerNorm);
  table.add("InstanceNormalization", importInstanceNorm);
  table.add("GroupNormalization", importGroupNorm);
  table.add("LRN", importLrn);
}

} // namespace dpc::frontend
