//===- BuildTrainStep.cpp - autodiff @forward into @train_step ------------===//
//
// Reverse-mode differentiation of the forward graph. The pass knows the
// function signatures, the loss and the optimizers; what each op's gradient
// is, it asks the op (DifferentiableOpInterface).
//
//===----------------------------------------------------------------------===//

#include "ir/nn/NNOps.h"
#include "ir/nn/StepNames.h"
#include "passes/Passes.h"
#include "passes/TrainLoss.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

namespace dpc {
#define GEN_PASS_DEF_NNBUILDTRAINSTEP
#include "passes/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc::nn;
using dpc::LossOptions;
using dpc::TrainLoss;

namespace {

/// The arguments of @forward, by role, in their order.
struct ForwardSignature {
  SmallVector<BlockArgument> inputs, params, buffers;
};

/// One argument of a step being built: its type and attributes.
struct StepArg {
  Type type;
  DictionaryAttr attrs;
};

/// Collects the step's arguments, then creates the function with them.
class StepBuilder {
public:
  StepBuilder(MLIRContext *context) : context(context) {}

  /// Adds an argument; returns its index.
  unsigned add(Type type, DictionaryAttr attrs) {
    args.push_back({type, attrs});
    return args.size() - 1;
  }
  unsigned add(Type type, StringRef attrName, Attribute value) {
    return add(
        type, DictionaryAttr::get(
                  context,
                  {NamedAttribute(StringAttr::get(context, attrName), value)}));
  }

