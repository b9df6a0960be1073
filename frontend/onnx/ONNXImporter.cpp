//===- ONNXImporter.cpp - ONNX model file to nn IR ------------------------===//
//
// Reads a ModelProto, checks it, and emits one nn op (or a few) per node in
// graph order. Every op is built with placeholder result types that the nn
// dialect's own shape inference then fills in, so a model whose shapes do not
// fit is reported at the node that breaks them, with the op's own message.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ONNXImporter.h"
#include "frontend/onnx/ImportContext.h"
#include "frontend/onnx/LstmImport.h"
#include "frontend/onnx/ModelValidation.h"
#include "frontend/onnx/ShapeFolding.h"

#include "ir/nn/NNOps.h"
#include "runtime/abi/CheckedMath.h"
#include "runtime/io/OneLine.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <memory>

using namespace mlir;
using namespace dpc;
using frontend::kBatch;
using frontend::kMaxOpset;
using frontend::kMinOpset;
using frontend::KnownTensor;

namespace {

/// An import failure: its message is the one line the user sees.
struct ImportError {
  std::string message;
};

[[noreturn]] void fail(const std::string &message) {
  throw ImportError{message};
}

/// ONNX stores these attributes as float32: read 1e-5f back as 1e-5 rather
/// than as the double nearest the float (9.99999974e-6), so the IR shows the
/// value the model's author wrote.
double shortestDecimal(float value) {
  char text[32];
  for (int digits = 1; digits < 9; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtof(text, nullptr) == value)
      return std::strtod(text, nullptr);
  }
  return value;
}

FailureOr<Type> elementTypeOf(MLIRContext &ctx, int32_t onnxType) {
  Builder b(&ctx);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return Type(b.getF32Type());
  case onnx::TensorProto::DOUBLE:
    return Type(b.getF64Type());
  case onnx::TensorProto::FLOAT16:
    return Type(b.getF16Type());
  case onnx::TensorProto::BFLOAT16:
    return Type(b.getBF16Type());
  case onnx::TensorProto::INT64:
    return Type(b.getIntegerType(64));
  case onnx::TensorProto::INT32:
    return Type(b.getIntegerType(32));
  default:
    return failure();
  }
}

class Importer : public frontend::ImportContext {
public:
  Importer(MLIRContext &ctx, StringRef path, const onnx::ModelProto &model)
      : ctx(ctx), builder(&ctx), path(path), model(model),
        graph(model.graph()) {}

  OwningOpRef<ModuleOp> run();

private:
  // Graph-level pieces.
  int64_t defaultOpset() const;
  void declareInputs(Block &body);
  void importNode(const onnx::NodeProto &node, int index);
  void declareOutputs(Block &body);

  // Values.
  Value lookup(const std::string &name, bool isBuffer = false);
  Value operand(const onnx::NodeProto &node, int i, bool isBuffer = false);
  Value optionalOperand(const onnx::NodeProto &node, int i);
  const onnx::TensorProto *constantTensor(const std::string &name) const;
  /// Input `i` as integers; kBatch entries only if `allowBatch`.
  SmallVector<int64_t> constantInts(const onnx::NodeProto &node, int i,
                                    bool allowBatch = false);
  /// The value of `name` if it is known at import (ShapeFolding.h): shape
  /// arithmetic's results, Constant nodes, integer initializers. Float
  /// initializers are parameters, never folded away.
  const KnownTensor *knownValue(const std::string &name);
  /// Input `i` as a number if it is given and a known one-element tensor.
  std::optional<double> knownScalar(const onnx::NodeProto &node, int i);
  /// Evaluates a shape-arithmetic node on known inputs; false when an input
  /// is a tensor computed at run time.
  bool foldNode(const onnx::NodeProto &node);
  /// The ONNX element type of value `name`.
  int32_t onnxTypeOf(const std::string &name);
  Value materialize(const std::string &name, const KnownTensor &tensor);
  DenseElementsAttr toElementsAttr(const onnx::TensorProto &tensor);
  void define(const onnx::NodeProto &node, int i, Value value);

  // Attributes.
  const onnx::AttributeProto *attr(const onnx::NodeProto &node,
                                   StringRef name) const;
  int64_t intAttr(const onnx::NodeProto &node, StringRef name,
                  int64_t dflt) const;
  float floatAttr(const onnx::NodeProto &node, StringRef name,
                  float dflt) const;
  SmallVector<int64_t> intsAttr(const onnx::NodeProto &node, StringRef name,
                                ArrayRef<int64_t> dflt) const;
  std::string stringAttr(const onnx::NodeProto &node, StringRef name,
                         StringRef dflt) const;

  // ImportContext, for LstmImport; create<OpTy> builds through `build`.
  Value valueOf(const std::string &name) override { return lookup(name); }
  const KnownTensor *knownTensorOf(const std::string &name) override {
    return knownValue(name);
  }
  Operation *build(StringRef opName, ValueRange operands,
                   ArrayRef<NamedAttribute> attrs,
                   unsigned numResults) override;
  void bind(const std::string &name, Value value) override {
    values[name] = value;
    batchScaleOf(value);
  }
  void bindKnown(const std::string &name, KnownTensor value) override {
    known[name] = std::move(value);
  }
  [[noreturn]] void error(const std::string &message) override {
    fail(message);
  }
  OpBuilder &opBuilder() override { return builder; }
  NamedAttribute named(StringRef name, Attribute value) {
    return builder.getNamedAttr(name, value);
  }
  NamedAttribute i64Array(StringRef name, ArrayRef<int64_t> values) {
    return named(name, builder.getDenseI64ArrayAttr(values));
  }

  // Per-family node importers.
  void importConv(const onnx::NodeProto &node);
  void importBatchNorm(const onnx::NodeProto &node);
  void importPool(const onnx::NodeProto &node, bool isMax);
  void importPad(const onnx::NodeProto &node);
  /// ReduceMean (`mean`) or ReduceSum over non-batch axes.
  void importReduce(const onnx::NodeProto &node, bool mean);
  void importPow(const onnx::NodeProto &node);
  void importClip(const onnx::NodeProto &node);
  void importDropout(const onnx::NodeProto &node);
  /// Dropout written out with random ops (PyTorch 2's bernoulli, the
  /// stochastic depth of EfficientNet and ConvNeXt): see RandomMask.
  bool importRandomMask(const onnx::NodeProto &node);
  Value createDropout(Value input, double ratio, bool rowwise);
  void importLayerNorm(const onnx::NodeProto &node);
  void importDiv(const onnx::NodeProto &node);
  /// Where of a known condition between a tensor and a known value (a
  /// causal attention mask's masked_fill): x * keep + fill.
  void importWhere(const onnx::NodeProto &node);
  void importSlice(const onnx::NodeProto &node);
  void importGather(const onnx::NodeProto &node);
  /// Dims [start, end) of `axis` (not the batch) of `input`.
  Value createSlice(Value input, int64_t axis, int64_t start, int64_t end);
  void importTranspose(const onnx::NodeProto &node);
  void importConcat(const onnx::NodeProto &node);
  void importSplit(const onnx::NodeProto &node);
  void importSplitToSequence(const onnx::NodeProto &node);
  void importSequenceAt(const onnx::NodeProto &node);
  int64_t splitAxis(const onnx::NodeProto &node, Value input);
  SmallVector<Value> createSplit(Value input, int64_t axis,
                                 ArrayRef<int64_t> sizes);
  /// `axes` as dims in [0, rank), each once; fails naming a bad one.
  SmallVector<int64_t> normalizeAxes(ArrayRef<int64_t> axes, int64_t rank);
  void importGemm(const onnx::NodeProto &node);
  void importReshape(const onnx::NodeProto &node);
  void importMatMul(const onnx::NodeProto &node);
  /// Whether `node`, reading known values repeated for each sample (its
  /// input 0 or others), computes the same on one sample's values.
  bool foldsPerSample(const onnx::NodeProto &node);
  /// Rows `ids` (constant, consecutive or one repeated) of `table`, shaped
  /// [ids dims..., features].
  Value constantRows(Value table, const KnownTensor &ids);
  /// Expand of a tensor computed at run time: to the batch only.
  void importExpand(const onnx::NodeProto &node);
  /// Squeeze/Unsqueeze of a tensor (shape tensors fold): a reshape.
  void importSqueeze(const onnx::NodeProto &node, bool unsqueeze);
  /// How many times the batch the dynamic dim of `value` is: 1 for the
  /// batch itself, more where a reshape merged it with static dims.
  int64_t batchScaleOf(Value value);
  void importSoftmax(const onnx::NodeProto &node, bool isLog);
  void importConstant(const onnx::NodeProto &node);
  void importIdentity(const onnx::NodeProto &node);
  void importCast(const onnx::NodeProto &node);
  bool importNanGuard(const onnx::NodeProto &node);
  std::pair<Value, Value> elementwiseOperands(const onnx::NodeProto &node);
  void checkSoftmaxRowsKept(Value probabilities);
  SmallVector<int64_t> spatialPads(const onnx::NodeProto &node);

  MLIRContext &ctx;
  OpBuilder builder;
  std::string path;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  int64_t opset = 0;
  Block *body = nullptr;
  Location currentLoc = UnknownLoc::get(&ctx);

