//===- KnownValues.cpp - values the importer knows at import --------------===//
//
// The importer's side of import-time folding: which ONNX values are known
// (Constant nodes, integer initializers, shape arithmetic's results), when
// a node is evaluated by ShapeFolding.cpp's folder instead of imported, and
// how a known value becomes an nn.constant when a node reads it as a tensor.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"

#include "ir/nn/NNOps.h"

using namespace mlir;

namespace dpc::frontend {

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
    for (const APInt &v : attr.getValues<APInt>()) // a bool's true is 1
      value.ints.push_back(v.getBitWidth() == 1 ? int64_t(v.getZExtValue())
                                                : v.getSExtValue());
  return &(known[name] = std::move(value));
}

std::optional<double> Importer::knownScalar(const onnx::NodeProto &node,
                                            int i) {
  if (i >= node.input_size() || node.input(i).empty())
    return std::nullopt;
  const KnownTensor *value = knownValue(node.input(i));
  if (value && value->getNumElements() == 1)
    return value->isFloat() ? value->floats[0]
                            : static_cast<double>(value->ints[0]);
  // A float initializer is a parameter where a node reads it as a tensor;
  // where ONNX wants a constant (a dropout ratio, a clip bound, which
  // PyTorch 2's exporter writes as initializers), its value is the constant.
  auto it = initializers.find(node.input(i));
  if (value || it == initializers.end())
    return std::nullopt;
  const onnx::TensorProto &tensor = *it->second;
  if (elementCount(tensor) != 1)
    return std::nullopt;
  DenseElementsAttr attr = toElementsAttr(tensor);
  if (auto floats = dyn_cast<DenseFPElementsAttr>(attr))
    return (*floats.value_begin<APFloat>()).convertToDouble();
  return std::nullopt;
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
        int64_t batch = batchTimes(batchScaleOf(lookup(name)));
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
  } catch (FoldError &e) {
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
    RandomMask mask{RandomMask::Fill, {}};
    mask.repeated = std::move(sample);
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

} // namespace dpc::frontend