  /// Creates `name` after `after`, with an entry block and no results yet.
  func::FuncOp create(OpBuilder &b, func::FuncOp after, StringRef name) {
    SmallVector<Type> types;
    for (const StepArg &arg : args)
      types.push_back(arg.type);
    b.setInsertionPointAfter(after);
    auto func = b.create<func::FuncOp>(after.getLoc(), name,
                                       b.getFunctionType(types, {}));
    for (auto [i, arg] : llvm::enumerate(args))
      if (arg.attrs)
        func.setArgAttrs(i, arg.attrs);
    func.addEntryBlock();
    b.setInsertionPointToEnd(&func.front());
    return func;
  }

private:
  MLIRContext *context;
  SmallVector<StepArg> args;
};

/// A step's result: its value and naming attribute.
struct StepResult {
  Value value;
  StringRef attrName;
  Attribute attrValue;
};

/// Returns `results` from `func` and sets its type and result attributes.
void finishStep(OpBuilder &b, func::FuncOp func, ArrayRef<StepResult> results) {
  SmallVector<Value> values;
  for (const StepResult &result : results)
    values.push_back(result.value);
  b.create<func::ReturnOp>(func.getLoc(), values);
  func.setType(b.getFunctionType(func.getArgumentTypes(),
                                 ValueRange(values).getTypes()));
  for (auto [i, result] : llvm::enumerate(results))
    func.setResultAttr(i, result.attrName, result.attrValue);
}

StringAttr paramName(func::FuncOp forward, BlockArgument param) {
  return forward.getArgAttrOfType<StringAttr>(param.getArgNumber(),
                                              NNDialect::kParamAttrName);
}

StringAttr bufferName(func::FuncOp forward, BlockArgument buffer) {
  return forward.getArgAttrOfType<StringAttr>(buffer.getArgNumber(),
                                              NNDialect::kBufferAttrName);
}

struct NNBuildTrainStepPass
    : public dpc::impl::NNBuildTrainStepBase<NNBuildTrainStepPass> {
  using NNBuildTrainStepBase::NNBuildTrainStepBase;

  void runOnOperation() override;

private:
  LogicalResult checkOptions(ModuleOp module);
  FailureOr<ForwardSignature> readSignature(func::FuncOp forward);
  FailureOr<TrainLoss> chooseLoss(func::FuncOp forward);
  LogicalResult cloneForward(OpBuilder &b, func::FuncOp forward,
                             IRMapping &mapping, bool training,
                             DenseMap<Value, Value> &bufferUpdates);
  void buildEvalStep(OpBuilder &b, func::FuncOp forward,
                     const ForwardSignature &signature, const TrainLoss &loss);
  LogicalResult buildTrainStep(OpBuilder &b, func::FuncOp forward,
                               const ForwardSignature &signature,
                               const TrainLoss &loss);
  LogicalResult buildGradients(OpBuilder &b, Operation *firstOp, Value loss,
                               ArrayRef<Value> params,
                               DenseMap<Value, Value> &grads);
  /// The optimizer's update of parameter `value` (the forward's `param`)
  /// by `grad`: sets `newParam` and `state` (its optimizer state, updated).
  LogicalResult buildUpdate(OpBuilder &b, func::FuncOp forward,
                            BlockArgument param, Value value, Value grad,
                            Value lr, Value step, Value &newParam,
                            SmallVector<Value> &state);

  double resolvedWeightDecay() const {
    if (weightDecay >= 0)
      return weightDecay;
    return optimizer == "adamw" ? 0.01 : 0.0;
  }
};

} // namespace

LogicalResult NNBuildTrainStepPass::checkOptions(ModuleOp module) {
  if (optimizer != "sgd" && optimizer != "adamw")
    return module.emitError()
           << "unknown optimizer '" << optimizer << "'; supported: sgd, adamw";
  if (nesterov && (momentum <= 0 || dampening != 0))
    return module.emitError()
           << "nesterov needs a momentum > 0 and a dampening of 0";
  return success();
}

FailureOr<ForwardSignature>
NNBuildTrainStepPass::readSignature(func::FuncOp forward) {
  if (forward.isExternal() || !forward.getBody().hasOneBlock())
    return forward.emitError() << "@forward must have a body of one block";
  ForwardSignature signature;
  for (BlockArgument arg : forward.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (forward.getArgAttr(i, NNDialect::kInputAttrName))
      signature.inputs.push_back(arg);
    else if (forward.getArgAttr(i, NNDialect::kParamAttrName))
      signature.params.push_back(arg);
    else if (forward.getArgAttr(i, NNDialect::kBufferAttrName))
      signature.buffers.push_back(arg);
    else
      return forward.emitError()
             << "argument " << i
             << " of @forward is not marked nn.input, nn.param or nn.buffer";
  }
  if (signature.params.empty())
    return forward.emitError()
           << "@forward has no nn.param argument: nothing to train";
  if (forward.getNumResults() == 0)
    return forward.emitError() << "@forward has no result to train";
  return signature;
}

FailureOr<TrainLoss> NNBuildTrainStepPass::chooseLoss(func::FuncOp forward) {
  LossOptions options;
  options.loss = loss;
  options.classAxis = classAxis;
  if (ignoreIndex != std::numeric_limits<int64_t>::min())
    options.ignoreIndex = ignoreIndex;
  options.labelSmoothing = labelSmoothing;
  options.classWeights.assign(classWeights.begin(), classWeights.end());
  options.posWeight.assign(posWeight.begin(), posWeight.end());
  options.delta = delta;
  return TrainLoss::get(forward.getLoc(),
                        dyn_cast<RankedTensorType>(forward.getResultTypes()[0]),
                        options);
}

/// Clones @forward's body (less its return) at `b`. Evaluating, dropout is
/// the identity. In training, batch norm uses batch statistics: each
/// nn.batch_norm becomes nn.batch_norm_train, and `bufferUpdates` maps each
/// running-statistics argument of the step to its new value.
LogicalResult
NNBuildTrainStepPass::cloneForward(OpBuilder &b, func::FuncOp forward,
                                   IRMapping &mapping, bool training,
                                   DenseMap<Value, Value> &bufferUpdates) {
  for (Operation &op : forward.front().without_terminator()) {
    // Dropout is the identity when evaluating.
    if (auto dropout = dyn_cast<DropoutOp>(op); dropout && !training) {
      mapping.map(dropout.getResult(), mapping.lookup(dropout.getInput()));
      continue;
    }
    // RReLU's random slopes are their mean when evaluating.
    if (auto scale = dyn_cast<RandomScaleOp>(op); scale && !training) {
      float mean = float((scale.getLow().convertToDouble() +
                          scale.getHigh().convertToDouble()) /
                         2);
      auto scalar = RankedTensorType::get({}, b.getF32Type());
      Value factor = b.create<ConstantOp>(scale.getLoc(),
                                          DenseElementsAttr::get(scalar, mean));
      mapping.map(scale.getResult(),
                  b.create<MulOp>(scale.getLoc(),
                                  mapping.lookup(scale.getInput()), factor));
      continue;
    }
    auto batchNorm = dyn_cast<BatchNormOp>(op);
    if (!training || !batchNorm) {
      b.clone(op, mapping);
      continue;
    }
    auto train = b.create<BatchNormTrainOp>(
        batchNorm.getLoc(), mapping.lookup(batchNorm.getInput()),
        mapping.lookup(batchNorm.getScale()),
        mapping.lookup(batchNorm.getShift()),
        mapping.lookup(batchNorm.getRunningMean()),
        mapping.lookup(batchNorm.getRunningVar()), batchNorm.getEpsilon(),
        batchNorm.getMomentum());
    mapping.map(batchNorm.getResult(), train.getResult());
    for (auto [running, updated] :
         {std::pair(train.getRunningMean(), train.getNewRunningMean()),
          std::pair(train.getRunningVar(), train.getNewRunningVar())}) {
      if (!isa<BlockArgument>(running))
        continue;
      if (!bufferUpdates.try_emplace(running, updated).second)
        return batchNorm.emitOpError()
               << "updates running statistics that another batch_norm "
                  "already updates";
    }
  }
  return success();
}

void NNBuildTrainStepPass::buildEvalStep(OpBuilder &b, func::FuncOp forward,
                                         const ForwardSignature &signature,
                                         const TrainLoss &trainLoss) {
  MLIRContext *context = forward.getContext();
  RankedTensorType labelsType = trainLoss.getTargetType();
  StepBuilder step(context);
  IRMapping mapping;
  SmallVector<std::pair<BlockArgument, unsigned>> mapped;
  for (BlockArgument arg : signature.inputs)
    mapped.push_back({arg, step.add(arg.getType(), forward.getArgAttrDict(
                                                       arg.getArgNumber()))});
  unsigned labels =
      step.add(labelsType, NNDialect::kLabelsAttrName, UnitAttr::get(context));
  for (ArrayRef<BlockArgument> group : {signature.params, signature.buffers})
    for (BlockArgument arg : group)
      mapped.push_back({arg, step.add(arg.getType(), forward.getArgAttrDict(
                                                         arg.getArgNumber()))});
  func::FuncOp eval = step.create(b, forward, dpc::steps::kEval);
  for (auto [arg, index] : mapped)
    mapping.map(arg, eval.getArgument(index));
  DenseMap<Value, Value> noUpdates;
  (void)cloneForward(b, forward, mapping, /*training=*/false, noUpdates);
  Value logits = mapping.lookup(forward.front().getTerminator()->getOperand(0));
  Value labelsArg = eval.getArgument(labels);
  Location loc = forward.getLoc();
  Value loss = trainLoss.build(b, loc, logits, labelsArg);
  Value correct = trainLoss.buildCorrectCount(b, loc, logits, labelsArg);
  StringRef output = NNDialect::kOutputAttrName;
  SmallVector<StepResult> results = {{loss, output, b.getStringAttr("loss")}};
  if (correct)
    results.push_back({correct, output, b.getStringAttr("correct")});
  results.push_back({logits, output, b.getStringAttr("logits")});
  finishStep(b, eval, results);
}

/// Builds, at the end of `body`, the gradient of `loss` with respect to every
/// value between `firstOp` and the loss that depends on a parameter.
LogicalResult
NNBuildTrainStepPass::buildGradients(OpBuilder &b, Operation *firstOp,
                                     Value loss, ArrayRef<Value> params,
                                     DenseMap<Value, Value> &grads) {
  // Only values that depend on a parameter need a gradient.
  SmallVector<Operation *> forwardOps;
  DenseSet<Value> active(params.begin(), params.end());
  for (Operation *op = firstOp; op; op = op->getNextNode()) {
    forwardOps.push_back(op);
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op->result_begin(), op->result_end());
    if (op == loss.getDefiningOp())
      break;
  }