  llvm::StringMap<Value> values;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringMap<const onnx::TensorProto *> constantNodes;
  llvm::StringMap<KnownTensor> known;
  /// How many times the batch a value's dynamic dim is (see batchScaleOf).
  DenseMap<Value, int64_t> batchScales;
  /// The first data input: what sizes a tensor expanded to the batch.
  Value dataInput;
  /// Training-mode dropouts imported so far: the next one's mask key.
  int64_t numDropouts = 0;
  /// A random mask on its way to a Mul: a fill of `shape` (dim 0 the
  /// batch), uniform noise of that shape, its comparison with `keep`
  /// (Bernoulli), and that divided by `keep` (scaled); x times the scaled
  /// mask is dropout with ratio 1 - keep, of whole rows if every other dim
  /// of the mask is 1.
  struct RandomMask {
    enum Stage { Fill, Uniform, Bernoulli, Scaled } stage;
    SmallVector<int64_t> shape;
    double keep = 1;
    /// A Fill that expands known values to the batch (BERT's token-type
    /// ids), not an empty tensor: what it repeats for each sample.
    std::optional<KnownTensor> repeated;
  };
  llvm::StringMap<RandomMask> randomMasks;
  /// IsNaN's outputs, by the name of the tensor each tests: only
  /// Where(IsNaN(x), c, x) may read them (importNanGuard).
  llvm::StringMap<std::string> nanTests;
  /// One sample's constant of a value repeated for each sample, by name.
  llvm::StringMap<Value> sampleConstants;
  /// LSTM, and the sequence-first views and fills around it.
  frontend::LstmImport lstmImport{*this};
  /// SplitToSequence's parts, for SequenceAt.
  llvm::StringMap<SmallVector<Value>> sequences;
  /// Outputs that have no nn counterpart (batch-norm's running statistics
  /// in training-mode exports): an error only if something reads them.
  llvm::StringMap<std::string> unavailable;
  /// The static batch size the data inputs were exported with, if any.
  std::optional<int64_t> exportedBatch;
  /// Naming attributes of the function's arguments and results, in order.
  SmallVector<SmallVector<NamedAttribute, 2>> argumentAttrs;
  SmallVector<NamedAttribute> resultNames;
  /// Initializers that an Identity node copies under a new name: the new
  /// parameter's initial value is the source's (exporters deduplicate equal
  /// initializers this way; the parameters stay distinct).
  llvm::StringMap<std::string> initialValueSource;
  /// Tensors built from Constant nodes' scalar and list attributes.
  std::vector<std::unique_ptr<onnx::TensorProto>> ownedTensors;
};

int64_t Importer::defaultOpset() const {
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      return entry.version();
  // IR versions before 3 had no opset imports; they are far older than 11.
  return 0;
}

//===----------------------------------------------------------------------===//
// Values and constants
//===----------------------------------------------------------------------===//

Value Importer::lookup(const std::string &name, bool isBuffer) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  if (auto it = unavailable.find(name); it != unavailable.end())
    fail(it->second);
  if (auto it = randomMasks.find(name);
      it != randomMasks.end() && it->second.repeated) {
    // Known values repeated for each sample (BERT's all-ones attention
    // mask): one sample's, then one per row of the data.
    Value sample = materialize(name, *it->second.repeated);
    if (!isa<FloatType>(
            cast<RankedTensorType>(sample.getType()).getElementType()))
      fail("value '" + name +
           "' repeats integers for each sample; dpc "
           "repeats only floating-point values");
    Value rows = create<nn::BroadcastRowsOp>({sample, dataInput});
    values[name] = rows;
    return rows;
  }
  if (randomMasks.count(name))
    fail("value '" + name +
         "' is random noise used other than as a dropout mask (x times "
         "(uniform < keep) / keep), which dpc does not support");
  if (auto it = initializers.find(name); it != initializers.end()) {
    // First use of an initializer: it becomes a named function argument.
    const onnx::TensorProto &tensor = *it->second;
    FailureOr<Type> element = elementTypeOf(ctx, tensor.data_type());
    if (failed(element))
      fail("initializer '" + name + "' has unsupported element type " +
           std::to_string(tensor.data_type()));
    SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
    Value arg = body->addArgument(RankedTensorType::get(shape, *element),
                                  NameLoc::get(builder.getStringAttr(name)));
    SmallVector<NamedAttribute, 2> &attrs = argumentAttrs.emplace_back();
    attrs.push_back(named(isBuffer ? nn::NNDialect::kBufferAttrName
                                   : nn::NNDialect::kParamAttrName,
                          builder.getStringAttr(name)));
    if (auto source = initialValueSource.find(name);
        source != initialValueSource.end())
      attrs.push_back(named(nn::NNDialect::kInitFromAttrName,
                            builder.getStringAttr(source->second)));
    values[name] = arg;
    return arg;
  }
  if (auto it = constantNodes.find(name); it != constantNodes.end()) {
    Value constant = create<nn::ConstantOp>(
        {}, {named("value", toElementsAttr(*it->second))});
    values[name] = constant;
    return constant;
  }
  if (auto it = known.find(name); it != known.end())
    return materialize(name, it->second);
  if (Value view = lstmImport.materialize(name))
    return view;
  fail("value '" + name + "' is used but never defined");
}

Value Importer::operand(const onnx::NodeProto &node, int i, bool isBuffer) {
  if (i >= node.input_size() || node.input(i).empty())
    fail("missing input " + std::to_string(i));
  return lookup(node.input(i), isBuffer);
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

Value Importer::optionalOperand(const onnx::NodeProto &node, int i) {
  if (i >= node.input_size() || node.input(i).empty())
    return Value();
  return lookup(node.input(i));
}

const onnx::TensorProto *
Importer::constantTensor(const std::string &name) const {
  if (auto it = constantNodes.find(name); it != constantNodes.end())
    return it->second;
  if (auto it = initializers.find(name); it != initializers.end())
    return it->second;
  return nullptr;
}

/// The number of elements `tensor`'s dims say it has; fails on a negative
/// dim or a count whose bytes would overflow.
static size_t elementCount(const onnx::TensorProto &tensor) {
  constexpr int64_t kMaxElements = INT64_MAX / 8;
  std::optional<int64_t> count = checkedProduct(tensor.dims(), kMaxElements);
  if (!count)
    fail("tensor '" + tensor.name() +
         "' has a negative dimension or too many elements");
  return static_cast<size_t>(*count);
}

/// Reads `count` little-endian values of type T from raw_data or the typed
/// repeated field.
template <typename T, typename Repeated>
static std::vector<T> tensorValues(const onnx::TensorProto &tensor,
                                   const Repeated &typed, size_t count) {
  std::vector<T> result(count);
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (raw.size() != count * sizeof(T))
      fail("tensor '" + tensor.name() + "' holds " +
           std::to_string(raw.size()) + " bytes of data, expected " +
           std::to_string(count * sizeof(T)));
    std::memcpy(result.data(), raw.data(), raw.size());
    return result;
  }
  if (static_cast<size_t>(typed.size()) != count)
    fail("tensor '" + tensor.name() + "' holds " +
         std::to_string(typed.size()) + " values, expected " +
         std::to_string(count));
  for (size_t i = 0; i < count; ++i)
    result[i] = static_cast<T>(typed.Get(i));
  return result;
}

DenseElementsAttr Importer::toElementsAttr(const onnx::TensorProto &tensor) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    fail("tensor '" + tensor.name() +
         "' keeps its data in an external file, which is not supported here");
  if (tensor.data_type() == onnx::TensorProto::BOOL) {
    // One byte per value in raw data, else int32_data (Dropout's
    // training_mode, Where's conditions).
    size_t count = elementCount(tensor);
    std::vector<uint8_t> bytes =
        tensorValues<uint8_t>(tensor, tensor.int32_data(), count);
    SmallVector<bool> values(bytes.begin(), bytes.end());
    return DenseElementsAttr::get(
        RankedTensorType::get(
            SmallVector<int64_t>(tensor.dims().begin(), tensor.dims().end()),
            builder.getI1Type()),
        ArrayRef<bool>(values));
  }
  FailureOr<Type> element = elementTypeOf(ctx, tensor.data_type());
  if (failed(element))
    fail("tensor '" + tensor.name() + "' has unsupported element type " +
         std::to_string(tensor.data_type()));
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  size_t count = elementCount(tensor);
  auto type = RankedTensorType::get(shape, *element);
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return DenseElementsAttr::get(
        type,
        ArrayRef(tensorValues<float>(tensor, tensor.float_data(), count)));
  case onnx::TensorProto::DOUBLE:
    return DenseElementsAttr::get(
        type,
        ArrayRef(tensorValues<double>(tensor, tensor.double_data(), count)));
  case onnx::TensorProto::INT64:
    return DenseElementsAttr::get(
        type,
        ArrayRef(tensorValues<int64_t>(tensor, tensor.int64_data(), count)));
  case onnx::TensorProto::INT32:
    return DenseElementsAttr::get(
        type,
        ArrayRef(tensorValues<int32_t>(tensor, tensor.int32_data(), count)));
  default:
    fail("tensor '" + tensor.name() + "' has an element type (" +
         std::to_string(tensor.data_type()) +
         ") that cannot be read as a constant");
  }
}

SmallVector<int64_t> Importer::constantInts(const onnx::NodeProto &node, int i,
                                            bool allowBatch) {
  if (i >= node.input_size() || node.input(i).empty())
    fail("missing input " + std::to_string(i));
  const KnownTensor *tensor = knownValue(node.input(i));
  if (!tensor)
    fail("input '" + node.input(i) +
         "' must be a constant (an initializer, a Constant node or shape "
         "arithmetic on them)");
  if (tensor->isFloat())
    fail("input '" + node.input(i) + "' must be an integer tensor");
  if (!allowBatch && tensor->hasBatch())
    fail("input '" + node.input(i) +
         "' depends on the batch size, which dpc keeps open until run time");
  return SmallVector<int64_t>(tensor->ints.begin(), tensor->ints.end());
}

const KnownTensor *Importer::knownValue(const std::string &name) {
  if (auto it = known.find(name); it != known.end())
    return &it->second;
  const onnx::TensorProto *tensor = nullptr;
  if (auto it = constantNodes.find(name); it != constantNodes.end())
    tensor = it->second;
  else if (auto it = initializers.find(name); it != initializers.end())
    tensor = it->second;
  if (!tensor)
    return nullptr;
  KnownTensor value;
  value.type = tensor->data_type();
  value.dims.assign(tensor->dims().begin(), tensor->dims().end());
  bool isInitializer = !constantNodes.count(name);
  if (value.isFloat() && isInitializer)
    return nullptr; // a parameter: it must stay one
  if (value.getNumElements() > (1 << 20))
    return nullptr;
  DenseElementsAttr attr = toElementsAttr(*tensor);
  if (value.isFloat())
    for (const APFloat &v : attr.getValues<APFloat>())
      value.floats.push_back(v.convertToDouble());
  else
    for (const APInt &v : attr.getValues<APInt>())
      value.ints.push_back(v.getSExtValue());
  return &(known[name] = std::move(value));
}

