//===- LossShapes.cpp - the losses of nn.loss -----------------------------===//

#include "runtime/abi/shapes/LossShapes.h"
#include "runtime/abi/KernelArgs.h"

#include <cmath>
#include <string>

namespace dpc::plan {
using namespace args;

namespace {

const LossAttrs &lossAttrs(const KernelCall &call) {
  const LossAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_LossAttrs() : nullptr;
  if (!attrs)
    fail("LossAttrs are missing");
  return *attrs;
}

/// Fills the kind, options and weights of `s` from `attrs`.
void readOptions(const LossAttrs &attrs, LossShape &s) {
  int kind = static_cast<int>(attrs.kind());
  if (kind < 0 || kind > static_cast<int>(LossKind::MAX))
    fail("loss kind " + std::to_string(kind) + " is unknown");
  s.kind = static_cast<LossCode>(kind);
  s.hasIgnoreIndex = attrs.has_ignore_index();
  s.ignoreIndex = attrs.ignore_index();
  s.labelSmoothing = static_cast<float>(attrs.label_smoothing());
  s.delta = static_cast<float>(attrs.delta());
  if (!(s.labelSmoothing >= 0 && s.labelSmoothing <= 1))
    fail("label_smoothing " + std::to_string(attrs.label_smoothing()) +
         " is outside [0, 1]");
  if (!(s.delta >= 0) || (s.kind == LossCode::Huber && s.delta == 0))
    fail("delta " + std::to_string(attrs.delta()) + " is out of range");
  if (const auto *weights = attrs.weights()) {
    if (weights->size() > static_cast<uint32_t>(kMaxLossWeights))
      fail(std::to_string(weights->size()) + " loss weights, at most " +
           std::to_string(kMaxLossWeights) + " are supported");
    s.numWeights = static_cast<int32_t>(weights->size());
    for (int32_t i = 0; i < s.numWeights; ++i) {
      double w = weights->Get(i);
      if (!(w >= 0) || !std::isfinite(w))
        fail("loss weight " + std::to_string(i) + " is " + std::to_string(w));
      s.weights[i] = static_cast<float>(w);
    }
  }
}

/// Output and Target: a cross-entropy's logits and classes, or floats of
/// one shape.
void readExtents(const KernelCall &call, const LossAttrs &attrs, LossShape &s) {
  const TensorArg &output = operand(call, 0);
  Name outputName = operandName(call.kernel, 0);
  Name targetName = operandName(call.kernel, 1);
  expectRank(output, outputName, s.isCrossEntropy() ? 2 : 1, 8);
  const auto &dims = output.dims;
  if (!s.isCrossEntropy()) {
    s.elements = countOf(dims);
    s.outer = s.elements;
    s.classes = s.inner = 1;
    s.lastDim = dims.back();
    if (s.numWeights && s.numWeights != s.lastDim)
      fail("pos_weight has " + std::to_string(s.numWeights) +
           " entries for a last dim of " + std::to_string(s.lastDim));
    const TensorArg &target = operand(call, 1);
    if (target.dims != dims)
      fail(targetName + " " + formatDims(target.dims) + " is not " +
           outputName + "'s " + formatDims(dims));
    return;
  }
  int64_t axis = attrs.class_axis();
  if (axis < 1 || axis >= static_cast<int64_t>(dims.size()))
    fail("class_axis " + std::to_string(axis) + " is not a dim of " +
         formatDims(dims));
  s.outer = countOf(std::vector<int64_t>(dims.begin(), dims.begin() + axis));
  s.classes = dims[axis];
  s.inner = countOf(std::vector<int64_t>(dims.begin() + axis + 1, dims.end()));
  if (s.classes < 1)
    fail("the logits have no classes");
  if (s.numWeights && s.numWeights != s.classes)
    fail("class_weights has " + std::to_string(s.numWeights) + " entries for " +
         std::to_string(s.classes) + " classes");
  std::vector<int64_t> targetDims(dims);
  targetDims.erase(targetDims.begin() + axis);
  const TensorArg &target = operand(call, 1, DType::I32);
  if (target.dims != targetDims)
    fail(targetName + " " + formatDims(target.dims) + " is not " +
         formatDims(targetDims) + ", the logits' dims less the class axis");
}

} // namespace

LossShape getLossShape(const KernelCall &call) {
  const LossAttrs &attrs = lossAttrs(call);
  LossShape s;
  readOptions(attrs, s);
  readExtents(call, attrs, s);
  if (!s.isCrossEntropy())
    operand(call, 1); // the target: floats
  int64_t rows = operand(call, 0).dims[0];
  s.countDivisor = rows > 0 ? static_cast<double>(call.batch) *
                                  static_cast<double>(s.targets() / rows)
                            : 1.0;
  if (s.countDivisor <= 0)
    s.countDivisor = 1;
  switch (call.kernel) {
  case Kernel::LossForward:
    if (hasOperand(call, 2))
      expectOperandCount(call, 2, 1);
    expectResultCount(call, 0, 1);
    break;
  case Kernel::LossBackward:
    for (size_t i : {2, 3})
      if (hasOperand(call, i))
        expectOperandCount(call, i, 1);
    expectResultCount(call, 0, countOf(operand(call, 0).dims));
    break;
  case Kernel::LossWeight:
    if (!s.isCrossEntropy())
      fail("only a cross-entropy weighs its targets");
    expectResultCount(call, 0, 1);
    break;
  default: // LossCorrectCount
    if (!s.isCrossEntropy())
      fail("only a cross-entropy counts correct predictions");
    expectCountResult(call, 0);
    break;
  }
  return s;
}

} // namespace dpc::plan
