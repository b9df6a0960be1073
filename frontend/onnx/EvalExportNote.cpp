//===- EvalExportNote.cpp - a model exported in eval mode? ----------------===//

#include "frontend/onnx/EvalExportNote.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <onnx/onnx_pb.h>

#include <climits>

using namespace dpc::frontend;
using llvm::StringRef;

namespace {

/// Batch norm or dropout that trains: what PyTorch's training-mode exports
/// write.
bool isTrainingForm(const onnx::NodeProto &node) {
  auto hasExtraOutput = [&] {
    return node.output_size() > 1 && !node.output(1).empty();
  };
  if (node.op_type() == "BatchNormalization") {
    for (const auto &attribute : node.attribute())
      if (attribute.name() == "training_mode" && attribute.i() != 0)
        return true;
    // Before opset 14, the batch statistics outputs; PyTorch 2's default
    // exporter writes training batch norm in inference form, under the
    // name of the ATen op.
    return hasExtraOutput() ||
           StringRef(node.name()).contains("batch_norm_legit_functional");
  }
  if (node.op_type() == "Dropout") {
    // From opset 12 a training_mode input; before, the mask output.
    return (node.input_size() > 2 && !node.input(2).empty()) ||
           hasExtraOutput();
  }
  // PyTorch 2's exporter writes in-place dropout as random ops.
  return node.op_type() == "RandomUniformLike" || node.op_type() == "Bernoulli";
}

} // namespace

bool dpc::frontend::suggestsNormOrDropout(StringRef name) {
  std::string lower = name.lower();
  StringRef text(lower);
  if (text.contains("batchnorm") || text.contains("batch_norm") ||
      text.contains("dropout"))
    return true;
  // `bn` alone or numbered, as a part of a dotted or slashed name: not the
  // letters inside a word.
  while (!text.empty()) {
    StringRef part = text.take_while(llvm::isAlnum);
    text = text.drop_front(part.size()).drop_while([](char c) {
      return !llvm::isAlnum(c);
    });
    if (part.consume_front("bn") && llvm::all_of(part, llvm::isDigit))
      return true;
  }
  return false;
}

std::string dpc::frontend::getEvalExportNote(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  onnx::ModelProto model;
  if (!buffer || (*buffer)->getBufferSize() > size_t(INT_MAX) ||
      !model.ParseFromArray((*buffer)->getBufferStart(),
                            int((*buffer)->getBufferSize())))
    return "";
  const onnx::GraphProto &graph = model.graph();
  std::string hint;
  auto consider = [&](const std::string &name) {
    if (hint.empty() && suggestsNormOrDropout(name))
      hint = name;
  };
  for (const auto &node : graph.node())
    if (isTrainingForm(node))
      return "";
  // Initializers first: their names are the module's (`bn1.weight`).
  for (const auto &init : graph.initializer())
    consider(init.name());
  for (const auto &node : graph.node()) {
    consider(node.name());
    for (const std::string &output : node.output())
      consider(output);
  }
  if (hint.empty())
    return "";
  return "no batch norm or dropout in training form, yet names such as '" +
         hint +
         "' suggest the model had them: an eval-mode export drops dropout "
         "and can fold batch norm into the convolutions (see \"How to "
         "export for dpc\" in the README)";
}
