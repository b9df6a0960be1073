//===- LstmImport.cpp - batch views and fills around recurrent layers -----===//

#include "frontend/onnx/LstmImport.h"

#include "ir/nn/NNOps.h"

#include <onnx/onnx_pb.h>

#include <numeric>

using namespace mlir;
using namespace dpc;
using frontend::dimsToString;
using frontend::hasInput;
using frontend::kBatch;
using frontend::KnownTensor;
using frontend::LstmImport;

namespace {

const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                     StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t product(ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

} // namespace

bool frontend::hasInput(const onnx::NodeProto &node, int i) {
  return i < node.input_size() && !node.input(i).empty();
}

std::string frontend::dimsToString(ArrayRef<int64_t> dims) {
  std::string text = "[";
  for (auto [i, d] : llvm::enumerate(dims))
    text += (i ? ", " : "") + (d == kBatch ? "batch" : std::to_string(d));
  return text + "]";
}

bool LstmImport::fillToView(const std::string &name) {
  auto fill = fills.find(name);
  if (fill == fills.end())
    return false;
  const std::vector<int64_t> &dims = fill->second.dims;
  auto batch = llvm::find(dims, kBatch);
  if (!fill->second.isFloat || batch == dims.end() ||
      std::count(dims.begin(), dims.end(), kBatch) != 1 ||
      llvm::any_of(dims, [](int64_t d) {
        return d != kBatch && (isBatchMultiple(d) || d < 0);
      }))
    context.error("value '" + name +
                  "' is a fill whose shape depends on the batch size; only "
                  "a float fill with the batch in one dim can be a tensor");
  // The value per sample, [1, other dims], repeated for each row of the
  // batch: the fill batch first, as a view with the batch where it is.
  SmallVector<int64_t> sample = {1};
  for (int64_t d : dims)
    if (d != kBatch)
      sample.push_back(d);
  OpBuilder &b = context.opBuilder();
  auto type = RankedTensorType::get(sample, b.getF32Type());
  Value one = context.create<nn::ConstantOp>(
      {}, {b.getNamedAttr("value",
                          DenseElementsAttr::get(
                              type, static_cast<float>(fill->second.value)))});
  Value rows = context.create<nn::BroadcastRowsOp>({one, context.batchRows()});
  views[name] = {rows, static_cast<int64_t>(batch - dims.begin())};
  fills.erase(fill);
  return true;
}

Value LstmImport::materialize(const std::string &name) {
  fillToView(name);
  auto it = views.find(name);
  if (it == views.end())
    return Value();
  // The nn tensor itself, its batch moved from dim 0 to where ONNX has it.
  const View &view = it->second;
  int64_t rank = cast<RankedTensorType>(view.batchFirst.getType()).getRank();
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i == view.batchDim ? 0 : i < view.batchDim ? i + 1 : i);
  OpBuilder &b = context.opBuilder();
  Value value = context.create<nn::TransposeOp>(
      view.batchFirst,
      {b.getNamedAttr("permutation", b.getDenseI64ArrayAttr(perm))});
  context.bind(name, value);
  return value;
}

std::vector<int64_t> LstmImport::dimsOf(const View &view) {
  auto type = cast<RankedTensorType>(view.batchFirst.getType());
  std::vector<int64_t> dims(type.getShape().begin() + 1, type.getShape().end());
  dims.insert(dims.begin() + view.batchDim, kBatch);
  return dims;
}

void LstmImport::define(const onnx::NodeProto &node, int i, Value batchFirst,
                        int64_t batchDim) {
  if (i >= node.output_size() || node.output(i).empty())
    return;
  if (batchDim == 0)
    context.bind(node.output(i), batchFirst);
  else
    views[node.output(i)] = {batchFirst, batchDim};
}

Value LstmImport::reshape(Value value, ArrayRef<int64_t> shape) {
  return context.create<nn::ReshapeOp>(
      value, {context.opBuilder().getNamedAttr(
                 "shape", context.opBuilder().getDenseI64ArrayAttr(shape))});
}

SmallVector<Value> LstmImport::split(Value value, int64_t axis, int64_t parts) {
  if (parts == 1)
    return {value};
  auto type = cast<RankedTensorType>(value.getType());
  OpBuilder &b = context.opBuilder();
  SmallVector<int64_t> sizes(parts, type.getDimSize(axis) / parts);
  Operation *op =
      context.build(nn::SplitOp::getOperationName(), value,
                    {b.getNamedAttr("axis", b.getI64IntegerAttr(axis)),
                     b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(sizes))},
                    parts);
  return SmallVector<Value>(op->getResults());
}

