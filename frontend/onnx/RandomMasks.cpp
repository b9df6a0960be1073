//===- RandomMasks.cpp - dropout written out with random ops --------------===//
//
// PyTorch 2's exporter writes training-mode dropout as random ops: a fill
// of the mask's shape (the batch in dim 0), uniform noise of it, a
// comparison with the keep probability (the Bernoulli draw m), then
// arithmetic on m, and a product with the tensor it drops from. dpc draws
// its own masks (nn.dropout's counter-based Philox), so it follows m as an
// affine function scale m + offset of the draw:
// - Dropout and stochastic depth: x (m / keep), one draw per element or
//   per row;
// - Dropout1d/2d/3d: the mask [N, C, 1, ...], one draw per channel, its
//   plane the dropout's span;
// - AlphaDropout and FeatureAlphaDropout: x (a m) + (m - 1) b + c, i.e.
//   kept elements a x + c, dropped ones c - b: the product, then the sum
//   with an affine function of the same draw (one nn.dropout with a scale,
//   shift and fill);
// - RReLU (the legacy exporter's): PRelu of x with RandomUniformLike(x) as
//   its slope, one nn.random_scale of x's negative part.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"

#include "ir/nn/NNOps.h"

#include <cmath>

using namespace mlir;

namespace dpc::frontend {

bool Importer::importMaskFill(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  const KnownTensor *shape = knownValue(node.input(op == "Expand" ? 1 : 0));
  if (!shape || !shape->hasBatch() || shape->isFloat() || shape->ints.empty() ||
      shape->ints[0] != kBatch)
    return false;
  RandomMask mask{RandomMask::Fill, {}};
  mask.shape.assign(shape->ints.begin(), shape->ints.end());
  // What one sample holds: the op at a batch of 1.
  KnownTensor perSample;
  perSample.type = onnx::TensorProto::INT64;
  perSample.dims = {static_cast<int64_t>(mask.shape.size())};
  perSample.ints.assign(mask.shape.begin(), mask.shape.end());
  perSample.ints[0] = 1;
  std::vector<const KnownTensor *> inputs = {&perSample};
  if (op == "Expand")
    inputs = {knownValue(node.input(0)), &perSample};
  try {
    if (auto folded = frontend::foldNode(node, inputs, opset, 0))
      mask.repeated = std::move(folded->front());
  } catch (frontend::FoldError &) {
    // Not foldable per sample: only a random mask may read it.
  }
  randomMasks[node.output(0)] = std::move(mask);
  return true;
}

/// How many consecutive elements of a row of `type` share one draw of a
/// mask of `shape` ([N, C, 1, 1] on [N, C, H, W]: a plane), or nullopt
/// where the mask is not the tensor's leading dims followed by ones.
static std::optional<int64_t> maskSpan(ArrayRef<int64_t> shape,
                                       RankedTensorType type) {
  if (type.getRank() != int64_t(shape.size()) || shape.empty())
    return std::nullopt;
  size_t ones = shape.size();
  while (ones > 1 && shape[ones - 1] == 1)
    --ones;
  int64_t span = 1;
  for (size_t i = 1; i < shape.size(); ++i) {
    int64_t dim = type.getDimSize(i);
    if (i < ones && shape[i] != dim)
      return std::nullopt;
    if (i >= ones)
      span *= dim;
  }
  return span;
}

Value Importer::applyRandomMask(const RandomMask &mask, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  std::optional<int64_t> span = maskSpan(mask.shape, type);
  if (!span || ShapedType::isDynamic(*span))
    fail("a dropout mask must have the shape of the tensor it scales, or "
         "its leading dims and ones (one value per row or per channel)");
  if (mask.offset != 0 || mask.scale == 0)
    fail("a random mask plus a constant scales a tensor: not a dropout");
  // Rows kept with probability keep: ratio 1 - keep, both as the float
  // decimals the exporter wrote (0.8 gives 0.2, as Dropout's ratio would).
  double keep = shortestDecimal(static_cast<float>(mask.keep));
  double ratio = shortestDecimal(static_cast<float>(1.0 - keep));
  int64_t row = 1;
  for (int64_t d : type.getShape().drop_front())
    row *= d;
  bool rowwise = *span == row && *span > 1 &&
                 llvm::all_of(ArrayRef(mask.shape).drop_front(),
                              [](int64_t d) { return d == 1; });
  SmallVector<NamedAttribute> attrs;
  if (!rowwise && *span > 1)
    attrs.push_back(named("span", builder.getI64IntegerAttr(*span)));
  // A mask divided by its keep probability is dropout's: the kernel's
  // default scale 1 / (1 - ratio).
  if (float(1.0 / mask.scale) != float(mask.keep))
    attrs.push_back(named("scale", builder.getF64FloatAttr(mask.scale)));
  // One draw, one key: every product with it drops the same elements.
  auto key = maskKeys.find(mask.draw);
  std::optional<int64_t> known;
  if (key != maskKeys.end())
    known = key->second;
  Value dropout = createDropout(input, ratio, rowwise, attrs, known);
  maskKeys[mask.draw] = cast<nn::DropoutOp>(dropout.getDefiningOp()).getKey();
  return dropout;
}

std::optional<Value> Importer::addToDropout(Value dropped,
                                            const RandomMask &mask) {
  auto op = dropped.getDefiningOp<nn::DropoutOp>();
  auto key = maskKeys.find(mask.draw);
  if (!op || key == maskKeys.end() ||
      static_cast<int64_t>(op.getKey()) != key->second)
    return std::nullopt;
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : op->getAttrs())
    if (attr.getName() != "shift" && attr.getName() != "fill")
      attrs.push_back(attr);
  double shift = op.getShift().convertToDouble() + mask.scale + mask.offset;
  double fill = op.getFill().convertToDouble() + mask.offset;
  attrs.push_back(named("shift", builder.getF64FloatAttr(shift)));
  attrs.push_back(named("fill", builder.getF64FloatAttr(fill)));
  return create<nn::DropoutOp>(op.getInput(), attrs);
}