std::optional<double> Importer::knownScalar(const onnx::NodeProto &node,
                                            int i) {
  if (i >= node.input_size() || node.input(i).empty())
    return std::nullopt;
  const KnownTensor *value = knownValue(node.input(i));
  if (!value || value->getNumElements() != 1)
    return std::nullopt;
  return value->isFloat() ? value->floats[0]
                          : static_cast<double>(value->ints[0]);
}

int32_t Importer::onnxTypeOf(const std::string &name) {
  if (const KnownTensor *value = knownValue(name))
    return value->type;
  if (auto it = initializers.find(name); it != initializers.end())
    return it->second->data_type();
  Type element =
      cast<RankedTensorType>(lookup(name).getType()).getElementType();
  if (element.isF64())
    return onnx::TensorProto::DOUBLE;
  if (element.isInteger(64))
    return onnx::TensorProto::INT64;
  if (element.isInteger(32))
    return onnx::TensorProto::INT32;
  return onnx::TensorProto::FLOAT;
}

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

bool Importer::foldNode(const onnx::NodeProto &node) {
  std::vector<const KnownTensor *> inputs;
  std::vector<KnownTensor> shapes; // the dims of tensors whose Shape is read
  shapes.reserve(node.input_size());
  bool repeated = false; // an input is known values repeated per sample
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string &name = node.input(i);
    const KnownTensor *value = name.empty() ? nullptr : knownValue(name);
    auto mask = name.empty() ? randomMasks.end() : randomMasks.find(name);
    if (!value && mask != randomMasks.end() && mask->second.repeated) {
      if (node.op_type() == "Shape") {
        KnownTensor &dims = shapes.emplace_back();
        dims.dims.assign(mask->second.shape.begin(), mask->second.shape.end());
        value = &dims;
      } else {
        value = &*mask->second.repeated;
        repeated = true;
      }
    }
    if (!value && !name.empty() && i == 0 &&
        (node.op_type() == "Shape" || node.op_type() == "Size")) {
      // Only the dims: of an initializer without reading it, of a tensor
      // from its type (the open batch is kBatch).
      KnownTensor &dims = shapes.emplace_back();
      if (auto it = initializers.find(name); it != initializers.end()) {
        dims.dims.assign(it->second->dims().begin(), it->second->dims().end());
      } else {
        auto type = cast<RankedTensorType>(lookup(name).getType());
        int64_t batch = frontend::batchTimes(batchScaleOf(lookup(name)));
        for (int64_t d : type.getShape())
          dims.dims.push_back(ShapedType::isDynamic(d) ? batch : d);
      }
      value = &dims;
    }
    inputs.push_back(value);
  }
  if (repeated && !foldsPerSample(node))
    return false;
  int32_t castTarget = 0;
  if (node.op_type() == "CastLike") {
    if (node.input_size() < 2 || !inputs[0])
      return false;
    castTarget = randomMasks.count(node.input(1)) ? onnx::TensorProto::FLOAT
                                                  : onnxTypeOf(node.input(1));
  }
  std::optional<std::vector<KnownTensor>> outputs;
  try {
    outputs = frontend::foldNode(node, inputs, opset, castTarget);
  } catch (frontend::FoldError &e) {
    fail(e.message);
  }
  if (!outputs)
    return false;
  for (size_t i = 0; i < outputs->size() && i < size_t(node.output_size());
       ++i) {
    if (node.output(i).empty())
      continue;
    if (!repeated) {
      known[node.output(i)] = std::move((*outputs)[i]);
      continue;
    }
    // Folded per sample: still repeated for each, dim 0 the batch.
    KnownTensor &sample = (*outputs)[i];
    if (sample.dims.empty() || sample.dims[0] != 1)
      fail("moves the batch of values repeated for each sample");
    RandomMask mask{RandomMask::Fill, {}, 1, std::move(sample)};
    mask.shape.assign(mask.repeated->dims.begin(), mask.repeated->dims.end());
    mask.shape[0] = kBatch;
    randomMasks[node.output(i)] = std::move(mask);
  }
  return true;
}

Value Importer::materialize(const std::string &name,
                            const KnownTensor &tensor) {
  if (tensor.hasBatch())
    fail("value '" + name +
         "' holds the batch size, which dpc keeps open until run time; it "
         "cannot be used as a tensor");
  FailureOr<Type> element = elementTypeOf(ctx, tensor.type);
  if (tensor.type == onnx::TensorProto::BOOL)
    element = Type(builder.getI64Type());
  if (failed(element))
    fail("value '" + name + "' has an element type (" +
         std::to_string(tensor.type) + ") dpc cannot use as a tensor");
  auto type = RankedTensorType::get(tensor.dims, *element);
  DenseElementsAttr attr;
  if (auto floatType = dyn_cast<FloatType>(*element)) {
    SmallVector<APFloat> floats;
    for (double v : tensor.floats) {
      APFloat f(v);
      bool lost;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      floats.push_back(f);
    }
    attr = DenseElementsAttr::get(type, floats);
  } else {
    SmallVector<APInt> ints;
    for (int64_t v : tensor.ints)
      ints.emplace_back(element->getIntOrFloatBitWidth(), v, true);
    attr = DenseElementsAttr::get(type, ints);
  }
  Value constant = create<nn::ConstantOp>({}, {named("value", attr)});
  values[name] = constant;
  return constant;
}

void Importer::define(const onnx::NodeProto &node, int i, Value value) {
  if (i < node.output_size() && !node.output(i).empty())
    values[node.output(i)] = value;
  // Memoized here, so the lazy walk back stays within this node's ops.
  batchScaleOf(value);
}

/// `type` as MLIR prints it, for messages.
static std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// nn.reshape's target for `dims`: the batch's dim, whichever it is, is
/// left for shape inference (-1), so it follows the batch at run time.
static SmallVector<int64_t> reshapeTarget(ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape;
  for (int64_t dim : dims)
    shape.push_back(ShapedType::isDynamic(dim) ? -1 : dim);
  return shape;
}

/// Static element count of `type` without its dynamic dims.
static int64_t staticElements(RankedTensorType type) {
  int64_t n = 1;
  for (int64_t d : type.getShape())
    if (!ShapedType::isDynamic(d))
      n *= d;
  return n;
}

