//===- Threshold.cpp - thresholds: Shrink, ThresholdedRelu, their idioms --===//
//
// ONNX's Shrink and ThresholdedRelu, and the exporters' spellings of
// PyTorch's thresholds as a comparison of a tensor with a constant and a
// Where: Hardshrink (Where(|x| <= l, 0, x), Where(x > l or x < -l, x, 0)),
// Threshold (Where(x <= t, v, x)), Softshrink (Where(x > l, x - l, 0) +
// Where(x < -l, x + l, 0), or Where(|x| > l, x - sign(x) l, x * 0)) and
// Softplus with its threshold
// (Where(beta x > t, x, softplus(beta x) / beta)). A comparison is not a
// tensor in nn: it is kept as the set of values where it holds (Or of two
// on the same tensor, a cast to bool, |x| of the tensor included), which
// only Where may read.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace dpc::frontend {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using Interval = ValueSet::Interval;

/// The values outside `set` (sorted, disjoint intervals).
ValueSet complement(const ValueSet &set) {
  ValueSet result{set.subject, {}};
  double lo = -kInf;
  bool loClosed = false;
  for (const Interval &i : set.intervals) {
    if (i.lo > lo || (i.lo == lo && !i.loClosed && loClosed))
      result.intervals.push_back({lo, i.lo, loClosed, !i.loClosed});
    lo = i.hi;
    loClosed = !i.hiClosed;
  }
  if (lo < kInf)
    result.intervals.push_back({lo, kInf, loClosed, false});
  return result;
}

/// The value of `value` if it is a constant scalar (nn.constant of one
/// element, or a product of two: Sub's negated constant), as the shortest
/// decimal of its float.
std::optional<double> constantScalar(Value value) {
  if (auto mul = value.getDefiningOp<nn::MulOp>()) {
    std::optional<double> lhs = constantScalar(mul.getLhs()),
                          rhs = constantScalar(mul.getRhs());
    if (lhs && rhs)
      return *lhs * *rhs;
    return std::nullopt;
  }
  auto constant = value.getDefiningOp<nn::ConstantOp>();
  auto values = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                         : DenseElementsAttr();
  if (!values || values.getNumElements() != 1 ||
      !values.getElementType().isF32())
    return std::nullopt;
  return shortestDecimal(*values.getValues<float>().begin());
}

/// The comparison `node` of a run-time tensor with a known scalar, as the
/// set of the tensor's values where it holds.
void importComparison(Importer &im, const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  // A known scalar, or one computed in nn (the legacy exporter's Neg(l)).
  auto scalar = [&](int i) -> std::optional<double> {
    if (std::optional<double> known = im.knownScalar(node, i))
      return shortestDecimal(static_cast<float>(*known));
    if (im.knownValue(node.input(i)))
      return std::nullopt;
    return constantScalar(im.operand(node, i));
  };
  std::optional<double> lhs = scalar(0), rhs = scalar(1);
  if (lhs.has_value() == rhs.has_value())
    fail("only a comparison of a tensor with a constant scalar is supported");
  // As `tensor OP c`: a constant on the left turns the comparison around.
  bool greater = op == "Greater" || op == "GreaterOrEqual";
  bool closed = op == "GreaterOrEqual" || op == "LessOrEqual";
  if (lhs)
    greater = !greater;
  double c = lhs ? *lhs : *rhs;
  ValueSet set{im.operand(node, lhs ? 1 : 0), {}};
  set.intervals.push_back(greater ? Interval{c, kInf, closed, false}
                                  : Interval{-kInf, c, false, closed});
  im.recordComparison(node.output(0), std::move(set));
}

void importOr(Importer &im, const onnx::NodeProto &node) {
  const ValueSet *a = im.comparison(node.input(0));
  const ValueSet *b = im.comparison(node.input(1));
  if (!a || !b || a->subject != b->subject)
    fail("only Or of two comparisons of the same tensor is supported");
  ValueSet set = *a;
  llvm::append_range(set.intervals, b->intervals);
  llvm::sort(set.intervals,
             [](const Interval &x, const Interval &y) { return x.lo < y.lo; });
  for (size_t i = 1; i < set.intervals.size(); ++i)
    if (set.intervals[i].lo < set.intervals[i - 1].hi)
      fail("only Or of comparisons that do not overlap is supported");
  im.recordComparison(node.output(0), std::move(set));
}

/// `set` of |x| as a set of x, where `set.subject` is nn.abs(x).
ValueSet ofAbsoluteValue(const ValueSet &set, Value x) {
  ValueSet result{x, {}};
  for (const Interval &i : set.intervals) {
    if (i.hi < 0 || (i.hi == 0 && !i.hiClosed))
      continue;
    if (i.lo < 0 || (i.lo == 0 && i.loClosed)) {
      result.intervals.push_back({-i.hi, i.hi, i.hiClosed, i.hiClosed});
      continue;
    }
    result.intervals.push_back({-i.hi, -i.lo, i.hiClosed, i.loClosed});
    result.intervals.push_back({i.lo, i.hi, i.loClosed, i.hiClosed});
  }
  llvm::sort(result.intervals,
             [](const Interval &x, const Interval &y) { return x.lo < y.lo; });
  return result;
}