Value LstmImport::concat(ArrayRef<Value> values, int64_t axis) {
  if (values.size() == 1)
    return values[0];
  OpBuilder &b = context.opBuilder();
  return context.create<nn::ConcatOp>(
      values, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
}

Value LstmImport::batchFirstInput(const onnx::NodeProto &node, int i,
                                  int64_t batchDim) {
  if (!hasInput(node, i))
    return Value();
  const std::string &name = node.input(i);
  if (auto it = fills.find(name); it != fills.end()) {
    if (it->second.value != 0)
      context.error("input '" + name + "' is a fill of " +
                    std::to_string(it->second.value) +
                    "; only a zero initial state can be a fill");
    return Value();
  }
  if (auto it = views.find(name); it != views.end()) {
    if (it->second.batchDim != batchDim)
      context.error("input '" + name + "' has the batch in dim " +
                    std::to_string(it->second.batchDim) + ", expected " +
                    std::to_string(batchDim));
    return it->second.batchFirst;
  }
  Value value = context.valueOf(name);
  auto type = cast<RankedTensorType>(value.getType());
  if (batchDim != 0 || type.getRank() == 0 || !type.isDynamicDim(0))
    context.error("input '" + name + "' must have the batch in dim " +
                  std::to_string(batchDim));
  return value;
}

void LstmImport::importTranspose(const onnx::NodeProto &node) {
  View input;
  if (auto it = views.find(node.input(0)); it != views.end())
    input = it->second;
  else
    input = {context.valueOf(node.input(0)), 0};
  int64_t rank = static_cast<int64_t>(dimsOf(input).size());
  SmallVector<int64_t> perm;
  if (const onnx::AttributeProto *a = findAttr(node, "perm"))
    perm.assign(a->ints().begin(), a->ints().end());
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  if (static_cast<int64_t>(perm.size()) != rank)
    context.error("perm has " + std::to_string(perm.size()) +
                  " entries for a rank-" + std::to_string(rank) + " input");
  // ONNX dim j of the input is batch-first dim `firstOf(j)`.
  auto firstOf = [&](int64_t j) {
    return j == input.batchDim ? 0 : j < input.batchDim ? j + 1 : j;
  };
  int64_t batchDim = -1;
  SmallVector<int64_t> order = {0};
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= rank)
      context.error("perm entry " + std::to_string(p) + " is out of range");
    if (p == input.batchDim)
      batchDim = static_cast<int64_t>(i);
    else
      order.push_back(firstOf(p));
  }
  if (batchDim < 0 || static_cast<int64_t>(order.size()) != rank)
    context.error("perm is not a permutation");
  Value result = input.batchFirst;
  if (!llvm::equal(order, llvm::seq<int64_t>(0, rank))) {
    OpBuilder &b = context.opBuilder();
    result = context.create<nn::TransposeOp>(
        result, {b.getNamedAttr("permutation", b.getDenseI64ArrayAttr(order))});
  }
  define(node, 0, result, batchDim);
}

bool LstmImport::reshapeView(const onnx::NodeProto &node, const View &view,
                             std::vector<int64_t> dims) {
  std::vector<int64_t> from = dimsOf(view);
  auto batchAt = [](const std::vector<int64_t> &d) {
    return std::find(d.begin(), d.end(), kBatch) - d.begin();
  };
  int64_t batchFrom = batchAt(from), batchTo = batchAt(dims);
  if (batchTo == static_cast<int64_t>(dims.size()) ||
      std::count(dims.begin(), dims.end(), kBatch) != 1)
    return false;
  // The batch stays apart iff the dims before it hold as many elements in
  // both shapes (and so do the dims after it).
  auto before = [](const std::vector<int64_t> &d, int64_t at) {
    return product(ArrayRef<int64_t>(d).take_front(at));
  };
  auto after = [](const std::vector<int64_t> &d, int64_t at) {
    return product(ArrayRef<int64_t>(d).drop_front(at + 1));
  };
  if (before(from, batchFrom) != before(dims, batchTo) ||
      after(from, batchFrom) != after(dims, batchTo))
    return false; // merges the batch with other dims: the importer's
  SmallVector<int64_t> shape = {0};
  for (int64_t d : dims)
    if (d != kBatch)
      shape.push_back(d);
  auto type = cast<RankedTensorType>(view.batchFirst.getType());
  Value result = view.batchFirst;
  if (ArrayRef<int64_t>(shape).drop_front() != type.getShape().drop_front())
    result = reshape(result, shape);
  define(node, 0, result, batchTo);
  return true;
}