int64_t Importer::batchScaleOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.hasStaticShape())
    return 1;
  if (auto it = batchScales.find(value); it != batchScales.end())
    return it->second;
  int64_t scale = 1;
  if (Operation *op = value.getDefiningOp()) {
    // An op's dynamic dim is its batch-carrying operand's, except where a
    // reshape merges or splits it with static dims.
    for (Value operand : op->getOperands()) {
      auto operandType = dyn_cast<RankedTensorType>(operand.getType());
      if (!operandType || operandType.hasStaticShape())
        continue;
      scale = batchScaleOf(operand);
      if (isa<nn::ReshapeOp, nn::FlattenOp>(op)) {
        int64_t in = scale * staticElements(operandType),
                out = staticElements(type);
        if (in % out != 0)
          fail("the reshape to " + typeToString(type) +
               " splits the batch size: it must stay a whole factor of a dim");
        scale = in / out;
      }
      break;
    }
  }
  batchScales[value] = scale;
  return scale;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *Importer::attr(const onnx::NodeProto &node,
                                           StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t Importer::intAttr(const onnx::NodeProto &node, StringRef name,
                          int64_t dflt) const {
  const onnx::AttributeProto *a = attr(node, name);
  return a ? a->i() : dflt;
}

float Importer::floatAttr(const onnx::NodeProto &node, StringRef name,
                          float dflt) const {
  const onnx::AttributeProto *a = attr(node, name);
  return a ? a->f() : dflt;
}

SmallVector<int64_t> Importer::intsAttr(const onnx::NodeProto &node,
                                        StringRef name,
                                        ArrayRef<int64_t> dflt) const {
  const onnx::AttributeProto *a = attr(node, name);
  if (!a)
    return SmallVector<int64_t>(dflt);
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string Importer::stringAttr(const onnx::NodeProto &node, StringRef name,
                                 StringRef dflt) const {
  const onnx::AttributeProto *a = attr(node, name);
  return a ? a->s() : dflt.str();
}

//===----------------------------------------------------------------------===//
// Op construction
//===----------------------------------------------------------------------===//

Operation *Importer::build(StringRef opName, ValueRange operands,
                           ArrayRef<NamedAttribute> attrs,
                           unsigned numResults) {
  std::string diagnostic;
  ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &diag) {
    if (diagnostic.empty())
      diagnostic = diag.str();
    return success();
  });
  OperationState state(currentLoc, opName);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(SmallVector<Type>(numResults, builder.getNoneType()));
  Operation *op = builder.create(state);
  if (failed(nn::inferResultTypes(cast<InferTypeOpInterface>(op)))) {
    op->erase();
    fail(diagnostic.empty() ? "invalid operands" : diagnostic);
  }
  return op;
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

void Importer::declareInputs(Block &body) {
  for (const auto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue; // Older exports list initializers among the inputs.
    if (!input.type().has_tensor_type())
      fail("input '" + input.name() + "' is not a tensor");
    const auto &tensorType = input.type().tensor_type();
    FailureOr<Type> element = elementTypeOf(ctx, tensorType.elem_type());
    if (failed(element))
      fail("input '" + input.name() + "' has unsupported element type " +
           std::to_string(tensorType.elem_type()));
    if (!tensorType.has_shape())
      fail("input '" + input.name() + "' has no shape");
    SmallVector<int64_t> shape;
    for (const auto &dim : tensorType.shape().dim()) {
      size_t d = shape.size();
      if (dim.has_dim_value() && dim.dim_value() > 0) {
        shape.push_back(dim.dim_value());
      } else if (d == 0) {
        shape.push_back(ShapedType::kDynamic);
      } else {
        fail("dimension " + std::to_string(d) + " of input '" + input.name() +
             "' is symbolic; only the batch dimension (0) may be");
      }
    }
    if (shape.empty())
      fail("input '" + input.name() + "' has no batch dimension");
    // The batch an exporter traced with is not part of the model: keep it
    // open, and let --batch fix it.
    if (!ShapedType::isDynamic(shape[0])) {
      if (exportedBatch && *exportedBatch != shape[0])
        fail("inputs disagree on the batch size (" +
             std::to_string(*exportedBatch) + " vs " +
             std::to_string(shape[0]) + ")");
      exportedBatch = shape[0];
      shape[0] = ShapedType::kDynamic;
    }
    Value arg =
        body.addArgument(RankedTensorType::get(shape, *element),
                         NameLoc::get(builder.getStringAttr(input.name())));
    argumentAttrs.push_back({named(nn::NNDialect::kInputAttrName,
                                   builder.getStringAttr(input.name()))});
    values[input.name()] = arg;
    if (!dataInput)
      dataInput = arg;
  }
  if (argumentAttrs.empty())
    fail("the graph has no data input");
}

SmallVector<int64_t> Importer::spatialPads(const onnx::NodeProto &node) {
  std::string autoPad = stringAttr(node, "auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    fail("auto_pad=" + autoPad + " is not supported; use explicit pads");
  SmallVector<int64_t> pads = intsAttr(node, "pads", {0, 0, 0, 0});
  if (autoPad == "VALID")
    pads.assign(4, 0);
  if (pads.size() != 4)
    fail("only 2-D spatial padding is supported, got " +
         std::to_string(pads.size()) + " pads");
  // ONNX orders pads [top, left, bottom, right], as nn does.
  return pads;
}

void Importer::importConv(const onnx::NodeProto &node) {
  Value input = operand(node, 0), filter = operand(node, 1);
  if (cast<RankedTensorType>(filter.getType()).getRank() != 4)
    fail("only 2-D convolutions are supported");
  SmallVector<Value> operands = {input, filter};
  // A known all-zero bias (PyTorch 2's exporter writes an Expand-ed zero
  // for bias=False) is no bias.
  const KnownTensor *zeros = node.input_size() > 2 && !node.input(2).empty() &&
                                     !initializers.count(node.input(2))
                                 ? knownValue(node.input(2))
                                 : nullptr;
  bool zeroBias = zeros && zeros->isFloat() &&
                  llvm::all_of(zeros->floats, [](double v) { return v == 0; });
  if (!zeroBias)
    if (Value bias = optionalOperand(node, 2))
      operands.push_back(bias);
  define(node, 0,
         create<nn::Conv2dOp>(
             operands,
             {i64Array("stride", intsAttr(node, "strides", {1, 1})),
              i64Array("padding", spatialPads(node)),
              i64Array("dilation", intsAttr(node, "dilations", {1, 1})),
              named("groups",
                    builder.getI64IntegerAttr(intAttr(node, "group", 1)))}));
}

void Importer::importBatchNorm(const onnx::NodeProto &node) {
  SmallVector<Value> operands = {
      operand(node, 0), operand(node, 1), operand(node, 2),
      operand(node, 3, /*isBuffer=*/true), operand(node, 4, /*isBuffer=*/true)};
  // ONNX's momentum weighs the running value; PyTorch's (and nn's) the batch.
  double momentum = shortestDecimal(static_cast<float>(
      1.0 - shortestDecimal(floatAttr(node, "momentum", 0.9f))));
  define(
      node, 0,
      create<nn::BatchNormOp>(
          operands, {named("epsilon", builder.getF64FloatAttr(shortestDecimal(
                                          floatAttr(node, "epsilon", 1e-5f)))),
                     named("momentum", builder.getF64FloatAttr(momentum))}));
  // A training-mode export also outputs the updated running statistics (and
  // before opset 14, the batch statistics): in dpc the training step updates
  // them, so they have no value in the forward graph.
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      unavailable[node.output(i)] =
          "value '" + node.output(i) +
          "' (batch-norm statistics output) is read by a node; dpc's "
          "training step updates running statistics itself";
}

void Importer::importPool(const onnx::NodeProto &node, bool isMax) {
  Value input = operand(node, 0);
  SmallVector<int64_t> kernel = intsAttr(node, "kernel_shape", {});
  if (kernel.size() != 2)
    fail("only 2-D pooling is supported (kernel_shape must have 2 entries)");
  SmallVector<NamedAttribute> attrs = {
      i64Array("kernel_size", kernel),
      i64Array("stride", intsAttr(node, "strides", {1, 1})),
      i64Array("padding", spatialPads(node)),
      named("ceil_mode", builder.getBoolAttr(intAttr(node, "ceil_mode", 0)))};
  if (isMax) {
    if (intAttr(node, "storage_order", 0) != 0)
      fail("storage_order=1 is not supported");
    if (node.output_size() > 1 && !node.output(1).empty())
      unavailable[node.output(1)] =
          "value '" + node.output(1) +
          "' (max-pool indices) is read by a node; indices are not supported";
    attrs.push_back(i64Array("dilation", intsAttr(node, "dilations", {1, 1})));
    define(node, 0, create<nn::MaxPool2dOp>(input, attrs));
  } else {
    attrs.push_back(
        named("count_include_pad",
              builder.getBoolAttr(intAttr(node, "count_include_pad", 0))));
    define(node, 0, create<nn::AvgPool2dOp>(input, attrs));
  }
}

void Importer::importPad(const onnx::NodeProto &node) {
  std::string mode = stringAttr(node, "mode", "constant");
  if (mode != "constant")
    fail("mode '" + mode + "' is not supported; only constant padding is");
  Value input = operand(node, 0);
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  SmallVector<int64_t> pads = constantInts(node, 1);
  // From opset 18 an `axes` input says which dims `pads` covers.
  SmallVector<int64_t> axes;
  if (node.input_size() > 3 && !node.input(3).empty())
    axes = normalizeAxes(constantInts(node, 3), rank);
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
  double value = 0.0;
  if (node.input_size() > 2 && !node.input(2).empty()) {
    const onnx::TensorProto *tensor = constantTensor(node.input(2));
    if (!tensor)
      fail("constant_value must be a constant");
    DenseElementsAttr attr = toElementsAttr(*tensor);
    if (attr.getNumElements() != 1 || !isa<FloatType>(attr.getElementType()))
      fail("constant_value must be one floating-point value");
    value = (*attr.getValues<APFloat>().begin()).convertToDouble();
  }
  define(node, 0,
         create<nn::PadOp>(input,
                           {i64Array("low", low), i64Array("high", high),
                            named("value", builder.getF64FloatAttr(value))}));
}

void Importer::importTranspose(const onnx::NodeProto &node) {
  Value input = operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> reversed;
  for (int64_t d = type.getRank() - 1; d >= 0; --d)
    reversed.push_back(d);
  SmallVector<int64_t> perm = intsAttr(node, "perm", reversed);
  // The batch may move (attention works sequence-first): the compiler
  // follows it to whichever dim holds it.
  define(node, 0,
         create<nn::TransposeOp>(input, {i64Array("permutation", perm)}));
}

void Importer::importConcat(const onnx::NodeProto &node) {
  SmallVector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i)
    inputs.push_back(operand(node, i));
  if (inputs.empty())
    fail("needs at least one input");
  int64_t rank = cast<RankedTensorType>(inputs[0].getType()).getRank();
  int64_t axis = intAttr(node, "axis", 0);
  define(node, 0,
         create<nn::ConcatOp>(
             inputs, {named("axis", builder.getI64IntegerAttr(
                                        axis < 0 ? axis + rank : axis))}));
}

/// `axis` of `input`'s type, normalized: a static dim (not the batch's).
int64_t Importer::splitAxis(const onnx::NodeProto &node, Value input) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t axis = intAttr(node, "axis", 0);
  axis = axis < 0 ? axis + type.getRank() : axis;
  if (axis < 0 || axis >= type.getRank() || type.isDynamicDim(axis))
    fail("axis " + std::to_string(axis) +
         " is not a static dim of the input (the batch's cannot be split)");
  return axis;
}

SmallVector<Value> Importer::createSplit(Value input, int64_t axis,
                                         ArrayRef<int64_t> sizes) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t total = 0;
  SmallVector<Type> results;
  for (int64_t size : sizes) {
    if (size < 1)
      fail("split sizes must be positive");
    total += size;
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = size;
    results.push_back(RankedTensorType::get(shape, type.getElementType()));
  }
  if (total != type.getDimSize(axis))
    fail("split sizes add up to " + std::to_string(total) + ", dim " +
         std::to_string(axis) + " is " + std::to_string(type.getDimSize(axis)));
  auto split = builder.create<nn::SplitOp>(currentLoc, results, input,
                                           builder.getI64IntegerAttr(axis),
                                           builder.getDenseI64ArrayAttr(sizes));
  return SmallVector<Value>(split.getResults());
}

/// Parts of `size` (the last one smaller if they do not divide `dim`).
/// PyTorch's padding_idx of the embedding lookup `node`, which ONNX cannot
/// say: the legacy exporter drops it, the default exporter keeps it only in
/// the node's metadata, the FX call it came from
/// (`aten.embedding.default](args = (%w, %ids, P)`; no P: none). Debian's
/// ONNX 1.12 classes predate NodeProto's metadata_props (field 9, IR 10),
/// so it is read from the fields they do not know.
static std::optional<int64_t> embeddingPaddingIdx(const onnx::NodeProto &node) {
  constexpr StringRef kCall = "aten.embedding.default](args = (";
  const google::protobuf::UnknownFieldSet &unknown =
      node.GetReflection()->GetUnknownFields(node);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &field = unknown.field(i);
    onnx::StringStringEntryProto entry;
    if (field.number() != 9 ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED ||
        !entry.ParseFromString(field.length_delimited()) ||
        entry.key() != "pkg.torch.onnx.fx_node")
      continue;
    StringRef call = entry.value();
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
  return std::nullopt;
}

static SmallVector<int64_t> chunkSizes(int64_t dim, int64_t size) {
  SmallVector<int64_t> sizes;
  for (int64_t left = dim; left > 0; left -= size)
    sizes.push_back(std::min(size, left));
  return sizes;
}

