//===- Resampling.cpp - padding, pixel shuffles and resizing --------------===//
//
// Pad in every mode, DepthToSpace/SpaceToDepth (PixelShuffle/Unshuffle) and
// Resize (Upsample), as ops dpc already differentiates:
//  - constant padding is nn.pad, which pads the two trailing dims of a 4-D
//    tensor: any other padded dim is padded alone through a view of it as
//    [outer, 1, dim, inner];
//  - reflect, edge and wrap padding concatenate slices of the input (a
//    split): padding is separable, so axis by axis equals PyTorch's;
//  - a pixel shuffle is a reshape, a transpose and a reshape;
//  - a resize is linear in its input along each axis: y = M x with a
//    constant [out, in] matrix per resized axis, built here from ONNX's
//    coordinate transformation and the mode's weights (nearest: one 1 per
//    row; linear: two; cubic: four), applied as a matmul on the trailing
//    dim. So every mode's
//    gradient is M's transpose, with no kernel of its own; the cost is
//    O(in) per output element, fine for the decoder sizes of a U-Net.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

#include <cmath>
#include <set>

using namespace mlir;

namespace dpc::frontend {
namespace {

int64_t productOf(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (ShapedType::isDynamic(d))
      return ShapedType::kDynamic;
    n *= d;
  }
  return n;
}

/// nn.pad of dim `axis` alone, through a view as [outer, 1, dim, inner].
Value padOneAxis(Importer &im, Value input, int64_t axis, int64_t low,
                 int64_t high, FloatAttr value) {
  auto type = cast<RankedTensorType>(input.getType());
  ArrayRef<int64_t> shape = type.getShape();
  if (ShapedType::isDynamic(shape[axis]) ||
      ShapedType::isDynamic(productOf(shape.drop_front(axis + 1))))
    fail("the batch dim cannot be padded");
  Value view = im.createReshape(input, {productOf(shape.take_front(axis)), 1,
                                        shape[axis],
                                        productOf(shape.drop_front(axis + 1))});
  Value padded = im.create<nn::PadOp>(
      view, {im.i64Array("low", SmallVector<int64_t>{0, 0, low, 0}),
             im.i64Array("high", SmallVector<int64_t>{0, 0, high, 0}),
             im.named("value", value)});
  SmallVector<int64_t> result(shape);
  result[axis] += low + high;
  return im.createReshape(padded, result);
}

Value padConstant(Importer &im, Value input, ArrayRef<int64_t> low,
                  ArrayRef<int64_t> high, double value) {
  FloatAttr fill = im.opBuilder().getF64FloatAttr(value);
  int64_t rank = static_cast<int64_t>(low.size());
  auto padded = [&](int64_t d) { return low[d] != 0 || high[d] != 0; };
  // The kernel's own form: a 4-D tensor padded on H and W, in one call.
  if (rank == 4 && !padded(0) && !padded(1))
    return im.create<nn::PadOp>(input, {im.i64Array("low", low),
                                        im.i64Array("high", high),
                                        im.named("value", fill)});
  for (int64_t d = 0; d < rank; ++d)
    if (padded(d))
      input = padOneAxis(im, input, d, low[d], high[d], fill);
  return input;
}

/// `input` padded on `axis` by reflecting, repeating the edge or wrapping
/// around: a concatenation of unit (or wrapped) slices and the input.
Value padByCopies(Importer &im, Value input, int64_t axis, int64_t low,
                  int64_t high, StringRef mode) {
  int64_t n = cast<RankedTensorType>(input.getType()).getDimSize(axis);
  if (ShapedType::isDynamic(n))
    fail("the batch dim cannot be padded");
  int64_t limit = mode == "reflect" ? n - 1 : mode == "wrap" ? n : INT64_MAX;
  if (low > limit || high > limit) {
    int64_t pad = std::max(low, high);
    fail("'" + mode.str() + "' padding of " + std::to_string(pad) +
         " needs dim " + std::to_string(axis) + " to have at least " +
         std::to_string(mode == "reflect" ? pad + 1 : pad) +
         " elements; it has " + std::to_string(n));
  }
  // The source index of each padded position, before and after.
  SmallVector<int64_t> before, after;
  for (int64_t i = low; i > 0; --i)
    before.push_back(mode == "reflect" ? i : mode == "edge" ? 0 : n - i);
  for (int64_t i = 1; i <= high; ++i)
    after.push_back(mode == "reflect" ? n - 1 - i
                    : mode == "edge"  ? n - 1
                                      : i - 1);
  // Cut the input at every source index's bounds; each is then one piece.
  std::set<int64_t> cuts = {0, n};
  for (int64_t i : llvm::concat<int64_t>(before, after)) {
    cuts.insert(i);
    cuts.insert(i + 1);
  }
  SmallVector<int64_t> starts(cuts.begin(), cuts.end()), sizes;
  for (size_t i = 0; i + 1 < starts.size(); ++i)
    sizes.push_back(starts[i + 1] - starts[i]);
  SmallVector<Value> pieces = sizes.size() == 1
                                  ? SmallVector<Value>{input}
                                  : im.createSplit(input, axis, sizes);
  auto piece = [&](int64_t i) {
    return pieces[llvm::lower_bound(starts, i) - starts.begin()];
  };
  SmallVector<Value> parts;
  for (int64_t i : before)
    parts.push_back(piece(i));
  parts.push_back(input);
  for (int64_t i : after)
    parts.push_back(piece(i));
  return im.create<nn::ConcatOp>(
      parts, {im.named("axis", im.opBuilder().getI64IntegerAttr(axis))});
}

void importPad(Importer &im, const onnx::NodeProto &node) {
  std::string mode = stringAttr(node, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    fail("mode '" + mode + "' is not one of constant, reflect, edge, wrap");
  Value input = im.operand(node, 0);
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  SmallVector<int64_t> pads = im.constantInts(node, 1);
  // From opset 18 an `axes` input says which dims `pads` covers.
  SmallVector<int64_t> axes;
  if (node.input_size() > 3 && !node.input(3).empty())
    axes = normalizeAxes(im.constantInts(node, 3), rank);
  else
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  int64_t covered = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * covered)
    fail("pads must have " + std::to_string(2 * covered) + " entries, got " +
         std::to_string(pads.size()));
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (int64_t i = 0; i < covered; ++i) {
    low[axes[i]] = pads[i];
    high[axes[i]] = pads[covered + i];
  }
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    fail("negative pads (cropping) are not supported");
  if (mode != "constant") {
    for (int64_t d = 0; d < rank; ++d)
      if (low[d] != 0 || high[d] != 0)
        input = padByCopies(im, input, d, low[d], high[d], mode);
    return im.define(node, 0, input);
  }
  double value = 0.0;
  if (node.input_size() > 2 && !node.input(2).empty()) {
    const onnx::TensorProto *tensor = im.constantTensor(node.input(2));
    if (!tensor)
      fail("constant_value must be a constant");
    DenseElementsAttr attr = im.toElementsAttr(*tensor);
    if (attr.getNumElements() != 1 || !isa<FloatType>(attr.getElementType()))
      fail("constant_value must be one floating-point value");
    value = (*attr.getValues<APFloat>().begin()).convertToDouble();
  }
  im.define(node, 0, padConstant(im, input, low, high, value));
}

/// DepthToSpace (mode DCR or CRD: PixelShuffle) and SpaceToDepth
/// (PixelUnshuffle's inverse layout is DCR's) as reshape-transpose-reshape.
void importDepthSpace(Importer &im, const onnx::NodeProto &node, bool toSpace) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  int64_t b = intAttr(node, "blocksize", 0);
  if (type.getRank() != 4 || b < 1)
    fail("needs a 4-D [N, C, H, W] input and a positive blocksize");
  int64_t n = type.getDimSize(0), c = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  SmallVector<int64_t> split, perm, result;
  if (toSpace) {
    if (c % (b * b) != 0)
      fail("blocksize " + std::to_string(b) + " squared does not divide the " +
           std::to_string(c) + " channels");
    std::string mode = stringAttr(node, "mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      fail("mode '" + mode + "' is not DCR or CRD");
    if (mode == "DCR") {
      split = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else {
      split = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    }
    result = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0)
      fail("blocksize " + std::to_string(b) + " does not divide the plane " +
           std::to_string(h) + "x" + std::to_string(w));
    split = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    result = {n, c * b * b, h / b, w / b};
  }
  Value moved = im.create<nn::TransposeOp>(im.createReshape(input, split),
                                           {im.i64Array("permutation", perm)});
  im.define(node, 0, im.createReshape(moved, result));
}

/// Input `i` of `node` as numbers, if it is given (non-empty) and known.
std::optional<SmallVector<double>>
knownNumbers(Importer &im, const onnx::NodeProto &node, int i) {
  if (node.input_size() <= i || node.input(i).empty())
    return std::nullopt;
  if (const KnownTensor *known = im.knownValue(node.input(i))) {
    if (known->isFloat())
      return SmallVector<double>(known->floats.begin(), known->floats.end());
    return SmallVector<double>(known->ints.begin(), known->ints.end());
  }
  const onnx::TensorProto *tensor = im.constantTensor(node.input(i));
  if (!tensor)
    fail("input " + std::to_string(i) + " ('" + node.input(i) +
         "') must be a constant");
  DenseElementsAttr attr = im.toElementsAttr(*tensor);
  SmallVector<double> values;
  if (isa<FloatType>(attr.getElementType()))
    for (const APFloat &v : attr.getValues<APFloat>())
      values.push_back(v.convertToDouble());
  else
    for (const APInt &v : attr.getValues<APInt>())
      values.push_back(static_cast<double>(v.getSExtValue()));
  if (values.empty())
    return std::nullopt; // an empty tensor stands for "not given"
  return values;
}

/// How Resize maps an output coordinate to the input's, and what it reads.
struct ResizeRule {
  std::string mode, transform, nearest;
  double cubicA;
};

/// The input coordinate of output index `x` (ONNX's transformation modes).
double sourceCoordinate(const ResizeRule &rule, int64_t x, int64_t in,
                        int64_t out, double scale) {
  if (rule.transform == "align_corners")
    return out == 1 ? 0.0 : double(x) * double(in - 1) / double(out - 1);
  if (rule.transform == "asymmetric")
    return double(x) / scale;
  if (rule.transform == "pytorch_half_pixel")
    return out > 1 ? (double(x) + 0.5) / scale - 0.5 : 0.0;
  if (rule.transform == "half_pixel")
    return (double(x) + 0.5) / scale - 0.5;
  fail("coordinate_transformation_mode '" + rule.transform +
       "' is not supported (half_pixel, pytorch_half_pixel, align_corners, "
       "asymmetric are)");
}

int64_t nearestIndex(const ResizeRule &rule, double x) {
  double floor = std::floor(x);
  if (rule.nearest == "floor")
    return int64_t(floor);
  if (rule.nearest == "ceil")
    return int64_t(std::ceil(x));
  if (x - floor == 0.5)
    return int64_t(rule.nearest == "round_prefer_ceil" ? floor + 1 : floor);
  if (rule.nearest == "round_prefer_floor" ||
      rule.nearest == "round_prefer_ceil")
    return int64_t(std::round(x));
  fail("nearest_mode '" + rule.nearest + "' is not supported");
}

/// The [in, out] matrix (M's transpose) of one axis: column j holds output
/// j's weights over the input.
SmallVector<float> resizeMatrix(const ResizeRule &rule, int64_t in, int64_t out,
                                double scale) {
  SmallVector<float> weights(in * out, 0.f);
  auto add = [&](int64_t source, int64_t j, double weight) {
    source = std::clamp<int64_t>(source, 0, in - 1);
    weights[source * out + j] += static_cast<float>(weight);
  };
  for (int64_t j = 0; j < out; ++j) {
    double x = sourceCoordinate(rule, j, in, out, scale);
    if (rule.mode == "nearest") {
      add(nearestIndex(rule, x), j, 1.0);
      continue;
    }
    if (rule.mode == "cubic") {
      // Keys' cubic convolution on the 4 nearest inputs, edges repeated
      // (ONNX with exclude_outside 0, PyTorch's bicubic).
      double a = rule.cubicA, floor = std::floor(x), t = x - floor;
      auto near = [&](double s) { // |s| <= 1
        return ((a + 2) * s - (a + 3)) * s * s + 1;
      };
      auto far = [&](double s) { // 1 < |s| < 2
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
      };
      double weights[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
      for (int k = 0; k < 4; ++k)
        add(int64_t(floor) - 1 + k, j, weights[k]);
      continue;
    }
    // Linear, as PyTorch's bilinear: below 0 reads the first element only.
    x = std::clamp(x, 0.0, double(in - 1));
    int64_t low = int64_t(std::floor(x));
    double lambda = x - double(low);
    add(low, j, 1.0 - lambda);
    if (lambda != 0.0)
      add(low + 1, j, lambda);
  }
  return weights;
}

void importResize(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  ResizeRule rule{stringAttr(node, "mode", "nearest"),
                  stringAttr(node, "coordinate_transformation_mode",
                             im.getOpset() < 11 ? "asymmetric" : "half_pixel"),
                  stringAttr(node, "nearest_mode", "round_prefer_floor"),
                  floatAttr(node, "cubic_coeff_a", -0.75f)};
  if (rule.mode != "nearest" && rule.mode != "linear" && rule.mode != "cubic")
    fail("mode '" + rule.mode + "' is not nearest, linear or cubic");
  if (intAttr(node, "exclude_outside", 0) != 0)
    fail("exclude_outside is not supported");
  if (intAttr(node, "antialias", 0) != 0)
    fail("antialias is not supported");
  if (!intsAttr(node, "axes", {}).empty())
    fail("the axes attribute is not supported");
  // Resize-10 and Upsample: (X, scales); from 11: (X, roi, scales, sizes).
  bool early = node.op_type() == "Upsample" || im.getOpset() < 11;
  std::optional<SmallVector<double>> scales =
      knownNumbers(im, node, early ? 1 : 2);
  std::optional<SmallVector<double>> sizes =
      early ? std::nullopt : knownNumbers(im, node, 3);
  if (!scales && !sizes)
    fail("needs constant scales or sizes");
  SmallVector<double> &given = sizes ? *sizes : *scales;
  if (static_cast<int64_t>(given.size()) != rank)
    fail(std::string(sizes ? "sizes" : "scales") + " must have " +
         std::to_string(rank) + " entries, got " +
         std::to_string(given.size()));
  Value result = input;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = type.getDimSize(d);
    // Sizes name the batch the model was exported with: dim 0 keeps ours.
    if (sizes && d == 0)
      continue;
    int64_t out =
        sizes ? int64_t(given[d]) : int64_t(std::floor(double(in) * given[d]));
    double scale = sizes ? double(out) / double(in) : given[d];
    if (out == in && scale == 1.0)
      continue;
    if (d < 2 || ShapedType::isDynamic(in))
      fail("only the spatial dims (2 on) can be resized");
    if (out < 1)
      fail("dim " + std::to_string(d) + " would be resized to " +
           std::to_string(out));
    // The resized axis goes last, is multiplied by [in, out], comes back.
    SmallVector<int64_t> perm;
    for (int64_t i = 0; i < rank; ++i)
      if (i != d)
        perm.push_back(i);
    perm.push_back(d);
    bool moves = d != rank - 1;
    if (moves)
      result = im.create<nn::TransposeOp>(result,
                                          {im.i64Array("permutation", perm)});
    auto matrixType = RankedTensorType::get({in, out}, type.getElementType());
    Value matrix = im.create<nn::ConstantOp>(
        {},
        {im.named("value", DenseElementsAttr::get(
                               matrixType,
                               ArrayRef(resizeMatrix(rule, in, out, scale))))});
    result = im.create<nn::MatmulOp>({result, matrix});
    if (moves) {
      SmallVector<int64_t> back(rank);
      for (int64_t i = 0; i < rank; ++i)
        back[perm[i]] = i;
      result = im.create<nn::TransposeOp>(result,
                                          {im.i64Array("permutation", back)});
    }
  }
  im.define(node, 0, result);
}

} // namespace

void registerResamplingOps(OnnxOpTable &table) {
  table.add("Pad", importPad);
  table.add("DepthToSpace", [](Importer &im, const onnx::NodeProto &node) {
    importDepthSpace(im, node, /*toSpace=*/true);
  });
  table.add("SpaceToDepth", [](Importer &im, const onnx::NodeProto &node) {
    importDepthSpace(im, node, /*toSpace=*/false);
  });
  table.add("Resize", importResize);
  table.add("Upsample", importResize);
}

} // namespace dpc::frontend
