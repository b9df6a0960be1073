//===- ExporterIdioms.cpp - what exporters write across nodes -------------===//
//
// Exporters spell some layers as patterns of several ONNX nodes, or keep
// what ONNX cannot say in metadata. dpc recognises them here:
// - random-mask dropout (RandomMasks.cpp);
// - known values repeated for each sample (BERT's token-type ids and
//   attention mask), folded per sample (foldsPerSample) and read as one
//   sample's constant (elementwiseOperands) or rows of a table
//   (constantRows);
// - the NaN guard Where(IsNaN(p), 0, p) on an attention softmax;
// - Where of a known condition (a causal mask's masked_fill);
// - the embedding's padding_idx in the default exporter's node metadata;
// - which initializers are buffers, in the default exporter's metadata.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"

#include "ir/nn/NNOps.h"

#include <google/protobuf/unknown_field_set.h>

#include <cmath>

using namespace mlir;

namespace dpc::frontend {

//===----------------------------------------------------------------------===//
// Values repeated for each sample
//===----------------------------------------------------------------------===//

bool Importer::foldsPerSample(const onnx::NodeProto &node) {
  static const StringRef elementwise[] = {
      "Add",   "Sub",      "Mul",     "Div",         "Mod",
      "Equal", "Less",     "Greater", "LessOrEqual", "GreaterOrEqual",
      "And",   "Or",       "Not",     "Where",       "Sqrt",
      "Cast",  "CastLike", "Identity"};
  const std::string &op = node.op_type();
  if (llvm::is_contained(elementwise, op))
    return true;
  if (op != "Unsqueeze" && op != "Squeeze")
    return false;
  // Dims added or removed after the batch's leave it in dim 0.
  SmallVector<int64_t> axes;
  if (opset < 13) {
    axes = intsAttr(node, "axes", {});
  } else if (node.input_size() > 1 && !node.input(1).empty()) {
    const KnownTensor *known = knownValue(node.input(1));
    if (!known || known->isFloat())
      return false;
    axes.assign(known->ints.begin(), known->ints.end());
  }
  auto mask = randomMasks.find(node.input(0));
  if (mask == randomMasks.end())
    return false;
  int64_t rank = static_cast<int64_t>(mask->second.shape.size()) +
                 (op == "Unsqueeze" ? static_cast<int64_t>(axes.size()) : 0);
  return !axes.empty() && llvm::none_of(axes, [&](int64_t axis) {
    return axis == 0 || axis == -rank;
  });
}

const KnownTensor *Importer::repeatedSample(const std::string &name) {
  auto it = randomMasks.find(name);
  return it == randomMasks.end() || !it->second.repeated
             ? nullptr
             : &*it->second.repeated;
}

std::pair<Value, Value>
Importer::elementwiseOperands(const onnx::NodeProto &node) {
  // Known values repeated for each sample (an attention mask made from the
  // shape) meeting a tensor with the batch in dim 0: one sample's values
  // broadcast over the batch as they are, with no copy per row and step.
  auto sampleOf = [&](int i) -> const KnownTensor * {
    auto it = randomMasks.find(node.input(i));
    return it == randomMasks.end() || !it->second.repeated
               ? nullptr
               : &*it->second.repeated;
  };
  for (int i : {0, 1}) {
    const KnownTensor *sample = sampleOf(i);
    if (node.input_size() != 2 || !sample || !sample->isFloat() ||
        sampleOf(1 - i))
      continue;
    Value other = operand(node, 1 - i);
    auto type = cast<RankedTensorType>(other.getType());
    if (type.getRank() != static_cast<int64_t>(sample->dims.size()) ||
        !type.isDynamicDim(0) || batchScaleOf(other) != 1)
      continue;
    Value &constant = sampleConstants[node.input(i)];
    if (!constant)
      constant = materialize(node.input(i), *sample);
    return i == 0 ? std::pair(constant, other) : std::pair(other, constant);
  }
  return {operand(node, 0), operand(node, 1)};
}

Value Importer::constantRows(Value table, const KnownTensor &ids) {
  auto type = cast<RankedTensorType>(table.getType());
  if (type.getRank() != 2 || !type.hasStaticShape() ||
      !isa<FloatType>(type.getElementType()))
    fail("constant ids index a float table [rows, features], not " +
         typeToString(type));
  int64_t numRows = type.getDimSize(0), n = ids.getNumElements();
  for (int64_t id : ids.ints)
    if (id < 0 || id >= numRows)
      fail("id " + std::to_string(id) + " is outside the table's " +
           std::to_string(numRows) + " rows");
  bool same = true, consecutive = true;
  for (int64_t i = 1; i < n; ++i) {
    same = same && ids.ints[i] == ids.ints[0];
    consecutive = consecutive && ids.ints[i] == ids.ints[0] + i;
  }
  int64_t first = ids.ints[0];
  Value rows;
  if (consecutive) {
    rows = createSlice(table, 0, first, first + n);
  } else if (same) {
    // One row, added to zeros of [n, features] (the second operand
    // broadcasts; its gradient sums the n rows).
    auto zerosType =
        RankedTensorType::get({n, type.getDimSize(1)}, type.getElementType());
    Value zeros = create<nn::ConstantOp>(
        {}, {named("value", DenseElementsAttr::get(zerosType, 0.f))});
    rows = create<nn::AddOp>({zeros, createSlice(table, 0, first, first + 1)});
  } else {
    fail("constant ids must be consecutive rows or one row repeated");
  }
  SmallVector<int64_t> shape(ids.dims.begin(), ids.dims.end());
  shape.push_back(type.getDimSize(1));
  return create<nn::ReshapeOp>(rows, {i64Array("shape", shape)});
}

//===----------------------------------------------------------------------===//
// Where: the NaN guard and a known condition
//===----------------------------------------------------------------------===//

void Importer::recordNanTest(const onnx::NodeProto &node) {
  nanTests[node.output(0)] = node.input(0);
  unavailable[node.output(0)] =
      "value '" + node.output(0) +
      "' (IsNaN) is read other than by Where(IsNaN(x), c, x) on a "
      "softmax, which dpc does not support";
}

bool Importer::importNanGuard(const onnx::NodeProto &node) {
  // Where(IsNaN(p), 0, p) on p = softmax(scores + mask): PyTorch's
  // scaled_dot_product_attention zeroes the rows its mask removes entirely
  // (all -inf, a NaN softmax). Where the mask is known and leaves every row
  // an entry, p has no NaN for finite scores and the guard is p itself.
  auto test = nanTests.find(node.input(0));
  if (node.input_size() != 3 || test == nanTests.end())
    return false;
  if (test->second != node.input(2) || !knownValue(node.input(1)))
    fail("only Where(IsNaN(x), c, x) is supported");
  Value probabilities = operand(node, 2);
  checkSoftmaxRowsKept(probabilities);
  define(node, 0, probabilities);
  return true;
}

void Importer::checkSoftmaxRowsKept(Value probabilities) {
  auto softmax = probabilities.getDefiningOp<nn::SoftmaxOp>();
  if (!softmax)
    fail("Where(IsNaN(x), c, x) is supported only on a softmax");
  auto type = cast<RankedTensorType>(softmax.getType());
  auto add = softmax.getInput().getDefiningOp<nn::AddOp>();
  if (!add)
    return; // finite scores, no mask: no row is all -inf
  if (static_cast<int64_t>(softmax.getAxis()) != type.getRank() - 1)
    fail("Where(IsNaN(x), c, x) is supported on a softmax over the last dim");
  for (Value term : add->getOperands()) {
    if (auto rows = term.getDefiningOp<nn::BroadcastRowsOp>())
      term = rows.getInput();
    auto constant = term.getDefiningOp<nn::ConstantOp>();
    if (!constant)
      continue;
    auto mask = dyn_cast<DenseElementsAttr>(constant.getValue());
    auto maskType = cast<RankedTensorType>(constant.getType());
    if (!mask || maskType.getRank() == 0 || !maskType.getElementType().isF32())
      continue;
    // Rows of the softmax's last dim; a mask dim of 1 there broadcasts.
    int64_t width = maskType.getShape().back();
    SmallVector<float> values(mask.getValues<float>());
    for (size_t row = 0; row < values.size(); row += width)
      if (llvm::all_of(ArrayRef(values).slice(row, width),
                       [](float v) { return std::isinf(v) && v < 0; }))
        fail("the attention mask removes every entry of a row, which "
             "PyTorch's softmax guard zeroes and dpc does not support");
  }
}

void Importer::importWhere(const onnx::NodeProto &node) {
  if (node.input_size() != 3)
    fail("expected 3 inputs");
  const KnownTensor *condition = knownValue(node.input(0));
  const KnownTensor *chosen = knownValue(node.input(1));
  const KnownTensor *other = knownValue(node.input(2));
  if (!condition || condition->isFloat() || condition->hasBatch())
    fail("only a condition known at import is supported");
  if ((chosen == nullptr) == (other == nullptr) ||
      (chosen ? chosen : other)->hasBatch() ||
      !(chosen ? chosen : other)->isFloat())
    fail("only a choice between a tensor and a known floating-point value "
         "is supported");
  // The tensor t where the condition picks it, the known value c elsewhere:
  // t * keep + fill with keep = 1, fill = 0 where t is picked and keep = 0,
  // fill = c where not. Exact for finite t (t * 1 + 0 = t, t * 0 + c = c),
  // and t's gradient is the upstream gradient times keep, as PyTorch's.
  bool tensorIfTrue = chosen == nullptr;
  const KnownTensor &fillValue = tensorIfTrue ? *other : *chosen;
  Value input = operand(node, tensorIfTrue ? 1 : 2);
  auto inputType = cast<RankedTensorType>(input.getType());
  // The constants' shape: the condition's and the fill's, broadcast.
  size_t rank = std::max(condition->dims.size(), fillValue.dims.size());
  SmallVector<int64_t> dims(rank, 1);
  auto fit = [&](const std::vector<int64_t> &shape) {
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t &d = dims[rank - shape.size() + i];
      if (d != 1 && shape[i] != 1 && shape[i] != d)
        fail("the condition and the value do not broadcast");
      d = shape[i] == 1 ? d : shape[i];
    }
  };
  fit(condition->dims);
  fit(fillValue.dims);
  // They must broadcast to the tensor, which gives the result's shape.
  if (int64_t(rank) > inputType.getRank())
    fail("the condition has more dims than the tensor it chooses from");
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = inputType.getDimSize(inputType.getRank() - rank + i);
    if (dims[i] != 1 && dims[i] != d)
      fail("the condition does not broadcast to the tensor it chooses from");
  }
  // The element of `shape` (right-aligned in dims) at flat index i of dims.
  auto elementOf = [&](const std::vector<int64_t> &shape, int64_t i) {
    int64_t index = 0, stride = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t coordinate = i % dims[d];
      i /= dims[d];
      size_t offset = rank - shape.size();
      if (d < offset)
        continue;
      int64_t extent = shape[d - offset];
      index += (extent == 1 ? 0 : coordinate) * stride;
      stride *= extent;
    }
    return index;
  };
  int64_t count = 1;
  for (int64_t d : dims)
    count *= d;
  SmallVector<float> keep(count), fill(count);
  for (int64_t i = 0; i < count; ++i) {
    bool picksTensor =
        (condition->ints[elementOf(condition->dims, i)] != 0) == tensorIfTrue;
    keep[i] = picksTensor ? 1.f : 0.f;
    fill[i] = picksTensor ? 0.f
                          : static_cast<float>(
                                fillValue.floats[elementOf(fillValue.dims, i)]);
  }
  auto type = RankedTensorType::get(dims, builder.getF32Type());
  Value keepConstant = create<nn::ConstantOp>(
      {}, {named("value", DenseElementsAttr::get(type, ArrayRef(keep)))});
  Value fillConstant = create<nn::ConstantOp>(
      {}, {named("value", DenseElementsAttr::get(type, ArrayRef(fill)))});
  Value kept = create<nn::MulOp>({input, keepConstant});
  define(node, 0, create<nn::AddOp>({kept, fillConstant}));
}