void Importer::importSplit(const onnx::NodeProto &node) {
  Value input = operand(node, 0);
  int64_t axis = splitAxis(node, input);
  int64_t dim = cast<RankedTensorType>(input.getType()).getDimSize(axis);
  // The sizes: an attribute before opset 13, an optional input from it on;
  // without them, equal parts (from opset 18 `num_outputs` of them, the
  // last one smaller if they do not divide the dim).
  SmallVector<int64_t> sizes;
  if (opset < 13)
    sizes = intsAttr(node, "split", {});
  else if (node.input_size() > 1 && !node.input(1).empty())
    sizes = constantInts(node, 1);
  if (sizes.empty()) {
    int64_t parts = opset >= 18 && attr(node, "num_outputs")
                        ? intAttr(node, "num_outputs", 1)
                        : node.output_size();
    if (parts < 1)
      fail("num_outputs must be positive");
    sizes = chunkSizes(dim, (dim + parts - 1) / parts);
  }
  if (static_cast<int>(sizes.size()) != node.output_size())
    fail(std::to_string(sizes.size()) + " parts for " +
         std::to_string(node.output_size()) + " outputs");
  SmallVector<Value> parts = createSplit(input, axis, sizes);
  for (int i = 0; i < node.output_size(); ++i)
    define(node, i, parts[i]);
}

void Importer::importSplitToSequence(const onnx::NodeProto &node) {
  Value input = operand(node, 0);
  int64_t axis = splitAxis(node, input);
  int64_t dim = cast<RankedTensorType>(input.getType()).getDimSize(axis);
  if (node.input_size() < 2 || node.input(1).empty() ||
      intAttr(node, "keepdims", 1) == 0)
    fail("only a split with sizes and keepdims=1 is supported");
  // A scalar is the size of every part (torch.chunk, torch.split(n)).
  const KnownTensor *split = knownValue(node.input(1));
  SmallVector<int64_t> sizes = constantInts(node, 1);
  if (split && split->dims.empty() && sizes.size() == 1)
    sizes = chunkSizes(dim, sizes[0]);
  sequences[node.output(0)] = createSplit(input, axis, sizes);
}

void Importer::importSequenceAt(const onnx::NodeProto &node) {
  auto it =
      node.input_size() > 0 ? sequences.find(node.input(0)) : sequences.end();
  if (it == sequences.end())
    fail("reads a sequence dpc does not know (only SplitToSequence's)");
  SmallVector<int64_t> position = constantInts(node, 1);
  int64_t count = static_cast<int64_t>(it->second.size());
  int64_t p = position.size() == 1 ? position[0] : count;
  p = p < 0 ? p + count : p;
  if (p < 0 || p >= count)
    fail("position out of range for a sequence of " + std::to_string(count));
  define(node, 0, it->second[p]);
}

void Importer::importClip(const onnx::NodeProto &node) {
  // From opset 11 the bounds are optional inputs (constants, or shape
  // arithmetic on them); a missing one is the float range's end.
  auto bound = [&](int i, double fallback) {
    if (i >= node.input_size() || node.input(i).empty())
      return fallback;
    std::optional<double> value = knownScalar(node, i);
    if (!value)
      fail("input '" + node.input(i) + "' (a bound) must be a constant scalar");
    return *value;
  };
  double lowest = -std::numeric_limits<float>::max();
  double min = shortestDecimal(static_cast<float>(bound(1, lowest)));
  double max = shortestDecimal(
      static_cast<float>(bound(2, std::numeric_limits<float>::max())));
  if (min > max)
    fail("min " + std::to_string(min) + " is above max " + std::to_string(max));
  define(node, 0,
         create<nn::ClipOp>(operand(node, 0),
                            {named("min", builder.getF64FloatAttr(min)),
                             named("max", builder.getF64FloatAttr(max))}));
}

void Importer::importDropout(const onnx::NodeProto &node) {
  Value input = operand(node, 0);
  if (node.output_size() > 1 && !node.output(1).empty())
    unavailable[node.output(1)] =
        "value '" + node.output(1) +
        "' (dropout mask) is read by a node; dpc draws masks itself";
  // From opset 12, ratio and training_mode are optional inputs (constants);
  // without training_mode, or with it false, Dropout is the identity.
  // Before, ratio is an attribute, and an exporter writes Dropout only for a
  // training-mode model (an evaluation export leaves it out).
  auto scalar = [&](int i) -> std::optional<double> {
    if (i >= node.input_size() || node.input(i).empty())
      return std::nullopt;
    std::optional<double> value = knownScalar(node, i);
    if (!value)
      fail("input '" + node.input(i) + "' must be a constant scalar");
    return value;
  };
  double ratio =
      opset >= 12 ? scalar(1).value_or(0.5) : floatAttr(node, "ratio", 0.5f);
  bool training = opset >= 12 ? scalar(2).value_or(0.0) != 0 : true;
  if (!training || ratio == 0) {
    define(node, 0, input);
    return;
  }
  define(node, 0,
         createDropout(input, shortestDecimal(static_cast<float>(ratio)),
                       /*rowwise=*/false));
}

Value Importer::createDropout(Value input, double ratio, bool rowwise) {
  if (!(ratio >= 0 && ratio <= 1))
    fail("ratio " + std::to_string(ratio) + " is not in [0, 1]");
  SmallVector<NamedAttribute> attrs = {
      named("ratio", builder.getF64FloatAttr(ratio)),
      named("key", builder.getI64IntegerAttr(numDropouts++))};
  if (rowwise)
    attrs.push_back(named("rowwise", builder.getUnitAttr()));
  return create<nn::DropoutOp>(input, attrs);
}

bool Importer::importRandomMask(const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  auto maskOf = [&](int i) -> RandomMask * {
    if (i >= node.input_size())
      return nullptr;
    auto it = randomMasks.find(node.input(i));
    return it == randomMasks.end() ? nullptr : &it->second;
  };
  auto scalar = [&](int i) { return knownScalar(node, i); };
  auto define = [&](RandomMask mask) {
    randomMasks[node.output(0)] = std::move(mask);
    return true;
  };
  // An uninitialized tensor of a shape that follows the batch: the
  // exporter's torch.empty before bernoulli_.
  if ((op == "ConstantOfShape" && node.input_size() >= 1) ||
      (op == "Expand" && node.input_size() >= 2 && knownValue(node.input(0)))) {
    const KnownTensor *shape = knownValue(node.input(op == "Expand" ? 1 : 0));
    if (!shape || !shape->hasBatch() || shape->isFloat() ||
        shape->ints.empty() || shape->ints[0] != kBatch)
      return false;
    RandomMask mask{RandomMask::Fill, {}, 1, std::nullopt};
    mask.shape.assign(shape->ints.begin(), shape->ints.end());
    // What one sample holds: the op at a batch of 1.
    KnownTensor perSample;
    perSample.type = onnx::TensorProto::INT64;
    perSample.dims = {static_cast<int64_t>(mask.shape.size())};
    perSample.ints.assign(mask.shape.begin(), mask.shape.end());
    perSample.ints[0] = 1;
    std::vector<const KnownTensor *> inputs = {&perSample};
    if (op == "Expand")
      inputs = {knownValue(node.input(0)), &perSample};
    try {
      if (auto folded = frontend::foldNode(node, inputs, opset, 0))
        mask.repeated = std::move(folded->front());
    } catch (frontend::FoldError &) {
      // Not foldable per sample: only a random mask may read it.
    }
    return define(mask);
  }
  if (op == "Cast" || op == "CastLike") {
    RandomMask *mask = maskOf(0);
    // Known values repeated per sample are cast as values (foldNode).
    if (mask && mask->stage == RandomMask::Fill && mask->repeated)
      return false;
    return mask && define(*mask);
  }
  if (op == "RandomUniformLike") {
    RandomMask *mask = maskOf(0);
    if (!mask || mask->stage != RandomMask::Fill)
      return false;
    if (floatAttr(node, "low", 0.f) != 0.f ||
        floatAttr(node, "high", 1.f) != 1.f)
      fail("only uniform noise over [0, 1) can make a dropout mask");
    return define({RandomMask::Uniform, mask->shape, 1});
  }
  if (op == "Less") {
    RandomMask *mask = maskOf(0);
    std::optional<double> keep = scalar(1);
    if (!mask || mask->stage != RandomMask::Uniform)
      return false;
    if (!keep)
      fail("a dropout mask compares its noise with a constant probability");
    return define({RandomMask::Bernoulli, mask->shape, *keep});
  }
  if (op == "Div") {
    RandomMask *mask = maskOf(0);
    std::optional<double> divisor = scalar(1);
    if (!mask || mask->stage != RandomMask::Bernoulli)
      return false;
    if (!divisor || float(*divisor) != float(mask->keep))
      fail("a dropout mask must be divided by its keep probability");
    return define({RandomMask::Scaled, mask->shape, mask->keep});
  }
  if (op == "Mul") {
    int m = maskOf(1) ? 1 : maskOf(0) ? 0 : -1;
    if (m < 0)
      return false;
    RandomMask mask = *maskOf(m);
    if (mask.stage != RandomMask::Scaled)
      fail("a random mask must be (noise < keep) / keep before it scales a "
           "tensor");
    Value input = operand(node, 1 - m);
    auto type = cast<RankedTensorType>(input.getType());
    bool rowwise = llvm::all_of(ArrayRef(mask.shape).drop_front(),
                                [](int64_t d) { return d == 1; }) &&
                   type.getRank() == int64_t(mask.shape.size());
    bool elementwise = type.getRank() == int64_t(mask.shape.size()) &&
                       llvm::equal(type.getShape().drop_front(),
                                   ArrayRef(mask.shape).drop_front());
    if (!rowwise && !elementwise)
      fail("a dropout mask must have the shape of the tensor it scales, or "
           "one value per row");
    // Rows kept with probability keep: ratio 1 - keep, both as the float
    // decimals the exporter wrote (0.8 gives 0.2, as Dropout's ratio would).
    double keep = shortestDecimal(static_cast<float>(mask.keep));
    Importer::define(
        node, 0,
        createDropout(input, shortestDecimal(static_cast<float>(1.0 - keep)),
                      rowwise && !elementwise));
    return true;
  }
  return false;
}

/// An end that means "to the end of the dim" whatever its size: exporters
/// write INT64_MAX (or INT32_MAX) for x[:, ...].
constexpr int64_t kMaxSliceEnd = std::numeric_limits<int32_t>::max();

