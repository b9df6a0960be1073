//===- FoldLayoutOps.cpp - folding ops that move known elements -----------===//
//
// Shape, Gather, Concat, (Un)Squeeze, Cast, Reshape, Expand,
// GatherElements and Slice of known tensors; the symbolic batch moves
// with its element.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/FoldOps.h"

#include <algorithm>

namespace dpc::frontend::folding {

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
    if (steps[i] == 0)
      fail("a slice step is 0");
    sliced[axis] = true;
    int64_t start = starts[i] < 0 ? starts[i] + n : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + n : ends[i];
    if (steps[i] > 0) {
      start = std::clamp<int64_t>(start, 0, n);
      end = std::clamp<int64_t>(end, 0, n);
      for (int64_t j = start; j < end; j += steps[i])
        kept[axis].push_back(j);
    } else { // backwards (the legacy exporter reverses pads with [::-1])
      start = std::clamp<int64_t>(start, 0, n - 1);
      end = std::clamp<int64_t>(end, -1, n - 1);
      for (int64_t j = start; j > end; j += steps[i])
        kept[axis].push_back(j);
    }
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

/// Transpose of a known tensor (the legacy exporter's pads, reordered from
/// PyTorch's order to ONNX's); `perm` defaults to reversing the dims.
KnownTensor transpose(const onnx::NodeProto &node, const KnownTensor &t) {
  int64_t rank = static_cast<int64_t>(t.dims.size());
  std::vector<int64_t> perm;
  if (const onnx::AttributeProto *a = findAttr(node, "perm"))
    perm.assign(a->ints().begin(), a->ints().end());
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  std::vector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank)
    fail("perm has " + std::to_string(perm.size()) + " entries for rank " +
         std::to_string(rank));
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      fail("perm is not a permutation of the dims");
    seen[p] = true;
  }
  std::vector<int64_t> dims, strides = stridesOf(t.dims), flat;
  for (int64_t p : perm)
    dims.push_back(t.dims[p]);
  for (int64_t i = 0; i < product(dims); ++i) {
    int64_t rest = i, index = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      index += rest % dims[d] * strides[perm[d]];
      rest /= dims[d];
    }
    flat.push_back(index);
  }
  return gatherFlat(t, dims, flat);
}

} // namespace dpc::frontend::folding