std::vector<int64_t>
LstmImport::reshapeTarget(const onnx::NodeProto &node, int64_t opset,
                          const std::vector<int64_t> &from) {
  const std::string &op = node.op_type();
  // The target: Reshape's shape input (0 copies, -1 infers), or the
  // dims without / with the axes of size 1.
  std::vector<int64_t> dims;
  std::vector<int64_t> axes;
  if (op == "Reshape") {
    const KnownTensor *shape =
        hasInput(node, 1) ? context.knownTensorOf(node.input(1)) : nullptr;
    if (!shape || shape->isFloat())
      context.error("the target shape must be known at import");
    dims = shape->ints;
  } else if (opset < 13) {
    if (const onnx::AttributeProto *a = findAttr(node, "axes"))
      axes.assign(a->ints().begin(), a->ints().end());
  } else if (hasInput(node, 1)) {
    const KnownTensor *known = context.knownTensorOf(node.input(1));
    if (!known || known->isFloat() || known->hasBatch())
      context.error("the axes must be known at import");
    axes = known->ints;
  }
  if (op == "Squeeze") {
    int64_t rank = static_cast<int64_t>(from.size());
    for (int64_t &a : axes)
      a = a < 0 ? a + rank : a;
    for (int64_t d = 0; d < rank; ++d) {
      bool listed = llvm::is_contained(axes, d);
      if (listed && from[d] != 1)
        context.error("cannot squeeze dim " + std::to_string(d) + " of " +
                      dimsToString(from));
      if (!(axes.empty() ? from[d] == 1 : listed))
        dims.push_back(from[d]);
    }
  } else if (op == "Unsqueeze") {
    int64_t rank = static_cast<int64_t>(from.size() + axes.size());
    for (int64_t &a : axes)
      a = a < 0 ? a + rank : a;
    llvm::sort(axes);
    dims = from;
    for (int64_t a : axes)
      dims.insert(dims.begin() + std::clamp<int64_t>(a, 0, dims.size()), 1);
  } else {
    // Non-batch elements; a multiple of the batch (batchTimes) is the
    // batch here, never a factor (its encoding would overflow a product).
    int64_t inferred = -1, known = 1, total = 1;
    for (int64_t d : from)
      if (!isBatchMultiple(d))
        total *= d;
    for (auto [i, d] : llvm::enumerate(dims)) {
      if (d == 0 && i < from.size())
        d = from[i];
      if (d == -1)
        inferred = static_cast<int64_t>(i);
      else if (!isBatchMultiple(d))
        known *= d;
    }
    // Without the batch among the others, -1 is the batch (times what
    // the rest leaves over, which must be nothing).
    bool batchGiven = llvm::any_of(dims, isBatchMultiple);
    if (inferred >= 0)
      dims[inferred] = !batchGiven && known == total ? kBatch
                       : known                       ? total / known
                                                     : 0;
  }
  return dims;
}

bool LstmImport::importFill(const onnx::NodeProto &node, int64_t opset) {
  // A known value broadcast to a shape that holds the batch.
  const std::string &op = node.op_type();
  int shapeInput = op == "Expand" ? 1 : 0;
  const KnownTensor *shape = hasInput(node, shapeInput)
                                 ? context.knownTensorOf(node.input(shapeInput))
                                 : nullptr;
  if (!shape || shape->isFloat() || !shape->hasBatch())
    return false;
  double value = 0;
  bool isFloat = false;
  if (op == "Expand") {
    const KnownTensor *fill = context.knownTensorOf(node.input(0));
    if (!fill || fill->getNumElements() != 1)
      return false;
    value = fill->isFloat() ? fill->floats[0] : double(fill->ints[0]);
    isFloat = fill->isFloat();
  } else {
    // ConstantOfShape's value, read by the folder on a one-element shape.
    KnownTensor one;
    one.type = onnx::TensorProto::INT64;
    one.dims = {1};
    one.ints = {1};
    try {
      std::optional<std::vector<KnownTensor>> element =
          foldNode(node, {&one}, opset, 0);
      const KnownTensor &first = element->front();
      value = first.isFloat() ? first.floats[0] : double(first.ints[0]);
      isFloat = first.isFloat();
    } catch (FoldError &e) {
      context.error(e.message);
    }
  }
  fills[node.output(0)] = {shape->ints, value, isFloat};
  return true;
}