bool isInterval(const Interval &i, double lo, double hi, bool loClosed,
                bool hiClosed) {
  return i.lo == lo && i.hi == hi && i.loClosed == loClosed &&
         i.hiClosed == hiClosed;
}

NamedAttribute f64(Importer &im, StringRef name, double value) {
  return im.named(name, im.opBuilder().getF64FloatAttr(value));
}

/// The known scalar times which `value` is `input` (nn.mul by a 0-d or
/// one-element constant), if it is such a product.
std::optional<std::pair<Value, double>> scaled(Value value) {
  auto mul = value.getDefiningOp<nn::MulOp>();
  if (!mul)
    return std::nullopt;
  auto constant = mul.getRhs().getDefiningOp<nn::ConstantOp>();
  auto values = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                         : DenseElementsAttr();
  if (!values || values.getNumElements() != 1 ||
      !values.getElementType().isF32())
    return std::nullopt;
  return std::pair(mul.getLhs(), double(*values.getValues<float>().begin()));
}

/// k where `value` is `subject` + k for a constant scalar k.
std::optional<double> shiftOf(Value value, Value subject) {
  auto add = value.getDefiningOp<nn::AddOp>();
  if (!add)
    return std::nullopt;
  if (add.getLhs() == subject)
    return constantScalar(add.getRhs());
  if (add.getRhs() == subject)
    return constantScalar(add.getLhs());
  return std::nullopt;
}

/// Where(beta x > t, x, softplus(beta x) / beta): PyTorch's Softplus as the
/// default exporter writes it (also at beta 1).
bool importSoftplusWhere(Importer &im, const onnx::NodeProto &node,
                         const ValueSet &set) {
  std::optional<std::pair<Value, double>> product = scaled(set.subject);
  if (!product || set.intervals.size() != 1 ||
      !isInterval(set.intervals[0], set.intervals[0].lo, kInf, false, false))
    return false;
  auto [x, beta] = *product;
  if (im.knownValue(node.input(1)) || im.knownValue(node.input(2)) ||
      im.operand(node, 1) != x)
    return false;
  std::optional<std::pair<Value, double>> quotient =
      scaled(im.operand(node, 2));
  auto softplus =
      quotient ? quotient->first.getDefiningOp<nn::SoftplusOp>() : nullptr;
  if (!softplus || softplus.getInput() != set.subject ||
      softplus.getBeta().convertToDouble() != 1.0 ||
      std::fabs(quotient->second * beta - 1) > 1e-6)
    return false;
  im.define(node, 0,
            im.create<nn::SoftplusOp>(
                x, {f64(im, "beta", beta),
                    f64(im, "threshold", set.intervals[0].lo)}));
  return true;
}

/// k where `value` is x + k sign(x), k a product of constant scalars (the
/// dynamo exporter's Softshrink: x - sign(x) l).
std::optional<double> signShiftOf(Value value, Value x) {
  auto add = value.getDefiningOp<nn::AddOp>();
  if (!add || (add.getLhs() != x && add.getRhs() != x))
    return std::nullopt;
  Value term = add.getLhs() == x ? add.getRhs() : add.getLhs();
  double k = 1;
  while (auto mul = term.getDefiningOp<nn::MulOp>()) {
    std::optional<double> lhs = constantScalar(mul.getLhs()),
                          rhs = constantScalar(mul.getRhs());
    if (!lhs && !rhs)
      return std::nullopt;
    k *= rhs ? *rhs : *lhs;
    term = rhs ? mul.getLhs() : mul.getRhs();
  }
  auto sign = term.getDefiningOp<nn::SignOp>();
  if (!sign || sign.getInput() != x)
    return std::nullopt;
  return k;
}

/// Whether `value` is a tensor times the constant 0 (the dynamo exporter's
/// zeros of x's shape, x * 0).
bool isZeroProduct(Value value) {
  auto mul = value.getDefiningOp<nn::MulOp>();
  return mul && (constantScalar(mul.getLhs()) == 0.0 ||
                 constantScalar(mul.getRhs()) == 0.0);
}

/// Where(|s| > l, s - sign(s) l, s * 0): PyTorch's Softshrink as the dynamo
/// exporter writes it; false if `node` is not that.
bool importSignShrinkWhere(Importer &im, const onnx::NodeProto &node,
                           const ValueSet &condition) {
  auto abs = condition.subject.getDefiningOp<nn::AbsOp>();
  if (!abs || im.knownValue(node.input(1)) || im.knownValue(node.input(2)) ||
      !isZeroProduct(im.operand(node, 2)))
    return false;
  Value s = abs.getInput();
  std::optional<double> k = signShiftOf(im.operand(node, 1), s);
  ValueSet onS = ofAbsoluteValue(condition, s);
  const SmallVector<Interval, 2> &keep = onS.intervals;
  if (!k || keep.size() != 2 || keep[0].lo != -kInf || keep[1].hi != kInf ||
      keep[0].hiClosed || keep[1].loClosed || keep[0].hi != -keep[1].lo ||
      keep[1].lo < 0 || *k != -keep[1].lo)
    return false;
  im.define(node, 0,
            im.create<nn::ShrinkOp>(s, {f64(im, "lambd", keep[1].lo),
                                        f64(im, "bias", keep[1].lo)}));
  return true;
}

