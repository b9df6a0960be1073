//===- TrainLoss.cpp - the loss a training step minimizes -----------------===//

#include "passes/TrainLoss.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace dpc;
using nn::LossKind;

FailureOr<TrainLoss> TrainLoss::get(Location loc, RankedTensorType output,
                                    const LossOptions &options) {
  std::optional<LossKind> kind =
      llvm::StringSwitch<std::optional<LossKind>>(options.loss)
          .Case("cross-entropy", LossKind::cross_entropy)
          .Case("mse", LossKind::mse)
          .Case("l1", LossKind::l1)
          .Case("huber", LossKind::huber)
          .Case("smooth-l1", LossKind::smooth_l1)
          .Case("bce-with-logits", LossKind::bce_with_logits)
          .Default(std::nullopt);
  if (!kind)
    return emitError(loc) << "unknown loss '" << options.loss
                          << "'; supported: cross-entropy, mse, l1, huber, "
                             "smooth-l1, bce-with-logits";
  bool classes = *kind == LossKind::cross_entropy;
  if (!output || !isa<FloatType>(output.getElementType()) ||
      output.getRank() < (classes ? 2 : 1))
    return emitError(loc) << "the first result of @forward must be float "
                          << (classes ? "logits [N, C, ...]"
                                      : "outputs [N, ...]")
                          << " for the " << options.loss << " loss, got "
                          << output;
  TrainLoss loss;
  loss.output = output;
  loss.kind = *kind;
  Builder b(output.getContext());
  auto add = [&](StringRef name, Attribute value) {
    loss.attrs.push_back(b.getNamedAttr(name, value));
  };
  add("kind", nn::LossKindAttr::get(b.getContext(), *kind));
  if (classes) {
    int64_t rank = output.getRank();
    int64_t axis =
        options.classAxis < 0 ? options.classAxis + rank : options.classAxis;
    if (axis < 1 || axis >= rank)
      return emitError(loc) << "--class-axis " << options.classAxis
                            << " is not a dim of the logits " << output
                            << " other than the batch";
    loss.classAxis = axis;
    if (axis != 1)
      add("class_axis", b.getI64IntegerAttr(axis));
    loss.ignoreIndex = options.ignoreIndex;
    if (options.ignoreIndex)
      add("ignore_index", b.getI64IntegerAttr(*options.ignoreIndex));
    if (options.labelSmoothing != 0)
      add("label_smoothing", b.getF64FloatAttr(options.labelSmoothing));
    int64_t numClasses = output.getDimSize(axis);
    if (!options.classWeights.empty() &&
        static_cast<int64_t>(options.classWeights.size()) != numClasses)
      return emitError(loc)
             << "--class-weights has " << options.classWeights.size()
             << " entries for " << numClasses << " classes";
    if (!options.classWeights.empty())
      add("class_weights", b.getDenseF64ArrayAttr(options.classWeights));
    loss.needsDivisor = options.ignoreIndex || !options.classWeights.empty();
  } else {
    if (options.ignoreIndex || options.labelSmoothing != 0 ||
        !options.classWeights.empty() || options.classAxis != 1)
      return emitError(loc)
             << "--ignore-index, --label-smoothing, --class-weights and "
                "--class-axis are cross-entropy options, not "
             << options.loss << "'s";
    if (*kind == LossKind::huber || *kind == LossKind::smooth_l1)
      add("delta", b.getF64FloatAttr(options.delta));
    if (!options.posWeight.empty()) {
      if (*kind != LossKind::bce_with_logits)
        return emitError(loc) << "--pos-weight is bce-with-logits' option";
      add("pos_weight", b.getDenseF64ArrayAttr(options.posWeight));
    }
  }
  // The ops' verifiers check the rest (delta's range, ...) once built.
  return loss;
}

RankedTensorType TrainLoss::getTargetType() const {
  if (kind != LossKind::cross_entropy)
    return output;
  SmallVector<int64_t> shape(output.getShape());
  shape.erase(shape.begin() + classAxis);
  return RankedTensorType::get(shape,
                               IntegerType::get(output.getContext(), 64));
}

Value TrainLoss::build(OpBuilder &b, Location loc, Value outputValue,
                       Value target) const {
  SmallVector<Value> operands = {outputValue, target};
  Type type = RankedTensorType::get({}, output.getElementType());
  if (needsDivisor)
    operands.push_back(b.create<nn::LossWeightOp>(
        loc, type, ValueRange{outputValue, target}, attrs));
  return b.create<nn::LossOp>(loc, type, operands, attrs);
}

Value TrainLoss::buildCorrectCount(OpBuilder &b, Location loc,
                                   Value outputValue, Value target) const {
  if (kind != LossKind::cross_entropy)
    return {};
  IntegerAttr ignore =
      ignoreIndex ? b.getI64IntegerAttr(*ignoreIndex) : IntegerAttr();
  return b.create<nn::CorrectCountOp>(
      loc, RankedTensorType::get({}, b.getI64Type()), outputValue, target,
      b.getI64IntegerAttr(classAxis), ignore);
}
