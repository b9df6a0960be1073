//===- ShapeFolding.cpp - shape arithmetic evaluated at import ------------===//

#include "frontend/onnx/ShapeFolding.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace dpc::frontend {
namespace {

using Tensors = std::vector<KnownTensor>;
using Inputs = std::vector<const KnownTensor *>;

[[noreturn]] void fail(const std::string &message) { throw FoldError{message}; }

bool isFloatType(int32_t type) {
  return type == onnx::TensorProto::FLOAT ||
         type == onnx::TensorProto::DOUBLE ||
         type == onnx::TensorProto::FLOAT16 ||
         type == onnx::TensorProto::BFLOAT16;
}

int64_t product(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                     const std::string &name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}
int64_t intAttr(const onnx::NodeProto &node, const std::string &name,
                int64_t dflt) {
  const onnx::AttributeProto *a = findAttr(node, name);
  return a ? a->i() : dflt;
}

const KnownTensor &input(const Inputs &inputs, size_t i) {
  if (i >= inputs.size() || !inputs[i])
    fail("missing input " + std::to_string(i));
  return *inputs[i];
}

/// The integers of a known tensor that must not hold the batch.
std::vector<int64_t> staticInts(const KnownTensor &t, const char *what) {
  if (t.isFloat())
    fail(std::string(what) + " must be integers");
  if (t.hasBatch())
    fail(std::string(what) + " depends on the batch size, which dpc keeps "
                             "open until run time");
  return t.ints;
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for rank " +
         std::to_string(rank));
  return a;
}

/// A tensor of `type` and `dims` with the elements at `indices` of `from`
/// (flat indices into its values).
KnownTensor gatherFlat(const KnownTensor &from, std::vector<int64_t> dims,
                       const std::vector<int64_t> &indices) {
  KnownTensor out;
  out.type = from.type;
  out.dims = std::move(dims);
  for (int64_t i : indices) {
    if (from.isFloat())
      out.floats.push_back(from.floats[i]);
    else
      out.ints.push_back(from.ints[i]);
  }
  return out;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

/// NumPy broadcasting of `dims` against `out`'s rank; fails if they clash.
std::vector<int64_t> broadcastDims(const std::vector<const KnownTensor *> &ts) {
  size_t rank = 0;
  for (const KnownTensor *t : ts)
    rank = std::max(rank, t->dims.size());
  std::vector<int64_t> out(rank, 1);
  for (const KnownTensor *t : ts)
    for (size_t i = 0; i < t->dims.size(); ++i) {
      int64_t &o = out[rank - t->dims.size() + i];
      int64_t d = t->dims[i];
      if (d != 1 && o != 1 && d != o)
        fail("shapes do not broadcast");
      if (d != 1)
        o = d;
    }
  return out;
}

/// The flat index into `t` of output element `flat` of broadcast dims `out`.
int64_t broadcastSource(const KnownTensor &t, const std::vector<int64_t> &out,
                        int64_t flat) {
  std::vector<int64_t> strides = stridesOf(t.dims);
  int64_t index = 0;
  size_t lead = out.size() - t.dims.size();
  for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
    int64_t coordinate = flat % out[d];
    flat /= out[d];
    if (d >= static_cast<int64_t>(lead) && t.dims[d - lead] != 1)
      index += coordinate * strides[d - lead];
  }
  return index;
}

KnownTensor shapeOf(const onnx::NodeProto &node, const KnownTensor &x) {
  int64_t rank = static_cast<int64_t>(x.dims.size());
  auto clamp = [&](int64_t v) {
    v = v < 0 ? v + rank : v;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(intAttr(node, "start", 0));
  int64_t end = clamp(intAttr(node, "end", rank));
  KnownTensor out;
  out.type = onnx::TensorProto::INT64;
  for (int64_t d = start; d < end; ++d)
    out.ints.push_back(x.dims[d]);
  out.dims = {static_cast<int64_t>(out.ints.size())};
  return out;
}

KnownTensor gather(const onnx::NodeProto &node, const KnownTensor &data,
                   const KnownTensor &indices) {
  int64_t rank = static_cast<int64_t>(data.dims.size());
  if (rank == 0)
    fail("cannot gather from a scalar");
  int64_t axis = normalizeAxis(intAttr(node, "axis", 0), rank);
  std::vector<int64_t> picks = staticInts(indices, "indices");
  int64_t n = data.dims[axis];
  for (int64_t &p : picks) {
    if (p < -n || p >= n)
      fail("index " + std::to_string(p) + " is out of range for " +
           std::to_string(n) + " entries");
    p = p < 0 ? p + n : p;
  }
  int64_t outer = product({data.dims.begin(), data.dims.begin() + axis});
  int64_t inner = product({data.dims.begin() + axis + 1, data.dims.end()});
  std::vector<int64_t> flat;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p : picks)
      for (int64_t i = 0; i < inner; ++i)
        flat.push_back((o * n + p) * inner + i);
  std::vector<int64_t> dims(data.dims.begin(), data.dims.begin() + axis);
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  return gatherFlat(data, dims, flat);
}