/// Where(condition, a, b) on a comparison's set: a threshold of x if one
/// of a and b is x and the other a known scalar.
bool importThresholdWhere(Importer &im, const onnx::NodeProto &node) {
  const ValueSet *condition = im.comparison(node.input(0));
  if (!condition)
    return false;
  if (node.input_size() != 3)
    fail("expected 3 inputs");
  if (importSoftplusWhere(im, node, *condition) ||
      importSignShrinkWhere(im, node, *condition))
    return true;
  // `set` holds where the result is x, and elsewhere it is `fill`.
  ValueSet set = *condition;
  std::optional<double> fill = im.knownScalar(node, 2);
  int xInput = 1;
  if (!fill) {
    fill = im.knownScalar(node, 1);
    set = complement(set);
    xInput = 2;
  }
  if (!fill || im.knownValue(node.input(xInput)))
    fail("only Where of a comparison between a tensor and a constant "
         "scalar is supported");
  Value x = im.operand(node, xInput);
  if (set.subject != x)
    if (auto abs = set.subject.getDefiningOp<nn::AbsOp>();
        abs && abs.getInput() == x)
      set = ofAbsoluteValue(set, x);
  // x is the compared tensor plus a constant (the legacy exporter's
  // Softshrink: Where(s > l, s - l, 0) + Where(s < -l, s + l, 0)): the set
  // moves with it.
  if (std::optional<double> shift = shiftOf(x, set.subject)) {
    for (Interval &i : set.intervals) {
      i.lo += *shift;
      i.hi += *shift;
    }
    set.subject = x;
  }
  const SmallVector<Interval, 2> &keep = set.intervals;
  if (set.subject == x && keep.size() == 1 && keep[0].hi == kInf &&
      !keep[0].loClosed) {
    // x > t ? x : fill: PyTorch's Threshold.
    im.define(node, 0,
              im.create<nn::ThresholdOp>(x, {f64(im, "threshold", keep[0].lo),
                                             f64(im, "value", *fill)}));
    return true;
  }
  if (set.subject == x && keep.size() == 1 && keep[0].lo == -kInf &&
      !keep[0].hiClosed) {
    // x < t ? x : fill, as -(-x > -t ? -x : -fill) (0 - v: no -0).
    Value threshold = im.create<nn::ThresholdOp>(
        im.createNegation(x), {f64(im, "threshold", 0.0 - keep[0].hi),
                               f64(im, "value", 0.0 - *fill)});
    im.define(node, 0, im.createNegation(threshold));
    return true;
  }
  if (set.subject == x && keep.size() == 2 && *fill == 0 &&
      keep[0].lo == -kInf && keep[1].hi == kInf && !keep[0].hiClosed &&
      !keep[1].loClosed && keep[0].hi == -keep[1].lo && keep[1].lo >= 0) {
    // |x| > l ? x : 0: PyTorch's Hardshrink.
    im.define(node, 0,
              im.create<nn::ShrinkOp>(
                  x, {f64(im, "lambd", keep[1].lo), f64(im, "bias", 0)}));
    return true;
  }
  fail("only Where(x > t, x + k, v), Where(x < t, x + k, v) (Threshold, "
       "Softshrink) and Where(|x| > l, x, 0) (Hardshrink) of a comparison "
       "are supported");
}

void importShrink(Importer &im, const onnx::NodeProto &node) {
  float lambd = floatAttr(node, "lambd", 0.5f);
  if (lambd < 0)
    fail("lambd must not be negative");
  im.define(
      node, 0,
      im.create<nn::ShrinkOp>(
          im.operand(node, 0),
          {f64(im, "lambd", shortestDecimal(lambd)),
           f64(im, "bias", shortestDecimal(floatAttr(node, "bias", 0)))}));
}

void importThresholdedRelu(Importer &im, const onnx::NodeProto &node) {
  im.define(
      node, 0,
      im.create<nn::ThresholdOp>(
          im.operand(node, 0),
          {f64(im, "threshold", shortestDecimal(floatAttr(node, "alpha", 1.f))),
           f64(im, "value", 0)}));
}

void importWhere(Importer &im, const onnx::NodeProto &node) {
  if (!importThresholdWhere(im, node) && !im.importNanGuard(node))
    im.importWhere(node);
}

} // namespace

void registerThresholdOps(OnnxOpTable &table) {
  for (const char *op : {"Greater", "Less", "GreaterOrEqual", "LessOrEqual"})
    table.add(op, importComparison);
  table.add("Or", importOr);
  table.add("Shrink", importShrink);
  table.add("ThresholdedRelu", importThresholdedRelu);
  table.add("Where", importWhere);
}

} // namespace dpc::frontend