//===----------------------------------------------------------------------===//
// padding_idx
//===----------------------------------------------------------------------===//

/// PyTorch's padding_idx of the embedding lookup `node`, which ONNX cannot
/// say: the legacy exporter drops it, the default exporter keeps it only in
/// the node's metadata, the FX call it came from
/// (`aten.embedding.default](args = (%w, %ids, P)`; no P: none).
std::optional<int64_t> embeddingPaddingIdx(const onnx::NodeProto &node) {
  constexpr StringRef kCall = "aten.embedding.default](args = (";
  std::optional<std::string> fxNode =
      getNodeMetadata(node, "pkg.torch.onnx.fx_node");
  if (!fxNode)
    return std::nullopt;
  StringRef call = *fxNode;
  size_t at = call.find(kCall);
  if (at == StringRef::npos)
    return std::nullopt;
  SmallVector<StringRef> args;
  call.drop_front(at + kCall.size()).split(')').first.split(args, ',');
  int64_t padding;
  if (args.size() < 3 || args[2].trim().getAsInteger(10, padding) ||
      padding < 0) // -1: none
    return std::nullopt;
  return padding;
}

//===----------------------------------------------------------------------===//
// Node metadata, and the rewrites of PyTorch 2's exporter
//===----------------------------------------------------------------------===//

