//===- ShardOptimizerState.cpp - ZeRO-1 on a partitioned step -------------===//
//
// Optimizer-state sharding (ZeRO stage 1, torch's ZeroRedundancyOptimizer)
// as a rewrite of the replicated step that dpc-partition-data-parallel
// builds. Every optimizer update is elementwise in its parameter, gradient
// and state, so a replica can update any element range of a parameter on
// its own. Each parameter with optimizer state is cut, flattened, into one
// contiguous element range per replica (balanced: the sizes differ by at
// most one element, for any shape and any device count); replica d then
//
//  - keeps only range d of each of the parameter's state tensors: the
//    step's state argument (still the whole, logical tensor) is flattened
//    and `dist.scatter`ed instead of `dist.replicate`d, and the step
//    returns each replica's range as its state update;
//  - updates range d of the parameter, from range d of its copy of the
//    parameter and of the (still all-reduced) gradient;
//  - gets the whole updated parameter back from a `dist.all_gather` of the
//    ranges, reshaped to the parameter's shape, which it returns as before.
//
// Element ranges rather than rows: rows would leave a [1, C] or [2, C]
// parameter on one or two devices and split [10, 256] as 3, 3, 3, 1 rows
// over four; ranges balance every tensor to one element, and a range is
// what the runtime and the checkpoints see anyway (a contiguous run of the
// row-major tensor). The updates compute the same float operations on the
// same values as before, element by element, so the parameters and the
// state are bit for bit those of the replicated step.
//
// The gradient stays all-reduced here and is cut afterwards: ZeRO-2 folds
// exactly that pattern (an all-reduce whose replica d only reads range d)
// into a `dist.reduce_scatter` (dpc-shard-gradients); ZeRO-3 moves the
// all-gather from after the update to before each use. Parameters without
// state (SGD without momentum) are left replicated, unless `stateless` asks
// for their updates to be cut too (for dpc-shard-gradients to shard their
// gradients).
//
//===----------------------------------------------------------------------===//

#include "ir/dist/DistOps.h"
#include "ir/nn/NNOps.h"
#include "ir/nn/StepNames.h"
#include "passes/OptimizerUpdates.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

#include <numeric>

namespace dpc {
#define GEN_PASS_DEF_SHARDOPTIMIZERSTATE
#include "passes/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using dpc::dist::DistDialect;
using namespace dpc::nn;

namespace {

/// `count` elements cut into `parts` contiguous ranges whose sizes differ
/// by at most one, the larger ones first.
SmallVector<int64_t> balancedSizes(int64_t count, int64_t parts) {
  SmallVector<int64_t> sizes;
  for (int64_t d = 0; d < parts; ++d)
    sizes.push_back(count / parts + (d < count % parts ? 1 : 0));
  return sizes;
}

/// The N updates of one parameter, one per replica, in replica order.
struct ParameterUpdates {
  dpc::dist::ReplicateOp parameter;
  SmallVector<Operation *> updates;
};

/// Rewrites one partitioned step; see the file comment.
class StepSharder {
public:
  StepSharder(func::FuncOp step, int64_t numReplicas, bool stateless)
      : step(step), numReplicas(numReplicas), stateless(stateless),
        b(step.getContext()) {}

  LogicalResult run();

private:
  LogicalResult collectUpdates();
  LogicalResult shardParameter(ParameterUpdates &group);
  /// Replaces the dist.replicate of state argument `state` by a flatten
  /// and a dist.scatter of `sizes`; returns the parts.
  FailureOr<SmallVector<Value>> scatterState(Value state,
                                             ArrayRef<int64_t> sizes);
  /// `value` as a 1-D tensor of its `count` elements (itself if it is).
  Value flatten(Value value, int64_t count);
  /// Range `d` of `value` (replica d's), flattened and cut by `sizes`.
  Value takeRange(Value value, ArrayRef<int64_t> sizes, int64_t d);
  void setReplica(Operation *op, int64_t d) {
    op->setAttr(DistDialect::kReplicaAttrName, b.getI64IntegerAttr(d));
  }
  RankedTensorType flatType(Value value, int64_t count) {
    return RankedTensorType::get(
        {count}, cast<RankedTensorType>(value.getType()).getElementType());
  }

