//===- FoldValueOps.cpp - folding ops that compute new values -------------===//
//
// Trilu, ConstantOfShape, Range, the element-wise arithmetic, math and
// comparisons on known tensors and Max and Min of them, with the arithmetic
// that keeps the symbolic batch a known multiple of it.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/FoldOps.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace dpc::frontend::folding {

/// torch.tril / triu of a known matrix (the legacy exporter's causal mask in
/// scaled_dot_product_attention): the elements off the kept triangle of the
/// last two dims, shifted by k diagonals, become 0.
KnownTensor trilu(const onnx::NodeProto &node, const Inputs &inputs) {
  KnownTensor out = input(inputs, 0);
  if (out.hasBatch())
    fail("the matrix depends on the batch size");
  if (out.dims.size() < 2)
    fail("Trilu takes a tensor of rank 2 or more");
  int64_t k = 0;
  if (inputs.size() > 1 && inputs[1]) {
    std::vector<int64_t> diagonal = staticInts(*inputs[1], "the diagonal");
    if (diagonal.size() != 1)
      fail("the diagonal k must be one integer");
    k = diagonal[0];
  }
  bool upper = intAttr(node, "upper", 1) != 0;
  int64_t rows = out.dims[out.dims.size() - 2], cols = out.dims.back();
  for (int64_t i = 0; i < out.getNumElements(); ++i) {
    int64_t col = i % cols, row = i / cols % rows;
    if (upper ? col - row >= k : col - row <= k)
      continue;
    if (out.isFloat())
      out.floats[i] = 0;
    else
      out.ints[i] = 0;
  }
  return out;
}

/// The one element of ConstantOfShape's `value`, in raw data (one byte for
/// a bool, as the legacy exporter writes a mask's all-true start) or its
/// typed field.
static double fillValue(const onnx::TensorProto &t) {
  auto rawAs = [&](auto sample) {
    using T = decltype(sample);
    const std::string &raw = t.raw_data();
    if (raw.size() < sizeof(T))
      fail("ConstantOfShape's value holds no element");
    std::memcpy(&sample, raw.data(), sizeof(T));
    return static_cast<double>(sample);
  };
  if (t.has_raw_data()) {
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      return rawAs(float());
    case onnx::TensorProto::DOUBLE:
      return rawAs(double());
    case onnx::TensorProto::INT64:
      return rawAs(int64_t());
    case onnx::TensorProto::INT32:
      return rawAs(int32_t());
    case onnx::TensorProto::BOOL:
      return rawAs(uint8_t());
    default:
      fail("ConstantOfShape's value has element type " +
           std::to_string(t.data_type()) + ", which dpc does not fold");
    }
  }
  if (t.float_data_size())
    return t.float_data(0);
  if (t.double_data_size())
    return t.double_data(0);
  if (t.int64_data_size())
    return static_cast<double>(t.int64_data(0));
  if (t.int32_data_size()) // also bools
    return t.int32_data(0);
  fail("ConstantOfShape's value holds no element");
}

KnownTensor constantOfShape(const onnx::NodeProto &node,
                            const std::vector<int64_t> &shape) {
  KnownTensor out;
  out.type = onnx::TensorProto::FLOAT;
  out.dims = shape;
  double value = 0;
  if (const onnx::AttributeProto *a = findAttr(node, "value")) {
    out.type = a->t().data_type();
    value = fillValue(a->t());
  }
  int64_t n = product(shape);
  if (out.isFloat())
    out.floats.assign(n, value);
  else
    out.ints.assign(n, static_cast<int64_t>(value));
  return out;
}