KnownTensor concat(const onnx::NodeProto &node, const Inputs &inputs) {
  const KnownTensor &first = input(inputs, 0);
  int64_t rank = static_cast<int64_t>(first.dims.size());
  int64_t axis = normalizeAxis(intAttr(node, "axis", 0), rank);
  KnownTensor out;
  out.type = first.type;
  out.dims = first.dims;
  out.dims[axis] = 0;
  for (const KnownTensor *t : inputs) {
    if (!t || t->dims.size() != first.dims.size())
      fail("inputs of different ranks");
    out.dims[axis] += t->dims[axis];
  }
  int64_t outer = product({first.dims.begin(), first.dims.begin() + axis});
  for (int64_t o = 0; o < outer; ++o)
    for (const KnownTensor *t : inputs) {
      int64_t chunk = product({t->dims.begin() + axis, t->dims.end()});
      for (int64_t i = 0; i < chunk; ++i) {
        if (t->isFloat() != out.isFloat())
          fail("inputs of different types");
        if (out.isFloat())
          out.floats.push_back(t->floats[o * chunk + i]);
        else
          out.ints.push_back(t->ints[o * chunk + i]);
      }
    }
  return out;
}

/// Unsqueeze and Squeeze: the axes from the attribute (before opset 13) or
/// the second input.
std::vector<int64_t> axesOf(const onnx::NodeProto &node, const Inputs &inputs,
                            int64_t opset) {
  if (opset < 13) {
    const onnx::AttributeProto *a = findAttr(node, "axes");
    return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end())
             : std::vector<int64_t>();
  }
  if (inputs.size() > 1 && inputs[1])
    return staticInts(*inputs[1], "axes");
  return {};
}

KnownTensor withDims(const KnownTensor &t, std::vector<int64_t> dims) {
  KnownTensor out = t;
  out.dims = std::move(dims);
  return out;
}

KnownTensor unsqueeze(const KnownTensor &t, std::vector<int64_t> axes) {
  int64_t rank = static_cast<int64_t>(t.dims.size() + axes.size());
  for (int64_t &a : axes)
    a = normalizeAxis(a, rank);
  std::sort(axes.begin(), axes.end());
  std::vector<int64_t> dims = t.dims;
  for (int64_t a : axes)
    dims.insert(dims.begin() + a, 1);
  return withDims(t, dims);
}

KnownTensor squeeze(const KnownTensor &t, std::vector<int64_t> axes) {
  int64_t rank = static_cast<int64_t>(t.dims.size());
  std::vector<bool> drop(rank, false);
  for (int64_t a : axes) {
    int64_t d = normalizeAxis(a, rank);
    if (t.dims[d] != 1)
      fail("cannot squeeze dim " + std::to_string(a) + " of size " +
           std::to_string(t.dims[d]));
    drop[d] = true;
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d)
    if (!(axes.empty() ? t.dims[d] == 1 : drop[d]))
      dims.push_back(t.dims[d]);
  return withDims(t, dims);
}

KnownTensor cast(const KnownTensor &t, int32_t to) {
  KnownTensor out;
  out.type = to;
  out.dims = t.dims;
  if (isFloatType(to) == t.isFloat()) {
    out.ints = t.ints;
    out.floats = t.floats;
  } else if (isFloatType(to)) {
    for (int64_t v : staticInts(t, "a value cast to floating point"))
      out.floats.push_back(static_cast<double>(v));
  } else {
    for (double v : t.floats)
      out.ints.push_back(static_cast<int64_t>(v));
  }
  if (to == onnx::TensorProto::BOOL)
    for (int64_t &v : out.ints)
      v = v != 0;
  return out;
}

std::vector<int64_t> reshapeDims(const KnownTensor &data,
                                 std::vector<int64_t> shape) {
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && i < data.dims.size())
      shape[i] = data.dims[i];
    if (shape[i] == -1) {
      if (inferred >= 0)
        fail("more than one -1 in the shape");
      inferred = static_cast<int64_t>(i);
    } else {
      known *= shape[i];
    }
  }
  if (inferred >= 0)
    shape[inferred] = known ? data.getNumElements() / known : 0;
  if (product(shape) != data.getNumElements())
    fail("cannot reshape " + std::to_string(data.getNumElements()) +
         " elements");
  return shape;
}