Value Importer::createSlice(Value input, int64_t axis, int64_t start,
                            int64_t end) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t dim = type.getDimSize(axis);
  bool batch = type.isDynamicDim(axis);
  if (start == 0 && (end == dim || (batch && end == kMaxSliceEnd)))
    return input; // the whole dim (x[:, ...] writes one for the batch)
  if (batch)
    fail("slicing the batch dim (" + std::to_string(axis) +
         ") is not supported");
  if (start >= end)
    fail("the slice of dim " + std::to_string(axis) + " is empty");
  // A split into the slice and what surrounds it; the rest's gradient is 0.
  SmallVector<int64_t> sizes;
  for (int64_t size : {start, end - start, dim - end})
    if (size > 0)
      sizes.push_back(size);
  SmallVector<Value> parts = createSplit(input, axis, sizes);
  return parts[start > 0 ? 1 : 0];
}

void Importer::importSlice(const onnx::NodeProto &node) {
  Value input = operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> starts = constantInts(node, 1);
  SmallVector<int64_t> ends = constantInts(node, 2);
  SmallVector<int64_t> axes;
  if (node.input_size() > 3 && !node.input(3).empty())
    axes = constantInts(node, 3);
  else
    for (int64_t d = 0; d < static_cast<int64_t>(starts.size()); ++d)
      axes.push_back(d);
  SmallVector<int64_t> steps(starts.size(), 1);
  if (node.input_size() > 4 && !node.input(4).empty())
    steps = constantInts(node, 4);
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
    result = createSlice(result, axes[i], clamp(starts[i]), clamp(ends[i]));
  }
  define(node, 0, result);
}

