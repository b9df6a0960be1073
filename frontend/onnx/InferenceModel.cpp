//===- InferenceModel.cpp - the model's eval graph for export -------------===//
//
// The model file's graph, turned into what PyTorch's eval-mode export would
// have written: each BatchNormalization in inference form (training_mode
// dropped, one output), each Dropout without its training_mode input and
// mask, dropout written as random ops gone. The initializers that are training
// state leave the graph (export writes the trained ones), and so does an
// Identity that gives a deduplicated initializer its own name: that parameter
// trained on its own and is written as an initializer of that name. What the
// changes leave unread (the mask's and training_mode's constants, an
// initializer only an Identity read) is pruned.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/InferenceModel.h"
#include "frontend/onnx/ModelValidation.h"
#include "frontend/onnx/OpsetConversion.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <onnx/onnx_pb.h>

#include <climits>
#include <map>
#include <set>

using namespace dpc::frontend;
using llvm::StringRef;

namespace {

/// ONNX's TensorProto.DataType of an element type, or 0 if ONNX has none.
int32_t getOnnxDataType(mlir::Type type) {
  if (type.isF32())
    return onnx::TensorProto::FLOAT;
  if (type.isF64())
    return onnx::TensorProto::DOUBLE;
  if (type.isF16())
    return onnx::TensorProto::FLOAT16;
  if (type.isBF16())
    return onnx::TensorProto::BFLOAT16;
  if (type.isInteger(64))
    return onnx::TensorProto::INT64;
  if (type.isInteger(32))
    return onnx::TensorProto::INT32;
  if (type.isUnsignedInteger(8))
    return onnx::TensorProto::UINT8;
  return 0;
}

std::string formatDims(llvm::ArrayRef<int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

/// The default-domain opset the model imports, or 0.
int64_t getDefaultOpset(const onnx::ModelProto &model) {
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      return entry.version();
  return 0;
}

/// The opsets around `opset`, from 7 (ONNX Runtime's lowest), at which
/// every node of `graph` has the operator version it has at `opset`, so
/// the graph is valid unchanged.
std::pair<int64_t, int64_t> getUnchangedOpsets(const onnx::GraphProto &graph,
                                               int64_t opset) {
  int64_t low = opset, high = opset;
  while (low > 7 && keepsOperatorVersions(graph, opset, low - 1))
    --low;
  while (high < kMaxOpset && keepsOperatorVersions(graph, opset, high + 1))
    ++high;
  return {low, high};
}

template <typename Names> void eraseFrom(Names *names, int from) {
  names->DeleteSubrange(from, names->size() - from);
}

/// Batch norm and dropout in inference form.
void switchToInference(onnx::GraphProto &graph) {
  for (auto &node : *graph.mutable_node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      continue;
    if (node.op_type() == "BatchNormalization") {
      auto *attributes = node.mutable_attribute();
      for (int i = attributes->size() - 1; i >= 0; --i)
        if (attributes->Get(i).name() == "training_mode")
          attributes->DeleteSubrange(i, 1);
      if (node.output_size() > 1)
        eraseFrom(node.mutable_output(), 1);
    } else if (node.op_type() == "Dropout") {
      // From opset 12 the third input switches training on; before, the
      // op is an identity outside training.
      if (node.input_size() > 2)
        eraseFrom(node.mutable_input(), 2);
      if (node.output_size() > 1)
        eraseFrom(node.mutable_output(), 1);
    }
  }
}

/// Dropout that PyTorch 2's exporter writes as random ops (in-place
/// dropout, torchvision's StochasticDepth, Dropout2d, AlphaDropout), which
/// the importer reads as dropout: x * ((uniform < keep) / keep), possibly
/// with casts and arithmetic on the mask with constants, is x at inference,
/// as is that plus an affine function of the same mask (AlphaDropout's);
/// RReLU's PRelu of random slopes is LeakyRelu of their mean. The mask's
/// nodes are left unread, for pruning.
void removeRandomMasks(onnx::GraphProto &graph) {
  std::set<std::string> masks, applied, constants;
  std::map<std::string, double> means; // of RandomUniformLike's noise
  for (const auto &init : graph.initializer())
    if (init.dims_size() == 0 || (init.dims_size() == 1 && init.dims(0) == 1))
      constants.insert(init.name());
  auto toIdentity = [](onnx::NodeProto &node, const std::string &input) {
    node.set_op_type("Identity");
    node.clear_input();
    node.add_input(input);
    node.clear_attribute();
  };
  for (auto &node : *graph.mutable_node()) {
    const std::string &op = node.op_type();
    auto is = [&](const std::set<std::string> &set, int i) {
      return i < node.input_size() && set.count(node.input(i)) > 0;
    };
    bool ofMask = is(masks, 0);
    bool constantOperands = llvm::all_of(
        node.input(), [&](auto &name) { return constants.count(name) > 0; });
    if (op == "Constant" || ((op == "Cast" || op == "CastLike") &&
                             node.input_size() > 0 && is(constants, 0))) {
      constants.insert(node.output().begin(), node.output().end());
      continue;
    }
    if (constantOperands)
      continue;
    if (op == "RandomUniformLike" ||
        (ofMask && (op == "Less" || op == "Cast" || op == "CastLike"))) {
      masks.insert(node.output().begin(), node.output().end());
      if (op == "RandomUniformLike") {
        double bounds[2] = {0, 1}; // low, high
        for (const auto &attr : node.attribute())
          if (attr.name() == "low" || attr.name() == "high")
            bounds[attr.name() == "high"] = attr.f();
        means[node.output(0)] = (bounds[0] + bounds[1]) / 2;
      }
      continue;
    }
    // RReLU: PRelu with random slopes is LeakyRelu with their mean.
    if (op == "PRelu" && is(masks, 1) && means.count(node.input(1))) {
      float slope = float(means[node.input(1)]);
      std::string input = node.input(0);
      toIdentity(node, input);
      node.set_op_type("LeakyRelu");
      onnx::AttributeProto *alpha = node.add_attribute();
      alpha->set_name("alpha");
      alpha->set_type(onnx::AttributeProto::FLOAT);
      alpha->set_f(slope);
      continue;
    }
    static const char *arithmetic[] = {"Add", "Sub", "Mul", "Div"};
    if (!llvm::is_contained(arithmetic, op) || node.input_size() != 2)
      continue;
    int mask = is(masks, 1) ? 1 : ofMask ? 0 : -1;
    if (mask < 0)
      continue;
    if (is(constants, 1 - mask)) { // arithmetic on the mask
      masks.insert(node.output(0));
      continue;
    }
    if (op == "Mul" || (op == "Add" && is(applied, 1 - mask))) {
      std::string input = node.input(1 - mask);
      toIdentity(node, input);
      applied.insert(node.output(0));
    }
  }
}

/// Removes nodes whose outputs nothing reads and initializers nothing
/// reads (with their graph input, where the model lists initializers as
/// inputs), then the outputs and value_info of values no longer there;
/// `state` names the initializers export adds.
void prune(onnx::GraphProto &graph, const std::set<std::string> &state) {
  auto eraseIf = [](auto *values, auto &&drop) {
    for (int i = values->size() - 1; i >= 0; --i)
      if (drop(values->Get(i).name()))
        values->DeleteSubrange(i, 1);
  };
  std::set<std::string> outputs, pruned;
  for (const auto &output : graph.output())
    outputs.insert(output.name());
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::string> read = outputs;
    for (const auto &node : graph.node())
      read.insert(node.input().begin(), node.input().end());
    auto *nodes = graph.mutable_node();
    for (int i = nodes->size() - 1; i >= 0; --i) {
      bool used = false;
      for (const std::string &output : nodes->Get(i).output())
        used |= !output.empty() && read.count(output);
      if (!used) {
        nodes->DeleteSubrange(i, 1);
        changed = true;
      }
    }
    eraseIf(graph.mutable_initializer(), [&](const std::string &name) {
      if (read.count(name))
        return false;
      pruned.insert(name);
      return changed = true;
    });
  }
  eraseIf(graph.mutable_input(),
          [&](const std::string &name) { return pruned.count(name) > 0; });
  std::set<std::string> defined = state;
  for (const auto &input : graph.input())
    defined.insert(input.name());
  for (const auto &init : graph.initializer())
    defined.insert(init.name());
  for (const auto &node : graph.node())
    defined.insert(node.output().begin(), node.output().end());
  auto undefined = [&](const std::string &name) {
    return !defined.count(name);
  };
  eraseIf(graph.mutable_output(), undefined);
  eraseIf(graph.mutable_value_info(), undefined);
}

/// The graph's forms at the opsets from 7 to kMaxOpset outside
/// [unchangedLow, unchangedHigh], adjacent opsets of the same form merged;
/// `state` names the initializers export adds.
std::vector<GraphForm> getOtherForms(const onnx::GraphProto &graph,
                                     int64_t opset, int64_t unchangedLow,
                                     int64_t unchangedHigh,
                                     const std::set<std::string> &state) {
  std::string original = graph.SerializeAsString();
  std::vector<GraphForm> forms;
  for (int64_t target = 7; target <= kMaxOpset; ++target) {
    if (target >= unchangedLow && target <= unchangedHigh)
      continue;
    GraphForm form{target, target, {}, ""};
    if (target < kMinConvertedOpset) {
      form.problem = "dpc converts graphs to opsets " +
                     std::to_string(kMinConvertedOpset) + " to " +
                     std::to_string(kMaxOpset) +
                     ", and the model's "
                     "operators are not the same at " +
                     std::to_string(target);
    } else {
      onnx::GraphProto converted = graph;
      form.problem = convertOpset(converted, opset, target);
      prune(converted, state); // e.g. axes that became attributes
      std::string bytes = converted.SerializeAsString();
      if (form.problem.empty() && bytes != original)
        form.graph.assign(bytes.begin(), bytes.end());
    }
    if (!forms.empty() && forms.back().maxOpset == target - 1 &&
        forms.back().graph == form.graph &&
        forms.back().problem == form.problem)
      forms.back().maxOpset = target;
    else
      forms.push_back(std::move(form));
  }
  return forms;
}

class Builder {
public:
  Builder(onnx::ModelProto &model, llvm::ArrayRef<StateTensor> state,
          const llvm::StringMap<std::vector<uint8_t>> &tensors)
      : model(model), state(state), tensors(tensors) {}