/// Entry `key` of `message`'s metadata_props, which is its field `field`
/// (IR 10). Debian's ONNX 1.12 classes predate these fields: where the class
/// does not know the field, it is read from the fields it does not know.
static std::optional<std::string>
getMetadata(const google::protobuf::Message &message, int field,
            StringRef key) {
  const google::protobuf::Reflection *reflection = message.GetReflection();
  if (const google::protobuf::FieldDescriptor *known =
          message.GetDescriptor()->FindFieldByNumber(field)) {
    for (int i = 0, e = reflection->FieldSize(message, known); i < e; ++i) {
      onnx::StringStringEntryProto entry;
      entry.CopyFrom(reflection->GetRepeatedMessage(message, known, i));
      if (entry.key() == key)
        return entry.value();
    }
    return std::nullopt;
  }
  const google::protobuf::UnknownFieldSet &unknown =
      reflection->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &entryField = unknown.field(i);
    onnx::StringStringEntryProto entry;
    if (entryField.number() == field &&
        entryField.type() ==
            google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED &&
        entry.ParseFromString(entryField.length_delimited()) &&
        entry.key() == key)
      return entry.value();
  }
  return std::nullopt;
}

std::optional<std::string> getNodeMetadata(const onnx::NodeProto &node,
                                           StringRef key) {
  return getMetadata(node, /*field=*/9, key);
}