void Importer::importGather(const onnx::NodeProto &node) {
  // Rows of a table by constant ids (BERT's position and token-type ids),
  // repeated for each sample where the exporter expanded them to the batch.
  const KnownTensor *ids = knownValue(node.input(1));
  bool repeated = false;
  if (auto it = randomMasks.find(node.input(1));
      !ids && it != randomMasks.end() && it->second.repeated) {
    ids = &*it->second.repeated;
    repeated = true;
  }
  if (ids && !ids->isFloat() && ids->getNumElements() > 1 &&
      intAttr(node, "axis", 0) == 0) {
    Value rows = constantRows(operand(node, 0), *ids);
    if (repeated)
      rows = create<nn::BroadcastRowsOp>({rows, dataInput});
    return define(node, 0, rows);
  }
  // Rows of a float table by run-time indices: an embedding lookup.
  if (!knownValue(node.input(1)) && intAttr(node, "axis", 0) == 0) {
    Value table = operand(node, 0), indices = operand(node, 1);
    if (!isa<FloatType>(
            cast<RankedTensorType>(table.getType()).getElementType()) ||
        !isa<IntegerType>(
            cast<RankedTensorType>(indices.getType()).getElementType()))
      fail("only a float table indexed by integers is supported");
    SmallVector<NamedAttribute, 1> attrs;
    if (std::optional<int64_t> padding = embeddingPaddingIdx(node))
      attrs.push_back(
          named("padding_idx", builder.getI64IntegerAttr(*padding)));
    define(node, 0, create<nn::EmbeddingOp>({table, indices}, attrs));
    return;
  }
  // A constant index into a tensor (ViT's class token, x[:, 0]): a slice,
  // whose axis a scalar index removes.
  const KnownTensor *index = knownValue(node.input(1));
  if (!index || index->isFloat() || index->getNumElements() != 1)
    fail("only a constant index into a tensor is supported");
  Value input = operand(node, 0);
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
  Value slice = createSlice(input, axis, i, i + 1);
  if (index->dims.empty()) {
    SmallVector<int64_t> dims(type.getShape());
    dims.erase(dims.begin() + axis);
    slice =
        create<nn::ReshapeOp>(slice, {i64Array("shape", reshapeTarget(dims))});
  }
  define(node, 0, slice);
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

void Importer::importDiv(const onnx::NodeProto &node) {
  // By a constant (GELU's x / sqrt(2), attention's scaling, a per-channel
  // normalization): times its reciprocal, of the divisor's shape, which
  // rounds within an ulp of the quotient. By a tensor: times
  // nn.reciprocal of it, whose gradient gives the divisor's.
  const KnownTensor *divisor = knownValue(node.input(1));
  if (!divisor) {
    Value reciprocal = create<nn::ReciprocalOp>(operand(node, 1));
    define(node, 0, create<nn::MulOp>({operand(node, 0), reciprocal}));
    return;
  }
  if (!divisor->isFloat())
    fail("only division by a tensor or a floating-point constant is "
         "supported");
  SmallVector<float> reciprocals;
  for (double value : divisor->floats) {
    if (value == 0 || !std::isfinite(value))
      fail("division by " + std::to_string(value));
    reciprocals.push_back(1.f / static_cast<float>(value));
  }
  // One value is a scalar whatever its dims (the exporters write [] or [1]).
  SmallVector<int64_t> dims;
  if (reciprocals.size() != 1)
    dims.assign(divisor->dims.begin(), divisor->dims.end());
  auto type = RankedTensorType::get(dims, builder.getF32Type());
  Value constant = create<nn::ConstantOp>(
      {},
      {named("value", DenseElementsAttr::get(type, ArrayRef(reciprocals)))});
  define(node, 0, create<nn::MulOp>({operand(node, 0), constant}));
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

void Importer::importPow(const onnx::NodeProto &node) {
  // To a small constant whole power (x.pow(2) in variances and RMS norms,
  // GPT-2's x.pow(3)): a product of x, whose gradient the products give.
  const KnownTensor *exponent = knownValue(node.input(1));
  double value = exponent && exponent->getNumElements() == 1
                     ? (exponent->isFloat() ? exponent->floats[0]
                                            : double(exponent->ints[0]))
                     : 0;
  if (value != 1 && value != 2 && value != 3 && value != 4)
    fail("only a constant scalar exponent of 1, 2, 3 or 4 is supported");
  Value base = operand(node, 0), power = base;
  for (int i = 1; i < int(value); ++i)
    power = create<nn::MulOp>({power, base});
  define(node, 0, power);
}

void Importer::importLayerNorm(const onnx::NodeProto &node) {
  Value input = operand(node, 0);
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  int64_t axis = intAttr(node, "axis", -1);
  if (axis < -rank || axis >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for rank " +
         std::to_string(rank));
  if (axis < 0)
    axis += rank;
  // Mean and InvStdDev are outputs for training frameworks' own backward.
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      unavailable[node.output(i)] =
          "value '" + node.output(i) +
          "' (layer-norm statistics output) is read by a node; dpc's "
          "backward recomputes them";
  SmallVector<Value> operands = {input, operand(node, 1)};
  if (Value bias = optionalOperand(node, 2))
    operands.push_back(bias);
  define(node, 0,
         create<nn::LayerNormOp>(
             operands,
             {named("axis", builder.getI64IntegerAttr(axis)),
              named("epsilon", builder.getF64FloatAttr(shortestDecimal(
                                   floatAttr(node, "epsilon", 1e-5f))))}));
}

SmallVector<int64_t> Importer::normalizeAxes(ArrayRef<int64_t> axes,
                                             int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
      fail("axis " + std::to_string(axis) + " is out of range for rank " +
           std::to_string(rank));
    if (llvm::is_contained(result, a))
      fail("axis " + std::to_string(axis) + " is given twice");
    result.push_back(a);
  }
  return result;
}

void Importer::importReduce(const onnx::NodeProto &node, bool mean) {
  Value input = operand(node, 0);
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  // The axes: an attribute before opset 18 (ReduceSum: 13), an optional
  // input from it on.
  SmallVector<int64_t> axes;
  int64_t axesInputFrom = mean ? 18 : 13;
  if (opset < axesInputFrom) {
    if (const onnx::AttributeProto *a = attr(node, "axes"))
      axes.assign(a->ints().begin(), a->ints().end());
  } else if (node.input_size() > 1 && !node.input(1).empty()) {
    axes = constantInts(node, 1);
  }
  if (axes.empty() && opset >= axesInputFrom &&
      intAttr(node, "noop_with_empty_axes", 0))
    fail("noop_with_empty_axes is not supported");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  axes = normalizeAxes(axes, rank);
  llvm::sort(axes);
  bool keepDims = intAttr(node, "keepdims", 1) != 0;
  // The spatial mean of NCHW (what exporters write for AdaptiveAvgPool2d(1))
  // is a pooling; any other, a sum over the axes scaled by their size.
  if (!mean || rank != 4 || axes != SmallVector<int64_t>{2, 3}) {
    auto type = cast<RankedTensorType>(input.getType());
    for (int64_t axis : axes)
      if (type.isDynamicDim(axis))
        fail(std::string("a ") + (mean ? "mean" : "sum") +
             " over the batch dim (" + std::to_string(axis) +
             ") is not supported");
    int64_t count = 1;
    for (int64_t axis : axes)
      count *= type.getDimSize(axis);
    Value sum = create<nn::ReduceSumOp>(
        input, {i64Array("dims", axes),
                named("keep_dims", builder.getBoolAttr(keepDims))});
    if (!mean) {
      define(node, 0, sum);
      return;
    }
    auto scalar = RankedTensorType::get({}, builder.getF32Type());
    Value scale = create<nn::ConstantOp>(
        {},
        {named("value", DenseElementsAttr::get(scalar, 1.f / float(count)))});
    define(node, 0, create<nn::MulOp>({sum, scale}));
    return;
  }
  Value pooled = create<nn::GlobalAvgPool2dOp>(input);
  if (!keepDims)
    pooled = create<nn::FlattenOp>(
        pooled, {named("axis", builder.getI64IntegerAttr(1))});
  define(node, 0, pooled);
}

void Importer::importGemm(const onnx::NodeProto &node) {
  if (floatAttr(node, "alpha", 1.0f) != 1.0f ||
      floatAttr(node, "beta", 1.0f) != 1.0f)
    fail("alpha and beta other than 1 are not supported");
  if (intAttr(node, "transA", 0) != 0)
    fail("transA=1 is not supported");
  Value a = operand(node, 0), b = operand(node, 1);
  Value c = optionalOperand(node, 2);
  bool vectorBias = c && cast<RankedTensorType>(c.getType()).getRank() == 1;
  Value result;
  if (intAttr(node, "transB", 0) != 0) {
    // PyTorch's Linear: y = x * W^T + b, W stored [out, in].
    SmallVector<Value> operands = {a, b};
    if (vectorBias)
      operands.push_back(c);
    result = create<nn::LinearOp>(operands);
  } else {
    result = create<nn::MatmulOp>({a, b});
    vectorBias = false;
  }
  if (c && !vectorBias)
    result = create<nn::AddOp>({result, c});
  define(node, 0, result);
}

void Importer::importReshape(const onnx::NodeProto &node) {
  Value input = operand(node, 0);
  SmallVector<int64_t> shape = constantInts(node, 1, /*allowBatch=*/true);
  // allowzero=1 makes a 0 mean an empty dim instead of a copied one.
  if (intAttr(node, "allowzero", 0) != 0 && llvm::is_contained(shape, 0))
    fail("allowzero=1 with a 0 in the shape is not supported");
  // The batch, or a multiple of it (attention's batch x heads), computed
  // from the input's shape: dim 0 kept is copied (0), elsewhere shape
  // inference works it out (-1), and a -1 beside it is resolved here.
  auto inputType = cast<RankedTensorType>(input.getType());
  std::optional<size_t> batchEntry;
  int64_t inputScale = batchScaleOf(input);
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
    return define(node, 0,
                  create<nn::FlattenOp>(
                      input, {named("axis", builder.getI64IntegerAttr(1))}));
  define(node, 0, create<nn::ReshapeOp>(input, {i64Array("shape", shape)}));
}

void Importer::importExpand(const onnx::NodeProto &node) {
  Value input = operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape = constantInts(node, 1, /*allowBatch=*/true);
  // A tensor without the batch repeated for each sample (ViT's class token,
  // token.expand(n, -1, -1), whose -1s the exporter made 1s); one that has
  // it already stays.
  bool toBatch = !shape.empty() && frontend::isBatchMultiple(shape[0]) &&
                 frontend::batchMultipleOf(shape[0]) == 1 &&
                 static_cast<int64_t>(shape.size()) == type.getRank();
  for (size_t d = 1; toBatch && d < shape.size(); ++d)
    toBatch = shape[d] == 1 || shape[d] == type.getDimSize(d);
  if (!toBatch)
    fail("only a tensor of [1, ...] expanded to the batch in dim 0 is "
         "supported (e.g. a class token); other run-time tensors do not "
         "broadcast");
  if (type.isDynamicDim(0) && batchScaleOf(input) == 1)
    return define(node, 0, input);
  define(node, 0, create<nn::BroadcastRowsOp>({input, dataInput}));
}

void Importer::importSqueeze(const onnx::NodeProto &node, bool unsqueeze) {
  Value input = operand(node, 0);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> axes;
  if (opset < 13)
    axes = intsAttr(node, "axes", {});
  else if (node.input_size() > 1 && !node.input(1).empty())
    axes = constantInts(node, 1, /*allowBatch=*/false);
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
  define(
      node, 0,
      create<nn::ReshapeOp>(input, {i64Array("shape", reshapeTarget(dims))}));
}

void Importer::importMatMul(const onnx::NodeProto &node) {
  Value lhs = operand(node, 0), rhs = operand(node, 1);
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  // A matrix on the right: rows of the left times it. Otherwise a product
  // per leading index (attention's scores and weighted values).
  if (rhsType.getRank() == 2)
    return define(node, 0, create<nn::MatmulOp>({lhs, rhs}));
  if (lhsType.getRank() != rhsType.getRank() || lhsType.getRank() < 3)
    fail("batched MatMul takes operands of the same rank >= 3, got " +
         typeToString(lhsType) + " and " + typeToString(rhsType));
  define(node, 0, create<nn::BatchMatmulOp>({lhs, rhs}));
}

void Importer::importSoftmax(const onnx::NodeProto &node, bool isLog) {
  Value input = operand(node, 0);
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  int64_t axis = intAttr(node, "axis", opset < 13 ? 1 : -1);
  if (axis < 0)
    axis += rank;
  // Before opset 13, softmax flattened the dims from `axis` on into one; that
  // is a softmax along `axis` only when `axis` is the last dim.
  if (opset < 13 && axis != rank - 1)
    fail("softmax over the flattened dims from axis " + std::to_string(axis) +
         " of a rank-" + std::to_string(rank) +
         " input (opset < 13 semantics) is not supported");
  NamedAttribute axisAttr = named("axis", builder.getI64IntegerAttr(axis));
  define(node, 0,
         isLog ? create<nn::LogSoftmaxOp>(input, {axisAttr})
               : create<nn::SoftmaxOp>(input, {axisAttr}));
}

void Importer::importConstant(const onnx::NodeProto &node) {
  if (node.attribute_size() != 1)
    fail("a Constant node must have exactly one attribute");
  const onnx::AttributeProto &a = node.attribute(0);
  auto *tensor = new onnx::TensorProto();
  ownedTensors.emplace_back(tensor);
  tensor->set_name(node.output(0));
  if (a.name() == "value") {
    tensor->CopyFrom(a.t());
    tensor->set_name(node.output(0));
  } else if (a.name() == "value_float" || a.name() == "value_floats") {
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    if (a.name() == "value_float") {
      tensor->add_float_data(a.f());
    } else {
      tensor->add_dims(a.floats_size());
      for (float f : a.floats())
        tensor->add_float_data(f);
    }
  } else if (a.name() == "value_int" || a.name() == "value_ints") {
    tensor->set_data_type(onnx::TensorProto::INT64);
    if (a.name() == "value_int") {
      tensor->add_int64_data(a.i());
    } else {
      tensor->add_dims(a.ints_size());
      for (int64_t i : a.ints())
        tensor->add_int64_data(i);
    }
  } else {
    fail("Constant attribute '" + a.name() + "' is not supported");
  }
  // Materialized as an nn.constant only if a node reads it as a tensor.
  constantNodes[node.output(0)] = tensor;
}

void Importer::importIdentity(const onnx::NodeProto &node) {
  if (node.input_size() < 1 || node.output_size() < 1)
    fail("Identity needs one input and one output");
  const std::string &input = node.input(0), &output = node.output(0);
  auto init = initializers.find(input);
  if (init == initializers.end() || values.count(output)) {
    define(node, 0, operand(node, 0));
    return;
  }
  // A copy of an initializer is a parameter of its own that starts out equal
  // to the source, not a tie: training must update the two separately.
  initializers[output] = init->second;
  auto source = initialValueSource.find(input);
  initialValueSource[output] =
      source != initialValueSource.end() ? source->second : input;
}

void Importer::importCast(const onnx::NodeProto &node) {
  // A run-time tensor cast to the type it has (Transformers' GPT-2 casts its
  // position embeddings to the float type they already have): the identity.
  // Casts of known values fold before this; no other cast has a kernel.
  int32_t to = static_cast<int32_t>(intAttr(node, "to", 0));
  int32_t from = onnxTypeOf(node.input(0));
  if (to != from) {
    std::string types = onnx::TensorProto::DataType_Name(from) + " to " +
                        onnx::TensorProto::DataType_Name(to);
    fail("only a cast of a run-time tensor to its own type is supported (" +
         types + ")");
  }
  define(node, 0, operand(node, 0));
}

void Importer::importNode(const onnx::NodeProto &node, int index) {
  std::string label =
      node.name().empty() ? "#" + std::to_string(index) : node.name();
  currentLoc = NameLoc::get(builder.getStringAttr(label),
                            FileLineColLoc::get(&ctx, path, 0, 0));
  try {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      fail("operators of domain '" + node.domain() + "' are not supported");
    const std::string &op = node.op_type();
    if (importRandomMask(node) || lstmImport.importNode(node, opset))
      return;
    if (frontend::isFoldable(op) && foldNode(node))
      return;
    if (op == "Conv") {
      importConv(node);
    } else if (op == "BatchNormalization") {
      importBatchNorm(node);
    } else if (op == "Relu") {
      define(node, 0, create<nn::ReluOp>(operand(node, 0)));
    } else if (op == "Sigmoid") {
      define(node, 0, create<nn::SigmoidOp>(operand(node, 0)));
    } else if (op == "Tanh") {
      define(node, 0, create<nn::TanhOp>(operand(node, 0)));
    } else if (op == "Concat") {
      importConcat(node);
    } else if (op == "Split") {
      importSplit(node);
    } else if (op == "SplitToSequence") {
      importSplitToSequence(node);
    } else if (op == "SequenceAt") {
      importSequenceAt(node);
    } else if (op == "Transpose") {
      importTranspose(node);
    } else if (op == "Clip") {
      importClip(node);
    } else if (op == "Dropout") {
      importDropout(node);
    } else if (op == "LayerNormalization") {
      importLayerNorm(node);
    } else if (op == "Erf") {
      define(node, 0, create<nn::ErfOp>(operand(node, 0)));
    } else if (op == "Div") {
      importDiv(node);
    } else if (op == "Pow") {
      importPow(node);
    } else if (op == "IsNaN") {
      nanTests[node.output(0)] = node.input(0);
      unavailable[node.output(0)] =
          "value '" + node.output(0) +
          "' (IsNaN) is read other than by Where(IsNaN(x), c, x) on a "
          "softmax, which dpc does not support";
    } else if (op == "Where") {
      if (!importNanGuard(node))
        importWhere(node);
    } else if (op == "Sub") {
      // a + (-1 b): exactly a - b in IEEE arithmetic.
      auto scalar = RankedTensorType::get({}, builder.getF32Type());
      Value minusOne = create<nn::ConstantOp>(
          {}, {named("value", DenseElementsAttr::get(scalar, -1.f))});
      Value negated = create<nn::MulOp>({operand(node, 1), minusOne});
      define(node, 0, create<nn::AddOp>({operand(node, 0), negated}));
    } else if (op == "Slice") {
      importSlice(node);
    } else if (op == "Gather") {
      importGather(node);
    } else if (op == "HardSigmoid") {
      define(node, 0,
             create<nn::HardSigmoidOp>(
                 operand(node, 0),
                 {named("alpha", builder.getF64FloatAttr(shortestDecimal(
                                     floatAttr(node, "alpha", 0.2f)))),
                  named("beta", builder.getF64FloatAttr(shortestDecimal(
                                    floatAttr(node, "beta", 0.5f))))}));
    } else if (op == "HardSwish") {
      define(node, 0, create<nn::HardSwishOp>(operand(node, 0)));
    } else if (op == "Gelu") {
      std::string approximate = stringAttr(node, "approximate", "none");
      if (approximate != "none" && approximate != "tanh")
        fail("approximate must be none or tanh, got '" + approximate + "'");
      define(node, 0,
             create<nn::GeluOp>(
                 operand(node, 0),
                 {named("tanh_approximation",
                        builder.getBoolAttr(approximate == "tanh"))}));
    } else if (op == "Add") {
      auto [lhs, rhs] = elementwiseOperands(node);
      define(node, 0, create<nn::AddOp>({lhs, rhs}));
    } else if (op == "Mul") {
      auto [lhs, rhs] = elementwiseOperands(node);
      define(node, 0, create<nn::MulOp>({lhs, rhs}));
    } else if (op == "AveragePool" || op == "MaxPool") {
      importPool(node, op == "MaxPool");
    } else if (op == "ReduceMean" || op == "ReduceSum") {
      importReduce(node, op == "ReduceMean");
    } else if (op == "GlobalAveragePool") {
      define(node, 0, create<nn::GlobalAvgPool2dOp>(operand(node, 0)));
    } else if (op == "Flatten") {
      Value input = operand(node, 0);
      int64_t axis = intAttr(node, "axis", 1);
      if (axis < 0)
        axis += cast<RankedTensorType>(input.getType()).getRank();
      define(node, 0,
             create<nn::FlattenOp>(
                 input, {named("axis", builder.getI64IntegerAttr(axis))}));
    } else if (op == "Reshape") {
      importReshape(node);
    } else if (op == "Expand") {
      importExpand(node);
    } else if (op == "Squeeze" || op == "Unsqueeze") {
      importSqueeze(node, op == "Unsqueeze");
    } else if (op == "Pad") {
      importPad(node);
    } else if (op == "Gemm") {
      importGemm(node);
    } else if (op == "MatMul") {
      importMatMul(node);
    } else if (op == "Softmax" || op == "LogSoftmax") {
      importSoftmax(node, op == "LogSoftmax");
    } else if (op == "Identity") {
      importIdentity(node);
    } else if (op == "Cast") {
      importCast(node);
    } else if (op == "Constant") {
      importConstant(node);
    } else {
      fail("unsupported operator at opset " + std::to_string(opset));
    }
  } catch (ImportError &e) {
    fail("node '" + label + "' (" + node.op_type() + "): " + e.message);
  }
}

void Importer::declareOutputs(Block &body) {
  SmallVector<Value> results;
  for (const auto &output : graph.output()) {
    // Training-mode exports list the updated batch-norm statistics as
    // outputs; the training step owns them, so they are left out here.
    if (unavailable.count(output.name()) && !values.count(output.name()))
      continue;
    results.push_back(lookup(output.name()));
    resultNames.push_back(named(nn::NNDialect::kOutputAttrName,
                                builder.getStringAttr(output.name())));
  }
  if (results.empty())
    fail("the graph has no output");
  builder.setInsertionPointToEnd(&body);
  builder.create<func::ReturnOp>(UnknownLoc::get(&ctx), results);
}

OwningOpRef<ModuleOp> Importer::run() {
  opset = defaultOpset();
  if (opset < kMinOpset || opset > kMaxOpset)
    fail("opset " + std::to_string(opset) + " is not supported (" +
         std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
         "); re-export with opset_version in that range");
  for (const auto &init : graph.initializer())
    initializers[init.name()] = &init;

  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  auto func =
      func::FuncOp::create(fileLoc, "forward", builder.getFunctionType({}, {}));
  module->push_back(func);
  body = func.addEntryBlock();

  declareInputs(*body);
  builder.setInsertionPointToEnd(body);
  int index = 0;
  for (const auto &node : graph.node())
    importNode(node, index++);
  declareOutputs(*body);

  func.setType(builder.getFunctionType(
      body->getArgumentTypes(), body->getTerminator()->getOperandTypes()));
  for (auto [i, attrs] : llvm::enumerate(argumentAttrs))
    func.setArgAttrs(i, attrs);
  for (auto [i, attr] : llvm::enumerate(resultNames))
    func.setResultAttr(i, attr.getName(), attr.getValue());
  return module;
}

} // namespace

