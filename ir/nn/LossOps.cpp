//===- LossOps.cpp - result types of the loss ops -------------------------===//
//
// nn.loss, its gradient, the weight of its valid targets and the count of
// correct predictions share their operands' rules: what target each kind
// of loss takes, and which attributes it may carry. One check serves all.
//
//===----------------------------------------------------------------------===//

#include "ir/nn/NNOps.h"
#include "ir/nn/ShapeChecks.h"

using namespace mlir;
using namespace dpc::nn;
using namespace dpc::nn::detail;

namespace {

/// The attributes of a loss op, whichever op carries them.
struct LossAttrs {
  LossKind kind;
  int64_t classAxis;
  std::optional<int64_t> ignoreIndex;
  double labelSmoothing;
  std::optional<ArrayRef<double>> classWeights;
  double delta;
  std::optional<ArrayRef<double>> posWeight;

  template <typename Adaptor> static LossAttrs of(Adaptor adaptor) {
    auto optional = [](std::optional<ArrayRef<double>> a) { return a; };
    std::optional<int64_t> ignore;
    if (auto attr = adaptor.getIgnoreIndexAttr())
      ignore = attr.getInt();
    return {adaptor.getKind(),
            static_cast<int64_t>(adaptor.getClassAxis()),
            ignore,
            adaptor.getLabelSmoothing().convertToDouble(),
            optional(adaptor.getClassWeights()),
            adaptor.getDelta().convertToDouble(),
            optional(adaptor.getPosWeight())};
  }
};

/// The target shape of a cross-entropy over `output`: its dims less the
/// class axis.
SmallVector<int64_t> classTargetShape(RankedTensorType output, int64_t axis) {
  SmallVector<int64_t> shape(output.getShape());
  shape.erase(shape.begin() + axis);
  return shape;
}

bool shapesAgree(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (!dimsAgree(x, y))
      return false;
  return true;
}

LogicalResult checkClassTargets(const ShapeError &error,
                                RankedTensorType output,
                                RankedTensorType target, const LossAttrs &a) {
  if (output.getRank() < 2) {
    error() << "cross_entropy's output must be logits of rank >= 2, got "
            << output;
    return failure();
  }
  if (a.classAxis < 1 || a.classAxis >= output.getRank()) {
    error() << "class_axis " << a.classAxis << " is not a dim in 1.."
            << output.getRank() - 1 << " of " << output;
    return failure();
  }
  if (!target.getElementType().isSignlessInteger()) {
    error() << "cross_entropy's target must hold integer classes, got "
            << target;
    return failure();
  }
  SmallVector<int64_t> shape = classTargetShape(output, a.classAxis);
  if (!shapesAgree(shape, target.getShape())) {
    std::string dims;
    for (int64_t d : shape)
      dims += (dims.empty() ? "" : "x") + dimToString(d);
    error() << "cross_entropy's target " << target
            << " must have the logits' shape less the class axis "
            << a.classAxis << ": [" << dims << "]";
    return failure();
  }
  int64_t classes = output.getDimSize(a.classAxis);
  if (a.classWeights && !dimsAgree(a.classWeights->size(), classes)) {
    error() << "class_weights has " << a.classWeights->size() << " entries for "
            << dimToString(classes) << " classes";
    return failure();
  }
  if (a.classWeights &&
      llvm::any_of(*a.classWeights, [](double w) { return !(w >= 0); })) {
    error() << "class_weights must be >= 0";
    return failure();
  }
  if (!(a.labelSmoothing >= 0 && a.labelSmoothing <= 1)) {
    error() << "label_smoothing " << a.labelSmoothing << " is outside [0, 1]";
    return failure();
  }
  return success();
}

LogicalResult checkFloatTargets(const ShapeError &error,
                                RankedTensorType output,
                                RankedTensorType target, const LossAttrs &a) {
  StringRef name = stringifyLossKind(a.kind);
  if (a.ignoreIndex || a.labelSmoothing != 0 || a.classWeights ||
      a.classAxis != 1) {
    error() << name
            << " takes no class_axis, ignore_index, label_smoothing or "
               "class_weights";
    return failure();
  }
  if (target.getElementType() != output.getElementType() ||
      !shapesAgree(output.getShape(), target.getShape())) {
    error() << name << "'s target " << target
            << " must have the output's shape and type " << output;
    return failure();
  }
  bool smooth = a.kind == LossKind::huber || a.kind == LossKind::smooth_l1;
  if (smooth && !(a.kind == LossKind::huber ? a.delta > 0 : a.delta >= 0)) {
    error() << name << "'s delta must be "
            << (a.kind == LossKind::huber ? "> 0" : ">= 0") << ", got "
            << a.delta;
    return failure();
  }
  if (a.posWeight && a.kind != LossKind::bce_with_logits) {
    error() << "only bce_with_logits takes a pos_weight";
    return failure();
  }
  if (a.posWeight && (output.getRank() < 1 ||
                      !dimsAgree(a.posWeight->size(),
                                 output.getDimSize(output.getRank() - 1)))) {
    error() << "pos_weight has " << a.posWeight->size()
            << " entries, not one per entry of the last dim of " << output;
    return failure();
  }
  return success();
}

/// Checks output and target for `attrs`' kind; `divisor`, when given, must
/// be a 0-d float of the output's type, and present iff the kind needs one.
LogicalResult checkLoss(const ShapeError &error, Value outputValue,
                        Value targetValue, const LossAttrs &attrs,
                        std::optional<Value> divisor) {
  auto output = cast<RankedTensorType>(outputValue.getType());
  auto target = cast<RankedTensorType>(targetValue.getType());
  if (failed(attrs.kind == LossKind::cross_entropy
                 ? checkClassTargets(error, output, target, attrs)
                 : checkFloatTargets(error, output, target, attrs)))
    return failure();
  if (!divisor)
    return success();
  bool needed = attrs.kind == LossKind::cross_entropy &&
                (attrs.ignoreIndex || attrs.classWeights);
  if (needed != static_cast<bool>(*divisor)) {
    error() << (needed ? "a cross_entropy with ignore_index or class_weights "
                         "needs a divisor (an nn.loss_weight)"
                       : "only a cross_entropy with ignore_index or "
                         "class_weights takes a divisor");
    return failure();
  }
  auto type =
      needed ? cast<RankedTensorType>(divisor->getType()) : RankedTensorType();
  if (needed && (type.getRank() != 0 ||
                 type.getElementType() != output.getElementType())) {
    error() << "the divisor must be a 0-d " << output.getElementType()
            << ", got " << type;
    return failure();
  }
  return success();
}

} // namespace