/// torch.export's graph signature, which PyTorch 2's exporter writes in the
/// graph's metadata: each input's target (a state-dict name, as the
/// initializer is named) and kind, from lines such as
/// `p_fc1_weight: PARAMETER target='fc1.weight'` under `# inputs`.
static llvm::StringMap<std::string>
signatureInputKinds(const onnx::GraphProto &graph) {
  llvm::StringMap<std::string> kinds;
  std::optional<std::string> text = getMetadata(
      graph, /*field=*/16, "pkg.torch.export.ExportedProgram.graph_signature");
  if (!text)
    return kinds;
  SmallVector<StringRef> lines;
  StringRef(*text).split(lines, '\n');
  for (StringRef line : lines) {
    if (line.starts_with("# outputs"))
      break;
    constexpr StringRef kTarget = " target='";
    size_t at = line.find(kTarget);
    if (at == StringRef::npos)
      continue;
    StringRef kind = line.split(": ").second.split(' ').first;
    StringRef target = line.drop_front(at + kTarget.size()).split('\'').first;
    kinds[target] = kind.str();
  }
  return kinds;
}

/// Whether the optimizer's `folded_from` list (`['a', 'b']`: the values an
/// initializer was computed from) names a parameter.
static bool foldedFromParameter(StringRef foldedFrom,
                                const llvm::StringMap<std::string> &kinds) {
  SmallVector<StringRef> names;
  foldedFrom.trim("[] ").split(names, ',');
  return llvm::any_of(names, [&](StringRef name) {
    auto it = kinds.find(name.trim().trim("'\""));
    return it != kinds.end() && it->second == "PARAMETER";
  });
}