/// Refuses a NaN or infinite initial value: it would make every parameter
/// it reaches non-finite, silently once a ReLU turns NaN into 0.
template <typename T>
static void requireFinite(const onnx::TensorProto &tensor,
                          const std::vector<uint8_t> &bytes) {
  for (size_t i = 0; i < bytes.size() / sizeof(T); ++i) {
    T value;
    std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
    if (!std::isfinite(value))
      fail("initializer '" + tensor.name() + "' holds " +
           (std::isnan(value) ? "NaN" : "an infinite value") + " at index " +
           std::to_string(i) + "; initial parameters must be finite");
  }
}

static void requireFinite(const onnx::TensorProto &tensor,
                          const std::vector<uint8_t> &bytes) {
  if (tensor.data_type() == onnx::TensorProto::FLOAT)
    requireFinite<float>(tensor, bytes);
  else if (tensor.data_type() == onnx::TensorProto::DOUBLE)
    requireFinite<double>(tensor, bytes);
}

/// The bytes of one tensor, in its own element type.
static std::vector<uint8_t> tensorBytes(const onnx::TensorProto &tensor,
                                        StringRef modelDir) {
  size_t count = elementCount(tensor);
  auto fromValues = [&](auto values, const auto &typed) {
    using T = typename decltype(values)::value_type;
    values = tensorValues<T>(tensor, typed, count);
    std::vector<uint8_t> bytes(count * sizeof(T));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
  };
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    size_t offset = 0, length = 0;
    for (const auto &entry : tensor.external_data()) {
      if (entry.key() == "location")
        location = entry.value();
      else if ((entry.key() == "offset" || entry.key() == "length") &&
               StringRef(entry.value())
                   .getAsInteger(10, entry.key() == "offset" ? offset : length))
        fail("tensor '" + tensor.name() + "': its external data " +
             entry.key() + " '" + entry.value() + "' is not a byte count");
    }
    SmallString<256> file(modelDir);
    llvm::sys::path::append(file, location);
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      fail("tensor '" + tensor.name() + "': cannot read its external data " +
           std::string(file));
    StringRef data = (*buffer)->getBuffer();
    if (offset > data.size() || (length && offset + length > data.size()))
      fail("tensor '" + tensor.name() + "': its external data in " +
           std::string(file) + " is shorter than the model says");
    data = data.substr(offset, length ? length : StringRef::npos);
    return std::vector<uint8_t>(data.begin(), data.end());
  }
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return fromValues(std::vector<float>(), tensor.float_data());
  case onnx::TensorProto::DOUBLE:
    return fromValues(std::vector<double>(), tensor.double_data());
  case onnx::TensorProto::INT64:
    return fromValues(std::vector<int64_t>(), tensor.int64_data());
  case onnx::TensorProto::INT32:
    return fromValues(std::vector<int32_t>(), tensor.int32_data());
  case onnx::TensorProto::BOOL:
    return fromValues(std::vector<uint8_t>(), tensor.int32_data());
  default:
    fail("tensor '" + tensor.name() + "' has an element type (" +
         std::to_string(tensor.data_type()) + ") that cannot be read");
  }
}

static bool readTensors(StringRef path,
                        llvm::StringMap<std::vector<uint8_t>> &tensors,
                        std::string &error) {
  std::ifstream file(path.str(), std::ios::binary);
  onnx::ModelProto model;
  if (!file || !model.ParseFromIstream(&file)) {
    error = "not an ONNX model (truncated, or not a model file?)";
    return false;
  }
  StringRef modelDir = llvm::sys::path::parent_path(path);
  try {
    for (const auto &init : model.graph().initializer()) {
      tensors[init.name()] = tensorBytes(init, modelDir);
      requireFinite(init, tensors[init.name()]);
    }
    for (const auto &node : model.graph().node())
      if (node.op_type() == "Constant" && node.output_size() == 1)
        for (const auto &attr : node.attribute())
          if (attr.name() == "value")
            tensors[node.output(0)] = tensorBytes(attr.t(), modelDir);
  } catch (ImportError &e) {
    error = e.message;
    return false;
  }
  return true;
}

static OwningOpRef<ModuleOp> importModel(StringRef path, MLIRContext &context,
                                         std::string &error) {
  context.loadDialect<nn::NNDialect, func::FuncDialect>();
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read the file: " + buffer.getError().message();
    return nullptr;
  }
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.empty()) {
    error = "the file is empty, not an ONNX model";
    return nullptr;
  }
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      !model.has_graph()) {
    error = "not an ONNX model (truncated, or not a model file?)";
    return nullptr;
  }
  // External tensor data lives next to the model file.
  if (std::string problem = dpc::frontend::validateModel(
          model, llvm::sys::path::parent_path(path));
      !problem.empty()) {
    error = "invalid ONNX model: " + problem;
    return nullptr;
  }
  try {
    Importer importer(context, path, model);
    return importer.run();
  } catch (ImportError &e) {
    error = e.message;
    return nullptr;
  }
}

// The model's names may hold anything, newlines included: its errors stay
// one line.
bool dpc::frontend::readONNXTensors(
    StringRef path, llvm::StringMap<std::vector<uint8_t>> &tensors,
    std::string &error) {
  bool read = readTensors(path, tensors, error);
  error = dpc::io::oneLine(error);
  return read;
}

OwningOpRef<ModuleOp> dpc::frontend::importONNXFile(StringRef path,
                                                    MLIRContext &context,
                                                    std::string &error) {
  OwningOpRef<ModuleOp> module = importModel(path, context, error);
  error = dpc::io::oneLine(error);
  return module;
}