Value Importer::createRandomLeakyRelu(const RandomMask &slopes) {
  // relu(x) + slope (x - relu(x)), as PRelu (ops/Activation.cpp), with a
  // random slope per element: PyTorch's RReLU, also its gradient at 0.
  Value x = lookup(slopes.like);
  Value relu = create<nn::ReluOp>(x);
  Value negativePart = create<nn::AddOp>({x, createNegation(relu)});
  Value scaled = create<nn::RandomScaleOp>(
      negativePart, {named("low", builder.getF64FloatAttr(slopes.low)),
                     named("high", builder.getF64FloatAttr(slopes.high)),
                     named("key", builder.getI64IntegerAttr(numDropouts++))});
  return create<nn::AddOp>({relu, scaled});
}

bool Importer::importRandomMask(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  auto maskOf = [&](int i) -> RandomMask * {
    if (i >= node.input_size())
      return nullptr;
    auto it = randomMasks.find(node.input(i));
    return it == randomMasks.end() ? nullptr : &it->second;
  };
  auto scalar = [&](int i) { return knownScalar(node, i); };
  auto define = [&](RandomMask mask) {
    randomMasks[node.output(0)] = std::move(mask);
    return true;
  };
  if ((op == "ConstantOfShape" && node.input_size() >= 1) ||
      (op == "Expand" && node.input_size() >= 2 && knownValue(node.input(0))))
    return importMaskFill(node);
  if (op == "Cast" || op == "CastLike") {
    RandomMask *mask = maskOf(0);
    // Known values repeated per sample are cast as values (foldNode).
    if (mask && mask->stage == RandomMask::Fill && mask->repeated)
      return false;
    return mask && define(*mask);
  }
  if (op == "RandomUniformLike") {
    RandomMask *mask = maskOf(0);
    if (!mask && values.count(node.input(0))) {
      RandomMask slopes{RandomMask::Slopes, {}};
      slopes.low = floatAttr(node, "low", 0.f);
      slopes.high = floatAttr(node, "high", 1.f);
      slopes.like = node.input(0);
      return define(std::move(slopes));
    }
    if (!mask || mask->stage != RandomMask::Fill)
      return false;
    if (floatAttr(node, "low", 0.f) != 0.f ||
        floatAttr(node, "high", 1.f) != 1.f)
      fail("only uniform noise over [0, 1) can make a dropout mask");
    return define({RandomMask::Uniform, mask->shape});
  }
  if (op == "Less") {
    RandomMask *mask = maskOf(0);
    std::optional<double> keep = scalar(1);
    if (!mask || mask->stage != RandomMask::Uniform)
      return false;
    if (!keep)
      fail("a dropout mask compares its noise with a constant probability");
    RandomMask draw{RandomMask::Bernoulli, mask->shape, *keep};
    draw.draw = node.output(0);
    return define(std::move(draw));
  }
  if (op == "PRelu" && maskOf(1) && maskOf(1)->stage == RandomMask::Slopes &&
      maskOf(1)->like == node.input(0)) {
    Importer::define(node, 0, createRandomLeakyRelu(*maskOf(1)));
    return true;
  }
  if (node.input_size() != 2)
    return false;
  int m = maskOf(0) ? 0 : maskOf(1) ? 1 : -1;
  if (m < 0)
    return false;
  RandomMask mask = *maskOf(m);
  // A fill of known values (LSTMCell's zero state) scales as a value.
  if (mask.stage == RandomMask::Fill && mask.repeated)
    return false;
  if (mask.stage != RandomMask::Bernoulli) {
    if (op == "Mul")
      fail("a random mask must be (noise < keep) / keep before it scales a "
           "tensor");
    return false;
  }
  std::optional<double> constant = scalar(1 - m);
  if (constant && (op == "Mul" || (op == "Div" && m == 0))) {
    double factor = op == "Mul" ? *constant : 1.0 / *constant;
    mask.scale *= factor;
    mask.offset *= factor;
    return define(std::move(mask));
  }
  if (constant && (op == "Add" || op == "Sub")) {
    double sign = op == "Sub" && m == 1 ? -1 : 1;
    mask.scale *= sign;
    mask.offset =
        sign * mask.offset + (op == "Sub" && m == 0 ? -*constant : *constant);
    return define(std::move(mask));
  }
  if (op == "Mul") {
    Importer::define(node, 0, applyRandomMask(mask, operand(node, 1 - m)));
    return true;
  }
  if (op == "Add") {
    if (std::optional<Value> sum = addToDropout(operand(node, 1 - m), mask)) {
      Importer::define(node, 0, *sum);
      return true;
    }
  }
  return false;
}

} // namespace dpc::frontend