  auto lossType = cast<RankedTensorType>(loss.getType());
  grads[loss] = b.create<ConstantOp>(
      loss.getLoc(),
      DenseElementsAttr::get(lossType,
                             b.getFloatAttr(lossType.getElementType(), 1.0)));
  for (Operation *op : llvm::reverse(forwardOps)) {
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults())
      resultGrads.push_back(grads.lookup(result));
    if (llvm::none_of(resultGrads, [](Value g) { return g; }))
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitOpError()
             << "is not differentiable, so no training step can be built "
                "through it";
    SmallVector<Value> operandGrads;
    if (failed(differentiable.buildVectorJacobianProduct(b, resultGrads,
                                                         operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitOpError()
             << "built " << operandGrads.size() << " gradients for "
             << op->getNumOperands() << " operands";
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad || !active.contains(operand))
        continue;
      // A value used more than once gets the sum of its uses' gradients.
      auto [it, inserted] = grads.try_emplace(operand, grad);
      if (!inserted)
        it->second = b.create<AddOp>(op->getLoc(), it->second, grad);
    }
  }
  return success();
}

/// The train step's result for `buffer` (the forward's), at `value` in the
/// step: its training-mode update where the forward makes one (batch norm's
/// running statistics), else itself.
static StepResult bufferResult(func::FuncOp forward, BlockArgument buffer,
                               Value value,
                               const DenseMap<Value, Value> &bufferUpdates) {
  Value updated = bufferUpdates.lookup(value);
  return {updated ? updated : value, NNDialect::kBufferUpdateAttrName,
          bufferName(forward, buffer)};
}