KnownTensor range(const Inputs &inputs) {
  const KnownTensor &start = input(inputs, 0), &limit = input(inputs, 1),
                    &delta = input(inputs, 2);
  KnownTensor out;
  out.type = start.type;
  auto scalar = [](const KnownTensor &t) {
    if (t.getNumElements() != 1)
      fail("Range takes scalars");
    return t.isFloat() ? t.floats[0]
                       : static_cast<double>(staticInts(t, "Range bounds")[0]);
  };
  double s = scalar(start), l = scalar(limit), d = scalar(delta);
  if (d == 0)
    fail("Range's delta is 0");
  int64_t n =
      std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
  if (n > (1 << 24))
    fail("Range of " + std::to_string(n) + " elements");
  for (int64_t i = 0; i < n; ++i) {
    if (out.isFloat())
      out.floats.push_back(s + i * d);
    else
      out.ints.push_back(static_cast<int64_t>(s) + i * static_cast<int64_t>(d));
  }
  out.dims = {n};
  return out;
}

namespace {

/// `op` on integers of which one or more is a multiple of the batch: what
/// keeps the result a known multiple of it (or a constant) and nothing else.
int64_t batchArithmetic(const std::string &op, int64_t a, int64_t b) {
  bool batchA = isBatchMultiple(a), batchB = isBatchMultiple(b);
  auto refuse = [&]() -> int64_t {
    fail(op + " on the batch size is not supported: dpc keeps the batch "
              "open until run time and follows only multiples of it");
  };
  if (op == "Mul" && batchA != batchB) {
    int64_t k = batchMultipleOf(batchA ? a : b), c = batchA ? b : a;
    if (c < 1 || c >= kMaxBatchMultiple / k)
      return refuse();
    return batchTimes(k * c);
  }
  if (op == "Div" && batchA && !batchB) {
    int64_t k = batchMultipleOf(a);
    if (b < 1 || k % b != 0)
      return refuse();
    return batchTimes(k / b);
  }
  if (op == "Equal") {
    // The batch is positive: it equals no constant below 1.
    if (batchA && batchB)
      return a == b;
    if ((batchA ? b : a) < 1)
      return 0;
  }
  return refuse();
}

} // namespace

/// Element-wise Add/Sub/Mul/Div/Equal/Where on broadcast known tensors.
KnownTensor elementwise(const std::string &op, const Inputs &inputs) {
  std::vector<const KnownTensor *> operands;
  for (size_t i = 0; i < inputs.size(); ++i)
    operands.push_back(&input(inputs, i));
  bool symbolic = false;
  for (const KnownTensor *t : operands)
    symbolic = symbolic || t->hasBatch();
  if (symbolic && op == "Where" && operands[0]->hasBatch())
    fail("Where's condition depends on the batch size");
  std::vector<int64_t> dims = broadcastDims(operands);
  const KnownTensor &lhs = op == "Where" ? *operands[1] : *operands[0];
  KnownTensor out;
  bool compares = op == "Equal" || op == "Less" || op == "Greater" ||
                  op == "LessOrEqual" || op == "GreaterOrEqual" ||
                  op == "And" || op == "Or";
  out.type = compares ? onnx::TensorProto::BOOL : lhs.type;
  out.dims = dims;
  auto value = [&](size_t k, int64_t i) {
    const KnownTensor &t = *operands[k];
    int64_t j = broadcastSource(t, dims, i);
    return t.isFloat() ? t.floats[j] : static_cast<double>(t.ints[j]);
  };
  auto raw = [&](size_t k, int64_t i) {
    const KnownTensor &t = *operands[k];
    if (t.isFloat())
      fail(op + " mixes the batch size with floating-point values");
    return t.ints[broadcastSource(t, dims, i)];
  };
  for (int64_t i = 0; i < product(dims); ++i) {
    if (symbolic) {
      int64_t a = raw(op == "Where" ? 1 : 0, i),
              b = raw(op == "Where" ? 2 : 1, i);
      if (op == "Where") {
        out.ints.push_back(raw(0, i) != 0 ? a : b);
        continue;
      }
      if (isBatchMultiple(a) || isBatchMultiple(b)) {
        out.ints.push_back(batchArithmetic(op, a, b));
        continue;
      }
    }
    double r;
    if (op == "Where") {
      r = value(0, i) != 0 ? value(1, i) : value(2, i);
    } else {
      double a = value(0, i), b = value(1, i);
      if (op == "Add")
        r = a + b;
      else if (op == "Sub")
        r = a - b;
      else if (op == "Mul")
        r = a * b;
      else if (op == "Equal")
        r = a == b;
      else if (op == "Less")
        r = a < b;
      else if (op == "Greater")
        r = a > b;
      else if (op == "LessOrEqual")
        r = a <= b;
      else if (op == "GreaterOrEqual")
        r = a >= b;
      else if (op == "And")
        r = a != 0 && b != 0;
      else if (op == "Or")
        r = a != 0 || b != 0;
      else if (b == 0 && !out.isFloat())
        fail("integer division by zero");
      else if (op == "FMod")
        r = std::fmod(a, b);
      else if (op == "Mod") // the divisor's sign, as Python's %
        r = a - b * std::floor(a / b);
      else
        r = out.isFloat() ? a / b : std::trunc(a / b);
    }
    if (out.isFloat())
      out.floats.push_back(r);
    else
      out.ints.push_back(static_cast<int64_t>(r));
  }
  return out;
}

