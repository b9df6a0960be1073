//===- Shape.cpp - reshaping and layout -----------------------------------===//
//
// Reshape, Flatten, Expand (to the batch), Squeeze, Unsqueeze, Transpose
// and Concat of run-time tensors (shape tensors fold, KnownValues.cpp;
// LSTM's sequence-first views are LstmImport's).
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

void importReshape(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  SmallVector<int64_t> shape = im.constantInts(node, 1, /*allowBatch=*/true);
  // allowzero=1 makes a 0 mean an empty dim instead of a copied one.
  if (intAttr(node, "allowzero", 0) != 0 && llvm::is_contained(shape, 0))
    fail("allowzero=1 with a 0 in the shape is not supported");
  // The batch, or a multiple of it (attention's batch x heads), computed
  // from the input's shape: dim 0 kept is copied (0), elsewhere shape
  // inference works it out (-1), and a -1 beside it is resolved here.
  auto inputType = cast<RankedTensorType>(input.getType());
  std::optional<size_t> batchEntry;
  int64_t inputScale = im.batchScaleOf(input);
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (!frontend::isBatchMultiple(dim))
      continue;
    if (batchEntry || inputType.hasStaticShape())
      fail("the target shape holds the batch size where the input does not");
    batchEntry = i;
    int64_t k = frontend::batchMultipleOf(dim);
    bool copied = i == 0 && inputType.getRank() > 0 &&
                  inputType.isDynamicDim(0) && k == inputScale;
    // Per sample, the input holds inputRest elements and the target k x rest.
    int64_t rest = 1;
    for (int64_t d : shape)
      if (d > 0)
        rest *= d;
    int64_t inputRest = inputScale * staticElements(inputType);
    for (auto [j, other] : llvm::enumerate(shape)) {
      if (other != -1 || j == i || copied)
        continue;
      if (inputRest % (k * rest) != 0)
        fail("the target shape does not divide the input's elements");
      other = inputRest / (k * rest);
      rest *= other;
    }
    if (!copied && inputRest != k * rest)
      fail("the target shape holds " + std::to_string(k * rest) +
           " elements per sample, the input " + std::to_string(inputRest));
    dim = copied ? 0 : -1;
  }
  // An exporter that traced with a fixed batch writes that batch into the
  // target shape; the batch is open here, so copy it through instead.
  auto type = cast<RankedTensorType>(input.getType());
  std::optional<int64_t> exportedBatch = im.getExportedBatch();
  if (exportedBatch && !shape.empty() && type.getRank() > 0 &&
      type.isDynamicDim(0) && shape[0] == *exportedBatch)
    shape[0] = 0;
  // Keeping the batch and flattening the rest is Flatten, whichever way the
  // exporter wrote it (PyTorch 2 writes a Reshape to [batch, -1]).
  int64_t rest = 1;
  for (int64_t d : inputType.getShape().drop_front(inputType.getRank() ? 1 : 0))
    rest = ShapedType::isDynamic(d) || rest < 0 ? -1 : rest * d;
  if (inputType.getRank() >= 2 && inputType.isDynamicDim(0) &&
      shape.size() == 2 && shape[0] == 0 &&
      (shape[1] == -1 || shape[1] == rest))
    return im.define(
        node, 0,
        im.create<nn::FlattenOp>(
            input, {im.named("axis", im.opBuilder().getI64IntegerAttr(1))}));
  im.define(node, 0,
            im.create<nn::ReshapeOp>(input, {im.i64Array("shape", shape)}));
}

void importFlatten(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  int64_t axis = intAttr(node, "axis", 1);
  if (axis < 0)
    axis += cast<RankedTensorType>(input.getType()).getRank();
  im.define(
      node, 0,
      im.create<nn::FlattenOp>(
          input, {im.named("axis", im.opBuilder().getI64IntegerAttr(axis))}));
}

/// `input` repeated `copies` times along `axis` (of size 1): a concat of
/// copies, whose gradient sums the copies' (an expand's).
Value repeatAlong(Importer &im, Value input, int64_t axis, int64_t copies) {
  SmallVector<Value> parts(copies, input);
  return im.create<nn::ConcatOp>(
      parts, {im.named("axis", im.opBuilder().getI64IntegerAttr(axis))});
}