bool LossOp::needsDivisor() {
  return getKind() == LossKind::cross_entropy &&
         (getIgnoreIndex() || getClassWeights());
}

LogicalResult LossOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  if (failed(checkLoss(ShapeError{loc}, adaptor.getOutput(),
                       adaptor.getTarget(), LossAttrs::of(adaptor),
                       adaptor.getDivisor())))
    return failure();
  auto output = cast<RankedTensorType>(adaptor.getOutput().getType());
  inferred.push_back(RankedTensorType::get({}, output.getElementType()));
  return success();
}

LogicalResult LossGradOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto output = cast<RankedTensorType>(adaptor.getOutput().getType());
  if (failed(checkLoss(error, adaptor.getOutput(), adaptor.getTarget(),
                       LossAttrs::of(adaptor), adaptor.getDivisor())))
    return failure();
  auto lossGrad = cast<RankedTensorType>(adaptor.getLossGrad().getType());
  if (failed(checkRank(error, lossGrad, 0, "loss_grad")) ||
      failed(checkSameElementType(error, output, lossGrad, "loss_grad")))
    return failure();
  inferred.push_back(output);
  return success();
}

LogicalResult LossWeightOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  LossAttrs attrs = LossAttrs::of(adaptor);
  if (attrs.kind != LossKind::cross_entropy) {
    error() << "only a cross_entropy weighs its targets, not "
            << stringifyLossKind(attrs.kind);
    return failure();
  }
  if (failed(checkLoss(error, adaptor.getOutput(), adaptor.getTarget(), attrs,
                       std::nullopt)))
    return failure();
  auto output = cast<RankedTensorType>(adaptor.getOutput().getType());
  inferred.push_back(RankedTensorType::get({}, output.getElementType()));
  return success();
}

LogicalResult
CorrectCountOp::inferReturnTypes(MLIRContext *context,
                                 std::optional<Location> loc, Adaptor adaptor,
                                 SmallVectorImpl<Type> &inferred) {
  LossAttrs attrs{LossKind::cross_entropy,
                  static_cast<int64_t>(adaptor.getClassAxis()),
                  std::nullopt,
                  0.0,
                  std::nullopt,
                  1.0,
                  std::nullopt};
  if (failed(checkLoss(ShapeError{loc}, adaptor.getLogits(),
                       adaptor.getLabels(), attrs, std::nullopt)))
    return failure();
  inferred.push_back(RankedTensorType::get({}, IntegerType::get(context, 64)));
  return success();
}