/// Sqrt, Abs, Sign, Floor, Ceil, Exp, Reciprocal, Sin or Cos of each
/// element. Integers (not the batch) take those that keep them integers.
KnownTensor unary(const std::string &op, KnownTensor t) {
  if (t.hasBatch())
    fail(op + " of the batch size is not supported: dpc keeps the batch "
              "open until run time and follows only multiples of it");
  bool integral = op == "Abs" || op == "Sign" || op == "Floor" || op == "Ceil";
  if (!t.isFloat()) {
    if (!integral)
      fail(op + " takes floating-point values");
    for (int64_t &v : t.ints)
      v = op == "Abs" ? std::abs(v) : op == "Sign" ? (v > 0) - (v < 0) : v;
    return t;
  }
  for (double &v : t.floats) {
    if (op == "Sqrt")
      v = std::sqrt(v);
    else if (op == "Abs")
      v = std::fabs(v);
    else if (op == "Sign")
      v = v > 0 ? 1.0 : (v < 0 ? -1.0 : v);
    else if (op == "Floor")
      v = std::floor(v);
    else if (op == "Ceil")
      v = std::ceil(v);
    else if (op == "Exp")
      v = std::exp(v);
    else if (op == "Reciprocal")
      v = 1.0 / v;
    else if (op == "Sin")
      v = std::sin(v);
    else
      v = std::cos(v);
  }
  return t;
}

/// Max or Min of any number of broadcast known tensors, of one type.
KnownTensor extremum(const std::string &op, const Inputs &inputs) {
  KnownTensor out = input(inputs, 0);
  for (size_t k = 1; k < inputs.size(); ++k) {
    const KnownTensor &next = input(inputs, k);
    if (out.hasBatch() || next.hasBatch())
      fail(op + " of the batch size is not supported: dpc keeps the batch "
                "open until run time and follows only multiples of it");
    if (out.isFloat() != next.isFloat())
      fail(op + " mixes integers and floating-point values");
    std::vector<int64_t> dims = broadcastDims({&out, &next});
    KnownTensor result;
    result.type = out.type;
    result.dims = dims;
    for (int64_t i = 0; i < product(dims); ++i) {
      int64_t a = broadcastSource(out, dims, i);
      int64_t b = broadcastSource(next, dims, i);
      if (out.isFloat()) {
        double x = out.floats[a], y = next.floats[b];
        result.floats.push_back(std::isnan(x) || std::isnan(y) ? x + y
                                : op == "Max"                  ? std::max(x, y)
                                              : std::min(x, y));
      } else {
        int64_t x = out.ints[a], y = next.ints[b];
        result.ints.push_back(op == "Max" ? std::max(x, y) : std::min(x, y));
      }
    }
    out = std::move(result);
  }
  return out;
}

} // namespace dpc::frontend::folding