  /// Fills `result`, or returns the problem.
  std::string build(StringRef producerVersion, InferenceModel &result);

private:
  std::string takeState(onnx::GraphProto &graph);
  std::string inlineExternalData(onnx::GraphProto &graph);

  onnx::ModelProto &model;
  llvm::ArrayRef<StateTensor> state;
  const llvm::StringMap<std::vector<uint8_t>> &tensors;
};

/// Removes the state's initializers (and the Identity nodes that name
/// deduplicated ones) after checking that the model holds each as the plan
/// does.
std::string Builder::takeState(onnx::GraphProto &graph) {
  std::map<std::string, const onnx::TensorProto *> initializers;
  for (const auto &init : graph.initializer())
    initializers[init.name()] = &init;
  std::map<std::string, int> identities;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    if (node.op_type() == "Identity" && node.input_size() == 1 &&
        node.output_size() == 1)
      identities[node.output(0)] = i;
  }
  std::set<std::string> names;
  std::set<int> identitiesTaken;
  for (const StateTensor &tensor : state) {
    names.insert(tensor.name);
    // An Identity (chain) of an initializer: the tensor the model holds.
    std::string source = tensor.name;
    for (int hops = 0; !initializers.count(source) && hops < graph.node_size();
         ++hops) {
      auto identity = identities.find(source);
      if (identity == identities.end())
        break;
      if (source == tensor.name)
        identitiesTaken.insert(identity->second);
      source = graph.node(identity->second).input(0);
    }
    auto init = initializers.find(source);
    if (init == initializers.end())
      return "the plan's tensor '" + tensor.name +
             "' is not an initializer of the model";
    std::vector<int64_t> dims(init->second->dims().begin(),
                              init->second->dims().end());
    llvm::ArrayRef<int64_t> planDims = tensor.type.getShape();
    if (dims != std::vector<int64_t>(planDims.begin(), planDims.end()) ||
        init->second->data_type() !=
            getOnnxDataType(tensor.type.getElementType()))
      return "the plan's tensor '" + tensor.name + "' " + formatDims(planDims) +
             " is " + formatDims(dims) + " or of another type in the model";
  }
  auto *nodes = graph.mutable_node();
  for (auto it = identitiesTaken.rbegin(); it != identitiesTaken.rend(); ++it)
    nodes->DeleteSubrange(*it, 1);
  auto *inits = graph.mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i)
    if (names.count(inits->Get(i).name()))
      inits->DeleteSubrange(i, 1);
  // IR 3 lists every initializer among the graph's inputs.
  if (model.ir_version() < 4) {
    std::set<std::string> inputs;
    for (const auto &input : graph.input())
      inputs.insert(input.name());
    for (const StateTensor &tensor : state) {
      if (inputs.count(tensor.name))
        continue;
      auto *input = graph.add_input();
      input->set_name(tensor.name);
      auto *type = input->mutable_type()->mutable_tensor_type();
      type->set_elem_type(getOnnxDataType(tensor.type.getElementType()));
      for (int64_t dim : tensor.type.getShape())
        type->mutable_shape()->add_dim()->set_dim_value(dim);
    }
  }
  prune(graph, names);
  return "";
}