/// PyTorch 2's exporter records where each initializer comes from: the
/// torch.export graph signature's input kind, PARAMETER, BUFFER (a module's
/// register_buffer, persistent or not: batch-norm statistics, a rotary
/// embedding's inv_freq) or CONSTANT_TENSOR, in the metadata of the
/// initializer's value_info (or input, or the initializer itself), and the
/// whole signature in the graph's. Only a PARAMETER trains; the others are
/// buffers. An initializer the signature does not list is the exporter's
/// own: a Python scalar, or what its optimizer folded (`folded_from`). One
/// folded from a parameter (a transposed weight) still trains; any other
/// (a rotary table folded from inv_freq, a mask, a scalar) is a constant,
/// read as a Constant node is. The legacy exporter records nothing: there
/// an initializer is a parameter unless a node reads it as state (batch
/// norm's running statistics).
void Importer::classifyExportedInitializers() {
  constexpr StringRef kKind = "pkg.torch.export.graph_signature.InputSpec.kind";
  llvm::StringMap<std::string> kinds = signatureInputKinds(graph);
  bool fromSignature = !kinds.empty();
  auto note = [&](const std::string &name, std::optional<std::string> kind) {
    if (kind)
      kinds[name] = *kind;
  };
  llvm::StringMap<std::string> foldedFrom;
  for (const onnx::ValueInfoProto &info : graph.value_info()) {
    note(info.name(), getMetadata(info, /*field=*/4, kKind));
    if (std::optional<std::string> from = getMetadata(
            info, /*field=*/4, "pkg.onnxscript.optimizer.folded_from"))
      foldedFrom[info.name()] = *from;
  }
  for (const onnx::ValueInfoProto &info : graph.input())
    note(info.name(), getMetadata(info, /*field=*/4, kKind));
  for (const onnx::TensorProto &tensor : graph.initializer())
    note(tensor.name(), getMetadata(tensor, /*field=*/16, kKind));
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    const std::string &name = tensor.name();
    if (auto kind = kinds.find(name); kind != kinds.end()) {
      if (kind->second != "PARAMETER")
        exportedBuffers.insert(name);
      continue;
    }
    if (!fromSignature)
      continue;
    auto from = foldedFrom.find(name);
    if (from != foldedFrom.end() && foldedFromParameter(from->second, kinds))
      continue;
    initializers.erase(name);
    constantNodes[name] = &tensor;
  }
}

/// The module path a node came from, from the exporter's name scopes
/// (`['', 'layer1', '0', 'bn1', '_native_batch_norm_legit_functional']`:
/// "layer1.0.bn1"); empty if the node does not say.
static std::string getModulePath(const onnx::NodeProto &node) {
  std::optional<std::string> scopes =
      getNodeMetadata(node, "pkg.torch.onnx.name_scopes");
  if (!scopes)
    return "";
  SmallVector<StringRef> parts;
  StringRef(*scopes).trim("[] ").split(parts, ',');
  std::string path;
  // The last scope is the ATen call, not a module.
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    StringRef part = parts[i].trim().trim("'\"");
    if (part.empty())
      continue;
    path += (path.empty() ? "" : ".") + part.str();
  }
  return path;
}

void checkExportRewrite(const onnx::NodeProto &node) {
  std::optional<std::string> rule =
      getNodeMetadata(node, "pkg.onnxscript.rewriter.rule_name");
  // FuseBatchNormIntoConv, ...IntoConvTranspose, ...IntoGemm: the batch's
  // statistics, which training normalizes with, are gone.
  if (!rule || !StringRef(*rule).starts_with("FuseBatchNormInto"))
    return;
  std::string module = getModulePath(node);
  fail("the exporter's optimizer folded batch norm" +
       (module.empty() ? std::string() : " '" + module + "'") +
       " into this node (" + *rule +
       "), which leaves nothing to train it with; export with "
       "torch.onnx.export(..., optimize=False), or dynamo=False");
}

} // namespace dpc::frontend