/// Gradients of values that lead to no parameter (e.g. the data inputs) are
/// built whole by the ops' VJPs: drops them and whatever else is unused.
static void eraseDeadOps(Block &body) {
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
}

LogicalResult
NNBuildTrainStepPass::buildUpdate(OpBuilder &b, func::FuncOp forward,
                                  BlockArgument param, Value value, Value grad,
                                  Value lr, Value step, Value &newParam,
                                  SmallVector<Value> &state) {
  Location paramLoc = param.getLoc();
  // The update ops infer their types and would abort on a mismatch, which
  // only a forward graph that mixes the batch into a parameter's shape can
  // cause: say so in one line instead.
  if (grad.getType() != value.getType())
    return emitError(paramLoc)
           << "the gradient of parameter '"
           << paramName(forward, param).getValue() << "' is " << grad.getType()
           << ", not the parameter's " << value.getType()
           << " (does the batch reach its shape?)";
  double decay = resolvedWeightDecay();
  if (optimizer == "adamw") {
    auto update = b.create<AdamWUpdateOp>(
        paramLoc, value, grad, state[0], state[1], step, lr,
        b.getF64FloatAttr(beta1), b.getF64FloatAttr(beta2),
        b.getF64FloatAttr(eps), b.getF64FloatAttr(decay));
    newParam = update.getNewParam();
    state = {update.getNewExpAvg(), update.getNewExpAvgSq()};
    return success();
  }
  auto update = b.create<SgdUpdateOp>(
      paramLoc, value, grad, lr, state.empty() ? Value() : state[0],
      b.getF64FloatAttr(momentum), b.getF64FloatAttr(dampening),
      b.getBoolAttr(nesterov), b.getF64FloatAttr(decay));
  newParam = update.getNewParam();
  if (!state.empty())
    state = {update.getNewMomentumBuffer()};
  return success();
}