/// Kept initializers stored next to the model file go inline: the exported
/// file stands alone.
std::string Builder::inlineExternalData(onnx::GraphProto &graph) {
  for (auto &init : *graph.mutable_initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    auto bytes = tensors.find(init.name());
    if (bytes == tensors.end())
      return "initializer '" + init.name() + "' has no data";
    init.clear_external_data();
    init.set_data_location(onnx::TensorProto::DEFAULT);
    init.set_raw_data(bytes->second.data(), bytes->second.size());
  }
  return "";
}

std::string Builder::build(StringRef producerVersion, InferenceModel &result) {
  // The model keeps the rest: it becomes the head.
  onnx::GraphProto graph;
  graph.Swap(model.mutable_graph());
  model.clear_graph();
  switchToInference(graph);
  removeRandomMasks(graph);
  if (std::string problem = takeState(graph); !problem.empty())
    return problem;
  if (std::string problem = inlineExternalData(graph); !problem.empty())
    return problem;
  result.irVersion = model.ir_version();
  result.opset = getDefaultOpset(model);
  std::tie(result.minOpset, result.maxOpset) =
      getUnchangedOpsets(graph, result.opset);
  std::set<std::string> stateNames;
  for (const StateTensor &tensor : state)
    stateNames.insert(tensor.name);
  result.forms = getOtherForms(graph, result.opset, result.minOpset,
                               result.maxOpset, stateNames);

  model.clear_ir_version();
  model.clear_training_info();
  auto *opsets = model.mutable_opset_import();
  for (int i = opsets->size() - 1; i >= 0; --i)
    if (opsets->Get(i).domain().empty() || opsets->Get(i).domain() == "ai.onnx")
      opsets->DeleteSubrange(i, 1);
  model.set_producer_name("dpc");
  model.set_producer_version(producerVersion.str());
  std::string headBytes = model.SerializeAsString();
  std::string graphBytes = graph.SerializeAsString();
  result.head.assign(headBytes.begin(), headBytes.end());
  result.graph.assign(graphBytes.begin(), graphBytes.end());
  return "";
}

} // namespace

bool dpc::frontend::buildInferenceModel(
    StringRef path, llvm::ArrayRef<StateTensor> state,
    const llvm::StringMap<std::vector<uint8_t>> &tensors,
    StringRef producerVersion, InferenceModel &result, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  onnx::ModelProto model;
  if (!buffer || (*buffer)->getBufferSize() > size_t(INT_MAX) ||
      !model.ParseFromArray((*buffer)->getBufferStart(),
                            int((*buffer)->getBufferSize()))) {
    error = "not an ONNX model (truncated, or not a model file?)";
    return false;
  }
  result = InferenceModel();
  try {
    Builder builder(model, state, tensors);
    result.problem = builder.build(producerVersion, result);
  } catch (const std::exception &e) {
    result.problem = e.what();
  }
  if (!result.problem.empty())
    result.head.clear(), result.graph.clear();
  return true;
}
