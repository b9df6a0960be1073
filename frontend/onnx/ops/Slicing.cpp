//===- Slicing.cpp - slices, gathers and splits ---------------------------===//
//
// Slice (step 1), Gather (constant rows, an embedding lookup, constant
// indices along an axis: im2col), Col2Im (its inverse), Split, and
// SplitToSequence with SequenceAt.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

/// `axis` of `input`'s type, normalized: a static dim (not the batch's).
int64_t splitAxis(const onnx::NodeProto &node, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t axis = intAttr(node, "axis", 0);
  axis = axis < 0 ? axis + type.getRank() : axis;
  if (axis < 0 || axis >= type.getRank() || type.isDynamicDim(axis))
    fail("axis " + std::to_string(axis) +
         " is not a static dim of the input (the batch's cannot be split)");
  return axis;
}

/// Parts of `size` (the last one smaller if they do not divide `dim`).
SmallVector<int64_t> chunkSizes(int64_t dim, int64_t size) {
  SmallVector<int64_t> sizes;
  for (int64_t left = dim; left > 0; left -= size)
    sizes.push_back(std::min(size, left));
  return sizes;
}

void importSplit(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  int64_t axis = splitAxis(node, input);
  int64_t dim = cast<RankedTensorType>(input.getType()).getDimSize(axis);
  // The sizes: an attribute before opset 13, an optional input from it on;
  // without them, equal parts (from opset 18 `num_outputs` of them, the
  // last one smaller if they do not divide the dim).
  SmallVector<int64_t> sizes;
  if (im.getOpset() < 13)
    sizes = intsAttr(node, "split", {});
  else if (node.input_size() > 1 && !node.input(1).empty())
    sizes = im.constantInts(node, 1);
  if (sizes.empty()) {
    int64_t parts = im.getOpset() >= 18 && attr(node, "num_outputs")
                        ? intAttr(node, "num_outputs", 1)
                        : node.output_size();
    if (parts < 1)
      fail("num_outputs must be positive");
    sizes = chunkSizes(dim, (dim + parts - 1) / parts);
  }
  if (static_cast<int>(sizes.size()) != node.output_size())
    fail(std::to_string(sizes.size()) + " parts for " +
         std::to_string(node.output_size()) + " outputs");
  SmallVector<Value> parts = im.createSplit(input, axis, sizes);
  for (int i = 0; i < node.output_size(); ++i)
    im.define(node, i, parts[i]);
}

void importSplitToSequence(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  int64_t axis = splitAxis(node, input);
  int64_t dim = cast<RankedTensorType>(input.getType()).getDimSize(axis);
  if (node.input_size() < 2 || node.input(1).empty() ||
      intAttr(node, "keepdims", 1) == 0)
    fail("only a split with sizes and keepdims=1 is supported");
  // A scalar is the size of every part (torch.chunk, torch.split(n)).
  const KnownTensor *split = im.knownValue(node.input(1));
  SmallVector<int64_t> sizes = im.constantInts(node, 1);
  if (split && split->dims.empty() && sizes.size() == 1)
    sizes = chunkSizes(dim, sizes[0]);
  im.bindSequence(node.output(0), im.createSplit(input, axis, sizes));
}

void importSequenceAt(Importer &im, const onnx::NodeProto &node) {
  const SmallVector<Value> *sequence =
      node.input_size() > 0 ? im.sequenceOf(node.input(0)) : nullptr;
  if (!sequence)
    fail("reads a sequence dpc does not know (only SplitToSequence's)");
  SmallVector<int64_t> position = im.constantInts(node, 1);
  int64_t count = static_cast<int64_t>(sequence->size());
  int64_t p = position.size() == 1 ? position[0] : count;
  p = p < 0 ? p + count : p;
  if (p < 0 || p >= count)
    fail("position out of range for a sequence of " + std::to_string(count));
  im.define(node, 0, (*sequence)[p]);
}