void LstmImport::sliceFill(const onnx::NodeProto &node) {
  Fill fill = fills.find(node.input(0))->second;
  auto ints = [&](int i) -> std::vector<int64_t> {
    const KnownTensor *t =
        hasInput(node, i) ? context.knownTensorOf(node.input(i)) : nullptr;
    if (!t || t->isFloat() || t->hasBatch())
      context.error("input " + std::to_string(i) + " must be known at import");
    return t->ints;
  };
  std::vector<int64_t> starts = ints(1), ends = ints(2), axes;
  int64_t rank = static_cast<int64_t>(fill.dims.size());
  if (hasInput(node, 3))
    axes = ints(3);
  else
    for (int64_t d = 0; d < static_cast<int64_t>(starts.size()); ++d)
      axes.push_back(d);
  if (hasInput(node, 4))
    for (int64_t step : ints(4))
      if (step != 1)
        context.error("only slices with step 1 are supported");
  if (axes.size() != starts.size() || ends.size() != starts.size())
    context.error("starts, ends and axes differ in length");
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank)
      context.error("axis " + std::to_string(axes[i]) + " is out of range");
    int64_t dim = fill.dims[axis];
    if (dim == kBatch) {
      if (starts[i] != 0 || ends[i] < std::numeric_limits<int32_t>::max())
        context.error("slicing the batch dim is not supported");
      continue;
    }
    auto clamp = [&](int64_t v) {
      return std::clamp<int64_t>(v < 0 ? v + dim : v, 0, dim);
    };
    fill.dims[axis] = std::max<int64_t>(0, clamp(ends[i]) - clamp(starts[i]));
  }
  fills[node.output(0)] = fill;
}

bool LstmImport::importNode(const onnx::NodeProto &node, int64_t opset) {
  const std::string &op = node.op_type();
  auto isView = [&](int i) {
    return hasInput(node, i) && views.count(node.input(i));
  };
  auto isFill = [&](int i) {
    return hasInput(node, i) && fills.count(node.input(i));
  };
  if (op == "LSTM" || op == "GRU" || op == "RNN") {
    importRecurrent(node);
    return true;
  }
  if (op == "Transpose" && hasInput(node, 0) && !isFill(0)) {
    if (isView(0)) {
      importTranspose(node);
      return true;
    }
    // A batch-first input whose permutation moves the batch.
    const onnx::AttributeProto *perm = findAttr(node, "perm");
    if (context.knownTensorOf(node.input(0)) ||
        (perm && perm->ints_size() && perm->ints(0) == 0))
      return false;
    auto type =
        cast<RankedTensorType>(context.valueOf(node.input(0)).getType());
    if (type.getRank() < 2 || !type.isDynamicDim(0))
      return false;
    importTranspose(node);
    return true;
  }
  // Reshape, Squeeze and Unsqueeze of a view: a view again where the
  // batch stays apart from the other dims.
  // A fill that one of these reads becomes a tensor, repeated per sample.
  if ((op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" ||
       op == "Transpose") &&
      isFill(0))
    fillToView(node.input(0));
  if (op == "Transpose" && isView(0)) {
    importTranspose(node);
    return true;
  }
  if ((op == "Reshape" || op == "Squeeze" || op == "Unsqueeze") && isView(0)) {
    const View &view = views.find(node.input(0))->second;
    return reshapeView(node, view, reshapeTarget(node, opset, dimsOf(view)));
  }
  if ((op == "Shape" || op == "Size") && (isView(0) || isFill(0))) {
    KnownTensor dims;
    dims.dims = isView(0) ? dimsOf(views.find(node.input(0))->second)
                          : fills.find(node.input(0))->second.dims;
    try {
      auto outputs = foldNode(node, {&dims}, opset, 0);
      context.bindKnown(node.output(0), std::move((*outputs)[0]));
    } catch (FoldError &e) {
      context.error(e.message);
    }
    return true;
  }
  if (op == "ConstantOfShape" || op == "Expand")
    return importFill(node, opset);
  if (op == "Slice" && isFill(0)) {
    sliceFill(node);
    return true;
  }
  return false;
}