  func::FuncOp step;
  int64_t numReplicas;
  /// Whether parameters without optimizer state are cut too.
  bool stateless;
  OpBuilder b;
  llvm::MapVector<Operation *, ParameterUpdates> groups;
  /// New step results, by the values they replace.
  DenseMap<Value, Value> replacedResults;
};

} // namespace

LogicalResult StepSharder::collectUpdates() {
  WalkResult walk =
      step.walk([&](Operation *op) {
        OpOperand *param = dpc::getParamOperand(op);
        if (!param || (dpc::getStateOperands(op).empty() && !stateless))
          return WalkResult::advance();
        auto replicate = param->get().getDefiningOp<dpc::dist::ReplicateOp>();
        auto replica =
            op->getAttrOfType<IntegerAttr>(DistDialect::kReplicaAttrName);
        if (!replicate || !replica) {
          op->emitOpError() << "cannot be sharded: its parameter is not a "
                               "replica's copy of a step argument";
          return WalkResult::interrupt();
        }
        ParameterUpdates &group = groups[replicate];
        group.parameter = replicate;
        group.updates.resize(numReplicas);
        if (group.updates[replica.getInt()]) {
          op->emitOpError()
              << "updates parameter argument "
              << cast<BlockArgument>(replicate.getInput()).getArgNumber()
              << " a second time in replica " << replica.getInt();
          return WalkResult::interrupt();
        }
        group.updates[replica.getInt()] = op;
        return WalkResult::advance();
      });
  if (walk.wasInterrupted())
    return failure();
  for (auto &[replicate, group] : groups)
    if (llvm::is_contained(group.updates, nullptr))
      return replicate->emitError()
             << "parameter argument "
             << cast<BlockArgument>(group.parameter.getInput()).getArgNumber()
             << " is updated in "
             << llvm::count_if(group.updates,
                               [](auto *u) { return u != nullptr; })
             << " of " << numReplicas << " replicas: cannot shard its state";
  return success();
}

FailureOr<SmallVector<Value>>
StepSharder::scatterState(Value state, ArrayRef<int64_t> sizes) {
  auto replicate = state.getDefiningOp<dpc::dist::ReplicateOp>();
  auto argument = replicate ? dyn_cast<BlockArgument>(replicate.getInput())
                            : BlockArgument();
  if (!argument ||
      !step.getArgAttr(argument.getArgNumber(), NNDialect::kOptStateAttrName))
    return emitError(state.getLoc())
           << "optimizer state of an update is not a replica's copy of an "
              "nn.opt_state argument";
  for (Operation *user : replicate->getUsers())
    if (!dpc::getGradOperand(user))
      return user->emitOpError()
             << "reads optimizer state argument " << argument.getArgNumber()
             << ", which is sharded: only optimizer updates may";
  int64_t count = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(replicate);
  Value flat = flatten(argument, count);
  SmallVector<Type> parts;
  for (int64_t size : sizes)
    parts.push_back(flatType(argument, size));
  auto scatter = b.create<dpc::dist::ScatterOp>(replicate.getLoc(), parts, flat,
                                                b.getDenseI64ArrayAttr(sizes));
  return SmallVector<Value>(scatter.getResults());
}

Value StepSharder::flatten(Value value, int64_t count) {
  if (value.getType() == flatType(value, count))
    return value;
  return b.create<ReshapeOp>(value.getLoc(), flatType(value, count), value,
                             b.getDenseI64ArrayAttr({count}));
}

Value StepSharder::takeRange(Value value, ArrayRef<int64_t> sizes, int64_t d) {
  int64_t count = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
  Value flat = flatten(value, count);
  if (Operation *reshape = flat.getDefiningOp(); reshape && flat != value)
    setReplica(reshape, d);
  SmallVector<Type> parts;
  for (int64_t size : sizes)
    parts.push_back(flatType(value, size));
  auto split =
      b.create<SplitOp>(value.getLoc(), parts, flat, b.getI64IntegerAttr(0),
                        b.getDenseI64ArrayAttr(sizes));
  setReplica(split, d);
  return split.getResult(d);
}

LogicalResult StepSharder::shardParameter(ParameterUpdates &group) {
  auto paramType = cast<RankedTensorType>(group.parameter.getInput().getType());
  SmallVector<int64_t> sizes =
      balancedSizes(paramType.getNumElements(), numReplicas);

  // The state arguments, scattered: parts[k][d] is replica d's range of
  // the update's k-th state.
  SmallVector<SmallVector<Value>> parts;
  SmallVector<Operation *> oldReplicates;
  for (auto [operand, result] : dpc::getStateOperands(group.updates.front())) {
    oldReplicates.push_back(operand->get().getDefiningOp());
    FailureOr<SmallVector<Value>> scattered =
        scatterState(operand->get(), sizes);
    if (failed(scattered))
      return failure();
    parts.push_back(*scattered);
  }

  SmallVector<Value> newRanges;
  Operation *last = nullptr;
  for (auto [d, update] : llvm::enumerate(group.updates)) {
    b.setInsertionPoint(update);
    OpOperand *param = dpc::getParamOperand(update);
    OpOperand *grad = dpc::getGradOperand(update);
    Value paramRange = takeRange(param->get(), sizes, d);
    Value gradRange = takeRange(grad->get(), sizes, d);
    Operation *ranged = b.clone(*update);
    ranged->setOperand(param->getOperandNumber(), paramRange);
    ranged->setOperand(grad->getOperandNumber(), gradRange);
    auto states = dpc::getStateOperands(update);
    for (auto [k, state] : llvm::enumerate(states))
      ranged->setOperand(state.first->getOperandNumber(), parts[k][d]);
    if (failed(inferResultTypes(cast<InferTypeOpInterface>(ranged))))
      return failure();
    newRanges.push_back(ranged->getResult(0)); // the new parameter
    for (auto [k, state] : llvm::enumerate(states))
      replacedResults[state.second] =
          ranged->getResult(state.second.getResultNumber());
    if (!last || last->isBeforeInBlock(ranged))
      last = ranged;
  }

  // Every replica's range of the new parameter, to every replica, once the
  // last replica has updated its range.
  b.setInsertionPointAfter(last);
  int64_t count = paramType.getNumElements();
  auto gather = b.create<dpc::dist::AllGatherOp>(
      last->getLoc(),
      SmallVector<Type>(numReplicas, flatType(newRanges.front(), count)),
      newRanges, IntegerAttr());
  for (auto [d, update] : llvm::enumerate(group.updates)) {
    Value whole = gather.getResult(d);
    if (whole.getType() != paramType) {
      auto reshape =
          b.create<ReshapeOp>(update->getLoc(), paramType, whole,
                              b.getDenseI64ArrayAttr(paramType.getShape()));
      setReplica(reshape, d);
      whole = reshape;
    }
    replacedResults[update->getResult(0)] = whole;
  }
  for (Operation *update : group.updates) {
    for (OpResult result : update->getResults())
      result.replaceAllUsesWith(replacedResults.lookup(result));
    update->erase();
  }
  for (Operation *replicate : oldReplicates)
    replicate->erase();
  return success();
}

LogicalResult StepSharder::run() {
  if (failed(collectUpdates()))
    return failure();
  for (auto &[replicate, group] : groups)
    if (failed(shardParameter(group)))
      return failure();
  // The state updates are now each replica's range: the result types follow.
  auto returnOp = cast<func::ReturnOp>(step.front().getTerminator());
  step.setType(
      b.getFunctionType(step.getArgumentTypes(), returnOp.getOperandTypes()));
  step->setAttr(DistDialect::kShardAttrName, b.getStringAttr("optimizer"));
  return success();
}

namespace {
struct ShardOptimizerStatePass
    : public dpc::impl::ShardOptimizerStateBase<ShardOptimizerStatePass> {
  using ShardOptimizerStateBase::ShardOptimizerStateBase;

  void runOnOperation() override {
    for (auto step : getOperation().getOps<func::FuncOp>()) {
      if (step.getSymName() != dpc::steps::kTrain)
        continue;
      auto devices =
          step->getAttrOfType<ArrayAttr>(DistDialect::kDevicesAttrName);
      if (!devices) {
        step.emitError() << "@train_step is not partitioned: run "
                            "dpc-partition-data-parallel first";
        return signalPassFailure();
      }
      if (step->hasAttr(DistDialect::kShardAttrName)) {
        step.emitError() << "@train_step is sharded already";
        return signalPassFailure();
      }
      // One device keeps the whole state: nothing to shard.
      if (devices.size() > 1 &&
          failed(StepSharder(step, devices.size(), stateless).run()))
        return signalPassFailure();
    }
  }
};
} // namespace