KnownTensor expand(const KnownTensor &t, const std::vector<int64_t> &shape) {
  KnownTensor target;
  target.dims = shape;
  std::vector<int64_t> dims = broadcastDims({&t, &target});
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < product(dims); ++i)
    flat.push_back(broadcastSource(t, dims, i));
  return gatherFlat(t, dims, flat);
}

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

KnownTensor constantOfShape(const onnx::NodeProto &node,
                            const std::vector<int64_t> &shape) {
  KnownTensor out;
  out.type = onnx::TensorProto::FLOAT;
  out.dims = shape;
  double value = 0;
  if (const onnx::AttributeProto *a = findAttr(node, "value")) {
    const onnx::TensorProto &t = a->t();
    out.type = t.data_type();
    if (t.has_raw_data() && t.raw_data().size() >= 4) {
      const std::string &raw = t.raw_data();
      if (out.type == onnx::TensorProto::FLOAT) {
        float f;
        std::copy_n(raw.data(), 4, reinterpret_cast<char *>(&f));
        value = f;
      } else if (out.type == onnx::TensorProto::INT64 && raw.size() >= 8) {
        int64_t v;
        std::copy_n(raw.data(), 8, reinterpret_cast<char *>(&v));
        value = static_cast<double>(v);
      }
    } else if (t.float_data_size()) {
      value = t.float_data(0);
    } else if (t.int64_data_size()) {
      value = static_cast<double>(t.int64_data(0));
    } else if (t.int32_data_size()) {
      value = t.int32_data(0);
    }
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

/// GatherElements: out[i] = data[i with its `axis` entry replaced by
/// indices[i]] (BERT's token-type ids gathered at the position ids).
KnownTensor gatherElements(const onnx::NodeProto &node, const KnownTensor &data,
                           const KnownTensor &indices) {
  int64_t rank = static_cast<int64_t>(data.dims.size());
  if (static_cast<int64_t>(indices.dims.size()) != rank)
    fail("data and indices have different ranks");
  int64_t axis = normalizeAxis(intAttr(node, "axis", 0), rank);
  std::vector<int64_t> picks = staticInts(indices, "indices");
  std::vector<int64_t> strides = stridesOf(data.dims),
                       outStrides = stridesOf(indices.dims), flat;
  for (int64_t i = 0; i < static_cast<int64_t>(picks.size()); ++i) {
    int64_t index = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t coordinate = (i / outStrides[d]) % indices.dims[d];
      if (d == axis) {
        coordinate = picks[i] < 0 ? picks[i] + data.dims[d] : picks[i];
        if (coordinate < 0 || coordinate >= data.dims[d])
          fail("index " + std::to_string(picks[i]) + " is out of range");
      } else if (coordinate >= data.dims[d]) {
        fail("indices exceed the data's dim " + std::to_string(d));
      }
      index += coordinate * strides[d];
    }
    flat.push_back(index);
  }
  return gatherFlat(data, indices.dims, flat);
}

/// Slice (opset 10+: starts, ends, axes, steps as inputs) of a known tensor
/// of any rank, e.g. BERT's position ids buffer cut to the sequence.
KnownTensor slice(const Inputs &inputs) {
  const KnownTensor &data = input(inputs, 0);
  int64_t rank = static_cast<int64_t>(data.dims.size());
  std::vector<int64_t> starts = staticInts(input(inputs, 1), "starts");
  std::vector<int64_t> ends = staticInts(input(inputs, 2), "ends");
  std::vector<int64_t> axes, steps;
  if (inputs.size() > 3 && inputs[3])
    axes = staticInts(*inputs[3], "axes");
  else
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (inputs.size() > 4 && inputs[4])
    steps = staticInts(*inputs[4], "steps");
  else
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    fail("starts, ends, axes and steps differ in length");
  // Per dim, the indices kept (all of it unless sliced).
  std::vector<std::vector<int64_t>> kept(rank);
  std::vector<bool> sliced(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = normalizeAxis(axes[i], rank), n = data.dims[axis];
    if (sliced[axis])
      fail("axis " + std::to_string(axes[i]) + " is sliced twice");
    if (steps[i] <= 0)
      fail("only positive slice steps are supported at import");
    sliced[axis] = true;
    int64_t start =
        std::clamp<int64_t>(starts[i] < 0 ? starts[i] + n : starts[i], 0, n);
    int64_t end =
        std::clamp<int64_t>(ends[i] < 0 ? ends[i] + n : ends[i], 0, n);
    for (int64_t j = start; j < end; j += steps[i])
      kept[axis].push_back(j);
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!sliced[d])
      for (int64_t j = 0; j < data.dims[d]; ++j)
        kept[d].push_back(j);
    dims.push_back(static_cast<int64_t>(kept[d].size()));
  }
  std::vector<int64_t> strides = stridesOf(data.dims), flat;
  int64_t count = product(dims);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, index = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      index += kept[d][rest % dims[d]] * strides[d];
      rest /= dims[d];
    }
    flat.push_back(index);
  }
  return gatherFlat(data, dims, flat);
}

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

} // namespace

