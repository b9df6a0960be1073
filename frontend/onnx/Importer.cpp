//===- Importer.cpp - the ONNX graph walk and its value table -------------===//
//
// The graph walk (inputs, nodes in order, outputs), the value table with its
// deferred kinds, and what the op families build with. Each node goes to, in
// turn: the exporter idioms that span nodes, LSTM's views, the import-time
// folder, and the handler OnnxOpTable gives for its op type and opset.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/ModelValidation.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"
#include "runtime/abi/CheckedMath.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

#include <climits>
#include <cstdio>
#include <cstdlib>

using namespace mlir;

namespace dpc::frontend {

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

/// `type` as MLIR prints it, for messages.
std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// nn.reshape's target for `dims`: the batch's dim, whichever it is, is
/// left for shape inference (-1), so it follows the batch at run time.
SmallVector<int64_t> reshapeTarget(ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape;
  for (int64_t dim : dims)
    shape.push_back(ShapedType::isDynamic(dim) ? -1 : dim);
  return shape;
}

/// Static element count of `type` without its dynamic dims.
int64_t staticElements(RankedTensorType type) {
  int64_t n = 1;
  for (int64_t d : type.getShape())
    if (!ShapedType::isDynamic(d))
      n *= d;
  return n;
}

SmallVector<int64_t> normalizeAxes(ArrayRef<int64_t> axes, int64_t rank) {
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

/// The number of elements `tensor`'s dims say it has; fails on a negative
/// dim or a count whose bytes would overflow.
size_t elementCount(const onnx::TensorProto &tensor) {
  constexpr int64_t kMaxElements = INT64_MAX / 8;
  std::optional<int64_t> count = checkedProduct(tensor.dims(), kMaxElements);
  if (!count)
    fail("tensor '" + tensor.name() +
         "' has a negative dimension or too many elements");
  return static_cast<size_t>(*count);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *attr(const onnx::NodeProto &node, StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t intAttr(const onnx::NodeProto &node, StringRef name, int64_t dflt) {
  const onnx::AttributeProto *a = attr(node, name);
  return a ? a->i() : dflt;
}

float floatAttr(const onnx::NodeProto &node, StringRef name, float dflt) {
  const onnx::AttributeProto *a = attr(node, name);
  return a ? a->f() : dflt;
}

SmallVector<int64_t> intsAttr(const onnx::NodeProto &node, StringRef name,
                              ArrayRef<int64_t> dflt) {
  const onnx::AttributeProto *a = attr(node, name);
  if (!a)
    return SmallVector<int64_t>(dflt);
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string stringAttr(const onnx::NodeProto &node, StringRef name,
                       StringRef dflt) {
  const onnx::AttributeProto *a = attr(node, name);
  return a ? a->s() : dflt.str();
}

SmallVector<int64_t> spatialPads(const onnx::NodeProto &node,
                                 int64_t spatialRank) {
  std::string autoPad = stringAttr(node, "auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    fail("auto_pad=" + autoPad + " is not supported; use explicit pads");
  SmallVector<int64_t> zeros(2 * spatialRank, 0);
  SmallVector<int64_t> pads = intsAttr(node, "pads", zeros);
  if (autoPad == "VALID")
    pads = zeros;
  if (static_cast<int64_t>(pads.size()) != 2 * spatialRank)
    fail("a " + std::to_string(spatialRank) + "-D op needs " +
         std::to_string(2 * spatialRank) + " pads, got " +
         std::to_string(pads.size()));
  // ONNX orders pads [top, left, bottom, right], as nn does.
  if (spatialRank == 1)
    return {0, pads[0], 0, pads[1]};
  return pads;
}

SmallVector<int64_t> spatialInts(const onnx::NodeProto &node, StringRef name,
                                 int64_t spatialRank, int64_t dflt) {
  SmallVector<int64_t> values =
      intsAttr(node, name, SmallVector<int64_t>(spatialRank, dflt));
  if (static_cast<int64_t>(values.size()) != spatialRank)
    fail("a " + std::to_string(spatialRank) + "-D op needs " +
         std::to_string(spatialRank) + " " + name.str() + ", got " +
         std::to_string(values.size()));
  if (spatialRank == 1)
    return {dflt, values[0]};
  return values;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

int64_t Importer::defaultOpset() const {
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      return entry.version();
  // IR versions before 3 had no opset imports; they are far older than 11.
  return 0;
}

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
    bool buffer = isBuffer || exportedBuffers.contains(name);
    attrs.push_back(named(buffer ? nn::NNDialect::kBufferAttrName
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

void Importer::define(const onnx::NodeProto &node, int i, Value value) {
  if (i < node.output_size() && !node.output(i).empty())
    values[node.output(i)] = value;
  // Memoized here, so the lazy walk back stays within this node's ops.
  batchScaleOf(value);
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

onnx::TensorProto *Importer::ownTensor() {
  return ownedTensors.emplace_back(std::make_unique<onnx::TensorProto>()).get();
}

bool Importer::copyInitializer(const std::string &input,
                               const std::string &output) {
  auto init = initializers.find(input);
  if (init == initializers.end() || values.count(output))
    return false;
  initializers[output] = init->second;
  if (exportedBuffers.contains(input))
    exportedBuffers.insert(output);
  auto source = initialValueSource.find(input);
  initialValueSource[output] =
      source != initialValueSource.end() ? source->second : input;
  return true;
}

const SmallVector<Value> *Importer::sequenceOf(const std::string &name) const {
  auto it = sequences.find(name);
  return it == sequences.end() ? nullptr : &it->second;
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

Value Importer::createReshape(Value input, ArrayRef<int64_t> dims) {
  return create<nn::ReshapeOp>(input, {i64Array("shape", reshapeTarget(dims))});
}

Value Importer::insertUnitDim(Value input, int64_t axis) {
  SmallVector<int64_t> dims(cast<RankedTensorType>(input.getType()).getShape());
  dims.insert(dims.begin() + axis, 1);
  return createReshape(input, dims);
}

Value Importer::removeUnitDim(Value input, int64_t axis) {
  SmallVector<int64_t> dims(cast<RankedTensorType>(input.getType()).getShape());
  dims.erase(dims.begin() + axis);
  return createReshape(input, dims);
}

Value Importer::createNegation(Value input) {
  auto scalar = RankedTensorType::get({}, builder.getF32Type());
  Value minusOne = create<nn::ConstantOp>(
      {}, {named("value", DenseElementsAttr::get(scalar, -1.f))});
  return create<nn::MulOp>({input, minusOne});
}

Value Importer::createDropout(Value input, double ratio, bool rowwise,
                              ArrayRef<NamedAttribute> extra,
                              std::optional<int64_t> key) {
  if (!(ratio >= 0 && ratio <= 1))
    fail("ratio " + std::to_string(ratio) + " is not in [0, 1]");
  SmallVector<NamedAttribute> attrs = {
      named("ratio", builder.getF64FloatAttr(ratio)),
      named("key", builder.getI64IntegerAttr(key ? *key : numDropouts++))};
  if (rowwise)
    attrs.push_back(named("rowwise", builder.getUnitAttr()));
  attrs.append(extra.begin(), extra.end());
  return create<nn::DropoutOp>(input, attrs);
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

void Importer::declareInputs(Block &body) {
  // The first input with a symbolic dim 0, and the first with a fixed one.
  std::optional<std::string> symbolicBatchInput, fixedFirstDimInput;
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
    // Every data input is batched. A weight exported as a graph input
    // (export_params=False) has a fixed first dim where the data's is
    // symbolic, and no values to train from.
    if (ShapedType::isDynamic(shape[0]) && !symbolicBatchInput)
      symbolicBatchInput = input.name();
    else if (!ShapedType::isDynamic(shape[0]) && !fixedFirstDimInput)
      fixedFirstDimInput = input.name();
    if (symbolicBatchInput && fixedFirstDimInput)
      fail("input '" + *fixedFirstDimInput +
           "' has a fixed first dim where input '" + *symbolicBatchInput +
           "' has the batch: every data input is batched, and a weight "
           "exported as a graph input has no values to train (export it as "
           "an initializer: torch.onnx.export's export_params=True)");
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

void Importer::importNode(const onnx::NodeProto &node, int index) {
  std::string label =
      node.name().empty() ? "#" + std::to_string(index) : node.name();
  currentLoc = NameLoc::get(builder.getStringAttr(label),
                            FileLineColLoc::get(&ctx, path, 0, 0));
  try {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      fail("operators of domain '" + node.domain() + "' are not supported");
    checkExportRewrite(node);
    const std::string &op = node.op_type();
    if (importRandomMask(node) || lstmImport.importNode(node, opset))
      return;
    if (isFoldable(op) && foldNode(node))
      return;
    OnnxOpHandler handler = getOnnxOpTable().lookup(op, opset);
    if (!handler)
      fail("unsupported operator at opset " + std::to_string(opset));
    handler(*this, node);
  } catch (ImportError &e) {
    fail("node '" + label + "' (" + node.op_type() + "): " + e.message);
  }
}

void Importer::importBranch(const onnx::GraphProto &branch) {
  int index = 0;
  for (const auto &node : branch.node())
    importNode(node, index++);
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
  classifyExportedInitializers();
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

} // namespace dpc::frontend