void importSlice(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> starts = im.constantInts(node, 1);
  SmallVector<int64_t> ends = im.constantInts(node, 2);
  SmallVector<int64_t> axes;
  if (node.input_size() > 3 && !node.input(3).empty())
    axes = im.constantInts(node, 3);
  else
    for (int64_t d = 0; d < static_cast<int64_t>(starts.size()); ++d)
      axes.push_back(d);
  SmallVector<int64_t> steps(starts.size(), 1);
  if (node.input_size() > 4 && !node.input(4).empty())
    steps = im.constantInts(node, 4);
  if (starts.size() != ends.size() || starts.size() != axes.size() ||
      starts.size() != steps.size())
    fail("starts, ends, axes and steps differ in length");
  axes = normalizeAxes(axes, rank);
  Value result = input;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (steps[i] != 1)
      fail("only slices with step 1 are supported");
    // ONNX's clamping: negative counts from the end, then into [0, dim]
    // (the open batch dim is only ever taken whole).
    int64_t dim = type.getDimSize(axes[i]);
    auto clamp = [&](int64_t index) {
      if (ShapedType::isDynamic(dim))
        return index >= kMaxSliceEnd ? kMaxSliceEnd : index;
      if (index < 0)
        index = index < -dim ? 0 : index + dim;
      return std::min(index, dim);
    };
    result = im.createSlice(result, axes[i], clamp(starts[i]), clamp(ends[i]));
  }
  im.define(node, 0, result);
}

/// Gather of constant indices along a static axis (im2col's, Unfold's):
/// the axis split into its slices, those at the indices joined in their
/// order, and the joined axis reshaped to the indices' dims. The split's
/// and concat's gradients sum what an index reads more than once (a
/// scatter-add).
Value gatherConstant(Importer &im, const onnx::NodeProto &node,
                     const KnownTensor &index) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  int64_t axis = normalizeAxes({intAttr(node, "axis", 0)}, type.getRank())[0];
  int64_t dim = type.getDimSize(axis);
  if (ShapedType::isDynamic(dim))
    fail("constant indices along the batch axis are not supported");
  if (index.getNumElements() == 0)
    fail("an empty gather is not supported");
  SmallVector<Value> slices =
      dim == 1 ? SmallVector<Value>{input}
               : im.createSplit(input, axis, SmallVector<int64_t>(dim, 1));
  SmallVector<Value> picked;
  for (int64_t i : index.ints) {
    if (i < -dim || i >= dim)
      fail("index " + std::to_string(i) + " is out of range for dim " +
           std::to_string(axis) + " of size " + std::to_string(dim));
    picked.push_back(slices[i < 0 ? i + dim : i]);
  }
  Value joined =
      picked.size() == 1
          ? picked[0]
          : im.create<nn::ConcatOp>(
                picked,
                {im.named("axis", im.opBuilder().getI64IntegerAttr(axis))});
  SmallVector<int64_t> dims(type.getShape().take_front(axis));
  dims.append(index.dims.begin(), index.dims.end());
  dims.append(type.getShape().begin() + axis + 1, type.getShape().end());
  return im.createReshape(joined, dims);
}

/// Col2Im (torch.nn.Fold): [N, C kh kw, L] to [N, C, H, W], the columns of
/// the blocks added at their places. Per kernel offset (i, j), the
/// [N, C, Lh, Lw] plane of that offset's entries of every block, padded to
/// the padded image where the offset puts it; the planes summed, then the
/// image's pads cropped. Only stride 1: each plane is then a shifted copy.
void importCol2Im(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> image = im.constantInts(node, 1);
  SmallVector<int64_t> block = im.constantInts(node, 2);
  SmallVector<int64_t> strides = intsAttr(node, "strides", {1, 1});
  SmallVector<int64_t> dilations = intsAttr(node, "dilations", {1, 1});
  SmallVector<int64_t> pads = intsAttr(node, "pads", {0, 0, 0, 0});
  if (type.getRank() != 3 || image.size() != 2 || block.size() != 2 ||
      dilations.size() != 2 || pads.size() != 4)
    fail("only a Col2Im of [N, C kh kw, L] to a 2-D image is supported");
  if (llvm::any_of(strides, [](int64_t s) { return s != 1; }))
    fail("only a Col2Im with strides 1 is supported");
  int64_t height = image[0] + pads[0] + pads[2];
  int64_t width = image[1] + pads[1] + pads[3];
  int64_t lh = height - dilations[0] * (block[0] - 1);
  int64_t lw = width - dilations[1] * (block[1] - 1);
  int64_t offsets = block[0] * block[1];
  if (lh < 1 || lw < 1 || type.getDimSize(1) % offsets != 0 ||
      type.getDimSize(2) != lh * lw)
    fail("the input's dims do not match the image and block shapes");
  int64_t channels = type.getDimSize(1) / offsets;
  int64_t batch = ShapedType::kDynamic;
  Value blocks = im.createReshape(input, {batch, channels, offsets, lh, lw});
  SmallVector<Value> columns =
      offsets == 1
          ? SmallVector<Value>{blocks}
          : im.createSplit(blocks, 2, SmallVector<int64_t>(offsets, 1));
  Value sum;
  for (int64_t i = 0; i < block[0]; ++i)
    for (int64_t j = 0; j < block[1]; ++j) {
      Value plane = im.createReshape(columns[i * block[1] + j],
                                     {batch, channels, lh, lw});
      int64_t top = i * dilations[0], left = j * dilations[1];
      SmallVector<int64_t> low = {0, 0, top, left};
      SmallVector<int64_t> high = {0, 0, height - lh - top, width - lw - left};
      plane = im.create<nn::PadOp>(
          plane, {im.i64Array("low", low), im.i64Array("high", high)});
      sum = sum ? im.create<nn::AddOp>({sum, plane}) : plane;
    }
  sum = im.createSlice(sum, 2, pads[0], pads[0] + image[0]);
  im.define(node, 0, im.createSlice(sum, 3, pads[1], pads[1] + image[1]));
}

