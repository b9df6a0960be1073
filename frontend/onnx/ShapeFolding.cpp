//===- ShapeFolding.cpp - shape arithmetic evaluated at import ------------===//
//
// The dispatch of a node to the op that evaluates it (FoldLayoutOps.cpp,
// FoldValueOps.cpp) and the helpers on known tensors they share.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ShapeFolding.h"
#include "frontend/onnx/FoldOps.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>

namespace dpc::frontend {
namespace folding {

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

} // namespace folding

using namespace folding;

bool KnownTensor::isFloat() const { return isFloatType(type); }

int64_t KnownTensor::getNumElements() const { return product(dims); }

bool KnownTensor::hasBatch() const {
  return std::any_of(ints.begin(), ints.end(), isBatchMultiple);
}

bool isFoldable(const std::string &op) {
  static const char *const ops[] = {
      "Shape",
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
      "Trilu",
      "Transpose",
      "Abs",
      "Sign",
      "Floor",
      "Ceil",
      "Exp",
      "Reciprocal",
      "Sin",
      "Cos",
      "Max",
      "Min",
  };
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
  if (op == "Transpose")
    return Tensors{transpose(node, input(inputs, 0))};
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
  if (op == "Sqrt" || op == "Abs" || op == "Sign" || op == "Floor" ||
      op == "Ceil" || op == "Exp" || op == "Reciprocal" || op == "Sin" ||
      op == "Cos") // attention's 1 / sqrt(head dim), relative positions
    return Tensors{unary(op, input(inputs, 0))};
  if (op == "Max" || op == "Min") // adaptive pooling's window bounds
    return Tensors{extremum(op, inputs)};
  if (op == "Mod")
    return Tensors{
        elementwise(intAttr(node, "fmod", 0) ? "FMod" : "Mod", inputs)};
  return Tensors{elementwise(op, inputs)};
}

} // namespace dpc::frontend