void importExpand(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape = im.constantInts(node, 1, /*allowBatch=*/true);
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(shape.size()) != rank)
    fail("only an expand to a shape of the input's rank is supported");
  // Dim 0: the batch, kept or (a tensor without it: ViT's class token,
  // token.expand(n, -1, -1)) repeated for each sample.
  bool toBatch = frontend::isBatchMultiple(shape[0]) &&
                 frontend::batchMultipleOf(shape[0]) == 1;
  bool keepsDim0 =
      shape[0] == 1 || shape[0] == type.getDimSize(0) ||
      (toBatch && type.isDynamicDim(0) && im.batchScaleOf(input) == 1);
  if (!keepsDim0 && !(toBatch && type.getDimSize(0) == 1))
    fail("dim 0 must stay or be 1 expanded to the batch");
  // Other dims of size 1 expanded (grouped-query attention's repeat_kv:
  // [N, kv, 1, T, d] to [N, kv, r, T, d]) are copies along them.
  Value result = input;
  for (int64_t d = 1; d < rank; ++d) {
    int64_t from = type.getDimSize(d);
    if (shape[d] == 1 || shape[d] == from)
      continue;
    if (from != 1 || shape[d] < 1 || frontend::isBatchMultiple(shape[d]))
      fail("dim " + std::to_string(d) + " of size " + std::to_string(from) +
           " cannot be expanded to " + std::to_string(shape[d]));
    result = repeatAlong(im, result, d, shape[d]);
  }
  if (!keepsDim0)
    result = im.create<nn::BroadcastRowsOp>({result, im.getDataInput()});
  im.define(node, 0, result);
}

void importSqueeze(Importer &im, const onnx::NodeProto &node, bool unsqueeze) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> axes;
  if (im.getOpset() < 13)
    axes = intsAttr(node, "axes", {});
  else if (node.input_size() > 1 && !node.input(1).empty())
    axes = im.constantInts(node, 1, /*allowBatch=*/false);
  if (unsqueeze && axes.empty())
    fail("Unsqueeze needs axes");
  int64_t rank = type.getRank() + (unsqueeze ? int64_t(axes.size()) : 0);
  for (int64_t &axis : axes) {
    if (axis < -rank || axis >= rank)
      fail("axis " + std::to_string(axis) + " is out of range for rank " +
           std::to_string(rank));
    axis = axis < 0 ? axis + rank : axis;
  }
  SmallVector<int64_t> dims;
  auto add = [&](int64_t dim) { dims.push_back(dim); };
  if (unsqueeze) {
    for (int64_t d = 0, next = 0; d < rank; ++d)
      add(llvm::is_contained(axes, d) ? 1 : type.getDimSize(next++));
  } else {
    for (auto [d, dim] : llvm::enumerate(type.getShape())) {
      bool listed = llvm::is_contained(axes, static_cast<int64_t>(d));
      if (listed && dim != 1)
        fail("cannot squeeze dim " + std::to_string(d) + " of " +
             typeToString(type) + ": it is not 1");
      if (!(axes.empty() ? dim == 1 : listed))
        add(dim);
    }
  }
  im.define(node, 0,
            im.create<nn::ReshapeOp>(
                input, {im.i64Array("shape", reshapeTarget(dims))}));
}

void importTranspose(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> reversed;
  for (int64_t d = type.getRank() - 1; d >= 0; --d)
    reversed.push_back(d);
  SmallVector<int64_t> perm = intsAttr(node, "perm", reversed);
  // The batch may move (attention works sequence-first): the compiler
  // follows it to whichever dim holds it.
  im.define(
      node, 0,
      im.create<nn::TransposeOp>(input, {im.i64Array("permutation", perm)}));
}

void importConcat(Importer &im, const onnx::NodeProto &node) {
  SmallVector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i)
    inputs.push_back(im.operand(node, i));
  if (inputs.empty())
    fail("needs at least one input");
  int64_t rank = cast<RankedTensorType>(inputs[0].getType()).getRank();
  int64_t axis = intAttr(node, "axis", 0);
  im.define(
      node, 0,
      im.create<nn::ConcatOp>(
          inputs, {im.named("axis", im.opBuilder().getI64IntegerAttr(
                                        axis < 0 ? axis + rank : axis))}));
}

} // namespace

void registerShapeOps(OnnxOpTable &table) {
  table.add("Reshape", importReshape);
  table.add("Flatten", importFlatten);
  table.add("Expand", importExpand);
  table.add("Squeeze", [](Importer &im, const onnx::NodeProto &node) {
    importSqueeze(im, node, /*unsqueeze=*/false);
  });
  table.add("Unsqueeze", [](Importer &im, const onnx::NodeProto &node) {
    importSqueeze(im, node, /*unsqueeze=*/true);
  });
  table.add("Transpose", importTranspose);
  table.add("Concat", importConcat);
}

} // namespace dpc::frontend