void importGather(Importer &im, const onnx::NodeProto &node) {
  // Rows of a table by constant ids (BERT's position and token-type ids),
  // repeated for each sample where the exporter expanded them to the batch.
  const KnownTensor *ids = im.knownValue(node.input(1));
  bool repeated = false;
  if (const KnownTensor *sample =
          ids ? nullptr : im.repeatedSample(node.input(1))) {
    ids = sample;
    repeated = true;
  }
  if (ids && !ids->isFloat() && ids->getNumElements() > 1 &&
      intAttr(node, "axis", 0) == 0) {
    Value rows = im.constantRows(im.operand(node, 0), *ids);
    if (repeated)
      rows = im.create<nn::BroadcastRowsOp>({rows, im.getDataInput()});
    return im.define(node, 0, rows);
  }
  // Rows of a float table by run-time indices: an embedding lookup.
  if (!im.knownValue(node.input(1)) && intAttr(node, "axis", 0) == 0) {
    Value table = im.operand(node, 0), indices = im.operand(node, 1);
    if (!isa<FloatType>(
            cast<RankedTensorType>(table.getType()).getElementType()) ||
        !isa<IntegerType>(
            cast<RankedTensorType>(indices.getType()).getElementType()))
      fail("only a float table indexed by integers is supported");
    SmallVector<NamedAttribute, 1> attrs;
    if (std::optional<int64_t> padding = embeddingPaddingIdx(node))
      attrs.push_back(
          im.named("padding_idx", im.opBuilder().getI64IntegerAttr(*padding)));
    im.define(node, 0, im.create<nn::EmbeddingOp>({table, indices}, attrs));
    return;
  }
  // A constant index into a tensor (ViT's class token, x[:, 0]): a slice,
  // whose axis a scalar index removes.
  const KnownTensor *index = im.knownValue(node.input(1));
  if (!index || index->isFloat())
    fail("only a constant index into a tensor is supported");
  if (index->getNumElements() != 1)
    return im.define(node, 0, gatherConstant(im, node, *index));
  Value input = im.operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  int64_t axis = normalizeAxes({intAttr(node, "axis", 0)}, type.getRank())[0];
  int64_t dim = type.getDimSize(axis), i = index->ints[0];
  if (ShapedType::isDynamic(dim))
    fail("a constant index along the batch axis is not supported");
  if (i < -dim || i >= dim)
    fail("index " + std::to_string(i) + " is out of range for dim " +
         std::to_string(axis) + " of size " + std::to_string(dim));
  if (i < 0)
    i += dim;
  Value slice = im.createSlice(input, axis, i, i + 1);
  if (index->dims.empty()) {
    SmallVector<int64_t> dims(type.getShape());
    dims.erase(dims.begin() + axis);
    slice = im.create<nn::ReshapeOp>(
        slice, {im.i64Array("shape", reshapeTarget(dims))});
  }
  im.define(node, 0, slice);
}

} // namespace

void registerSlicingOps(OnnxOpTable &table) {
  table.add("Slice", importSlice);
  table.add("Gather", importGather);
  table.add("Col2Im", importCol2Im);
  table.add("Split", importSplit);
  table.add("SplitToSequence", importSplitToSequence);
  table.add("SequenceAt", importSequenceAt);
}

} // namespace dpc::frontend