LogicalResult
NNBuildTrainStepPass::buildTrainStep(OpBuilder &b, func::FuncOp forward,
                                     const ForwardSignature &signature,
                                     const TrainLoss &trainLoss) {
  MLIRContext *context = forward.getContext();
  auto logitsType = cast<RankedTensorType>(forward.getResultTypes()[0]);
  Type elementType = logitsType.getElementType();
  RankedTensorType labelsType = trainLoss.getTargetType();
  bool adamw = optimizer == "adamw";
  SmallVector<StringRef> stateNames;
  if (adamw)
    stateNames = {"exp_avg", "exp_avg_sq"};
  else if (momentum != 0)
    stateNames = {"momentum_buffer"};

  StepBuilder step(context);
  SmallVector<std::pair<BlockArgument, unsigned>> mapped;
  auto addForwardArg = [&](BlockArgument arg) {
    mapped.push_back({arg, step.add(arg.getType(), forward.getArgAttrDict(
                                                       arg.getArgNumber()))});
  };
  llvm::for_each(signature.inputs, addForwardArg);
  Attribute unit = UnitAttr::get(context);
  unsigned labelsIndex = step.add(labelsType, NNDialect::kLabelsAttrName, unit);
  unsigned lrIndex = step.add(RankedTensorType::get({}, elementType),
                              NNDialect::kLearningRateAttrName, unit);
  unsigned stepIndex = 0;
  if (adamw)
    stepIndex =
        step.add(RankedTensorType::get({}, IntegerType::get(context, 64)),
                 NNDialect::kStepAttrName, unit);
  llvm::for_each(signature.params, addForwardArg);
  llvm::for_each(signature.buffers, addForwardArg);
  // Optimizer state, param-major: state[p][s].
  SmallVector<SmallVector<unsigned, 2>> stateIndices;
  for (BlockArgument param : signature.params) {
    stateIndices.emplace_back();
    for (StringRef state : stateNames)
      stateIndices.back().push_back(step.add(
          param.getType(), NNDialect::kOptStateAttrName,
          b.getStringAttr(paramName(forward, param).getValue() + "." + state)));
  }

  func::FuncOp train = step.create(b, forward, dpc::steps::kTrain);
  IRMapping mapping;
  for (auto [arg, index] : mapped)
    mapping.map(arg, train.getArgument(index));
  Block &body = train.front();

  DenseMap<Value, Value> bufferUpdates;
  if (failed(
          cloneForward(b, forward, mapping, /*training=*/true, bufferUpdates)))
    return failure();
  Operation *firstOp = body.empty() ? nullptr : &body.front();
  Value logits = mapping.lookup(forward.front().getTerminator()->getOperand(0));
  Value labels = train.getArgument(labelsIndex);
  Location loc = forward.getLoc();
  Value loss = trainLoss.build(b, loc, logits, labels);
  Value correct = trainLoss.buildCorrectCount(b, loc, logits, labels);
  if (!firstOp)
    firstOp = loss.getDefiningOp();

  SmallVector<Value> params;
  for (BlockArgument param : signature.params)
    params.push_back(mapping.lookup(param));
  DenseMap<Value, Value> grads;
  if (failed(buildGradients(b, firstOp, loss, params, grads)))
    return failure();

  StringRef output = NNDialect::kOutputAttrName;
  SmallVector<StepResult> results = {{loss, output, b.getStringAttr("loss")}};
  if (correct)
    results.push_back({correct, output, b.getStringAttr("correct")});
  SmallVector<StepResult> stateResults;
  Value lr = train.getArgument(lrIndex);
  for (auto [p, param] : llvm::enumerate(signature.params)) {
    Value value = params[p];
    SmallVector<Value> state;
    for (unsigned index : stateIndices[p])
      state.push_back(train.getArgument(index));
    SmallVector<Value> updated(state);
    Value newParam = value;
    // A parameter the loss does not depend on keeps its value and state.
    if (Value grad = grads.lookup(value))
      if (failed(buildUpdate(b, forward, param, value, grad, lr,
                             adamw ? train.getArgument(stepIndex) : Value(),
                             newParam, updated)))
        return failure();
    results.push_back(
        {newParam, NNDialect::kParamUpdateAttrName, paramName(forward, param)});
    for (auto [index, value] : llvm::zip(stateIndices[p], updated))
      stateResults.push_back(
          {value, NNDialect::kOptStateUpdateAttrName,
           train.getArgAttr(index, NNDialect::kOptStateAttrName)});
  }
  for (BlockArgument buffer : signature.buffers)
    results.push_back(
        bufferResult(forward, buffer, mapping.lookup(buffer), bufferUpdates));
  results.append(stateResults);
  finishStep(b, train, results);
  eraseDeadOps(body);
  return success();
}

void NNBuildTrainStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(checkOptions(module)))
    return signalPassFailure();
  auto forward = module.lookupSymbol<func::FuncOp>(dpc::steps::kForward);
  if (!forward) {
    module.emitError() << "no func.func @forward to build a training step from";
    return signalPassFailure();
  }
  for (StringRef name : {dpc::steps::kTrain, dpc::steps::kEval}) {
    if (module.lookupSymbol(name)) {
      module.emitError() << "the module already has a @" << name;
      return signalPassFailure();
    }
  }
  FailureOr<ForwardSignature> signature = readSignature(forward);
  if (failed(signature))
    return signalPassFailure();
  FailureOr<TrainLoss> trainLoss = chooseLoss(forward);
  if (failed(trainLoss))
    return signalPassFailure();
  OpBuilder b(&getContext());
  // Build train first so that the module reads forward, eval, train.
  if (failed(buildTrainStep(b, forward, *signature, *trainLoss))) {
    if (auto train = module.lookupSymbol<func::FuncOp>(dpc::steps::kTrain))
      train.erase();
    return signalPassFailure();
  }
  buildEvalStep(b, forward, *signature, *trainLoss);
}