bool KnownTensor::isFloat() const { return isFloatType(type); }

int64_t KnownTensor::getNumElements() const { return product(dims); }

bool KnownTensor::hasBatch() const {
  return std::any_of(ints.begin(), ints.end(), isBatchMultiple);
}

bool isFoldable(const std::string &op) {
  static const char *const ops[] = {"Shape",
                                    "Size",
                                    "Gather",
                                    "Slice",
                                    "Concat",
                                    "Unsqueeze",
                                    "Squeeze",
                                    "Cast",
                                    "CastLike",
                                    "Reshape",
                                    "Expand",
                                    "Identity",
                                    "ConstantOfShape",
                                    "Range",
                                    "Where",
                                    "Equal",
                                    "Add",
                                    "Sub",
                                    "Mul",
                                    "Div",
                                    "Mod",
                                    "Sqrt",
                                    "GatherElements",
                                    "Less",
                                    "Greater",
                                    "LessOrEqual",
                                    "GreaterOrEqual",
                                    "And",
                                    "Or",
                                    "Not",
                                    "Trilu"};
  return std::find(std::begin(ops), std::end(ops), op) != std::end(ops);
}

std::optional<Tensors> foldNode(const onnx::NodeProto &node,
                                const Inputs &inputs, int64_t opset,
                                int32_t castTarget) {
  const std::string &op = node.op_type();
  // Shape and CastLike read only their first input's value; Shape not even
  // that (the importer passes the dims of any tensor).
  size_t needed = op == "CastLike" ? 1 : inputs.size();
  if (op == "Reshape" || op == "Expand")
    needed = 2;
  for (size_t i = 0; i < needed && i < inputs.size(); ++i)
    if (!inputs[i] && i < static_cast<size_t>(node.input_size()) &&
        !node.input(i).empty())
      return std::nullopt;
  if (op == "Shape")
    return Tensors{shapeOf(node, input(inputs, 0))};
  if (op == "Size") {
    KnownTensor out;
    out.type = onnx::TensorProto::INT64;
    out.ints = {
        product(staticInts(shapeOf(node, input(inputs, 0)), "the size"))};
    return Tensors{out};
  }
  if (op == "Identity")
    return Tensors{input(inputs, 0)};
  if (op == "Gather")
    return Tensors{gather(node, input(inputs, 0), input(inputs, 1))};
  if (op == "Concat")
    return Tensors{concat(node, inputs)};
  if (op == "Unsqueeze")
    return Tensors{unsqueeze(input(inputs, 0), axesOf(node, inputs, opset))};
  if (op == "Squeeze")
    return Tensors{squeeze(input(inputs, 0), axesOf(node, inputs, opset))};
  if (op == "Cast")
    return Tensors{
        cast(input(inputs, 0), static_cast<int32_t>(intAttr(node, "to", 0)))};
  if (op == "CastLike")
    return Tensors{cast(input(inputs, 0), castTarget)};
  if (op == "Reshape")
    return Tensors{withDims(
        input(inputs, 0),
        reshapeDims(input(inputs, 0),
                    staticInts(input(inputs, 1), "the target shape")))};
  if (op == "Expand")
    return Tensors{expand(input(inputs, 0),
                          staticInts(input(inputs, 1), "the target shape"))};
  if (op == "ConstantOfShape")
    return Tensors{
        constantOfShape(node, staticInts(input(inputs, 0), "the shape"))};
  if (op == "Range")
    return Tensors{range(inputs)};
  if (op == "Trilu")
    return Tensors{trilu(node, inputs)};
  if (op == "Slice")
    return Tensors{slice(inputs)};
  if (op == "GatherElements")
    return Tensors{gatherElements(node, input(inputs, 0), input(inputs, 1))};
  if (op == "Not") {
    KnownTensor out = input(inputs, 0);
    if (out.isFloat() || out.hasBatch())
      fail("Not takes booleans");
    for (int64_t &v : out.ints)
      v = v == 0;
    return Tensors{out};
  }
  if (op == "Sqrt") { // attention's 1 / sqrt(head dim)
    KnownTensor out = input(inputs, 0);
    if (!out.isFloat())
      fail("Sqrt takes floating-point values");
    for (double &v : out.floats)
      v = std::sqrt(v);
    return Tensors{out};
  }
  if (op == "Mod")
    return Tensors{
        elementwise(intAttr(node, "fmod", 0) ? "FMod" : "Mod", inputs)};
  return Tensors{elementwise(op, inputs)};
}

} // namespace dpc::frontend
