//===- ShardParameters.cpp - ZeRO-3 on a step with sharded gradients ------===//
//
// Parameter sharding (ZeRO stage 3, torch's FullyShardedDataParallel) on
// the steps dpc-shard-gradients left. There, replica d already updates only
// range d of each parameter, from its range of the reduce-scattered
// gradient, and an all-gather after the update gives every replica the
// whole new parameter back. Here the parameters stay sharded between steps:
//
//  - each parameter argument is flattened and `dist.scatter`ed into the
//    ranges of its update instead of replicated: replica d keeps range d
//    as its persistent tensor, updates it in place and returns it;
//  - the all-gather moves from after the update to before the uses: one
//    before the forward pass's first use and one again before the backward
//    pass's, so the whole parameter lives only while a pass reads it and
//    the arena reuses its bytes in between. Each is issued one layer
//    ahead: the gathers of the k-th parameters the pass reads (grouped by
//    the op that reads them first, one bucket each) go just before the
//    (k-1)-th group's first use, so the communication stream fetches the
//    next layer while the compute stream runs this one.
//
// Every partitioned step that reads the parameters is rewritten so:
// @train_step, the accumulation steps of --grad-accum and @eval_step
// (whose one pass gathers once). The forward and backward passes compute
// on the same whole parameters as before, and the updates are ZeRO-2's:
// the step computes the same bits.
//
//===----------------------------------------------------------------------===//

#include "ir/dist/DistOps.h"
#include "ir/nn/NNOps.h"
#include "ir/nn/StepNames.h"
#include "passes/Passes.h"
#include "passes/RematSupport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

#include <numeric>

namespace dpc {
#define GEN_PASS_DEF_SHARDPARAMETERS
#include "passes/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using dpc::dist::DistDialect;
using namespace dpc::nn;

namespace {

/// The parameters @train_step updates by ranges: each one's range sizes,
/// by the parameter's name.
using ShardedParameters = llvm::StringMap<SmallVector<int64_t>>;

int64_t getReplica(Operation *op) {
  auto attr = op->getAttrOfType<IntegerAttr>(DistDialect::kReplicaAttrName);
  return attr ? attr.getInt() : -1;
}

StringAttr getParamName(func::FuncOp step, BlockArgument arg) {
  return step.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                           NNDialect::kParamAttrName);
}

/// The dist.replicate of a parameter argument; null if none distributes it.
dpc::dist::ReplicateOp getReplicate(BlockArgument arg) {
  for (Operation *user : arg.getUsers())
    if (auto replicate = dyn_cast<dpc::dist::ReplicateOp>(user))
      return replicate;
  return nullptr;
}

/// Replica `d`'s read of range `d` of `copy` (its copy of a parameter) for
/// its update: the nn.split, of the copy or of its flattening, that
/// dpc-shard-optimizer-state made. Null if `use` is another kind of read.
SplitOp getUpdateRangeRead(OpOperand &use, int64_t d) {
  Operation *user = use.getOwner();
  if (auto reshape = dyn_cast<ReshapeOp>(user)) {
    if (getReplica(reshape) != d || !reshape.getResult().hasOneUse() ||
        cast<RankedTensorType>(reshape.getType()).getRank() != 1)
      return nullptr;
    user = *reshape.getResult().getUsers().begin();
  }
  auto split = dyn_cast<SplitOp>(user);
  if (!split || getReplica(split) != d || split.getAxis() != 0 ||
      cast<RankedTensorType>(split.getInput().getType()).getRank() != 1)
    return nullptr;
  for (OpResult part : split->getResults())
    if (part.getResultNumber() != d && !part.use_empty())
      return nullptr;
  return split;
}

/// What @train_step returns as a parameter's update: the parameter (null
/// if the result is none), the all-gather of its updated ranges that the
/// value comes from, reshaped or not (null if it is updated whole), and
/// the gather's result it is (the replica's).
struct ReturnedUpdate {
  StringAttr name;
  dpc::dist::AllGatherOp gather;
  unsigned replica = 0;
};

ReturnedUpdate getReturnedUpdate(func::FuncOp train, OpOperand &operand) {
  ReturnedUpdate update;
  update.name = train.getResultAttrOfType<StringAttr>(
      operand.getOperandNumber(), NNDialect::kParamUpdateAttrName);
  Value whole = operand.get();
  if (auto reshape = whole.getDefiningOp<ReshapeOp>())
    whole = reshape.getInput();
  if (update.name)
    update.gather = whole.getDefiningOp<dpc::dist::AllGatherOp>();
  if (update.gather)
    update.replica = cast<OpResult>(whole).getResultNumber();
  return update;
}

/// One all-gather of a parameter for one pass, and the ops it serves.
struct PlannedGather {
  /// The parameter argument.
  BlockArgument arg;
  /// The replicas' reads of the parameter in this pass.
  SmallVector<OpOperand *> uses;
  /// The earliest of them: the gather's group.
  Operation *firstUse = nullptr;
};

/// Rewrites one partitioned step; see the file comment.
class StepRewriter {
public:
  StepRewriter(func::FuncOp step, const ShardedParameters &sharded)
      : step(step), sharded(sharded), b(step.getContext()) {
    int64_t index = 0;
    for (Operation &op : step.getBody().front())
      position[&op] = index++;
  }

  LogicalResult run();

private:
  /// Scatters parameter argument `arg` and plans the gathers of its reads.
  LogicalResult shardArgument(BlockArgument arg, ArrayRef<int64_t> sizes);
  /// Returns each replica's new range of a parameter, not the whole.
  LogicalResult returnRanges();
  /// Creates the planned gathers, a group ahead of their first uses.
  void placeGathers(SmallVector<PlannedGather *> pass);

  func::FuncOp step;
  const ShardedParameters &sharded;
  OpBuilder b;
  DenseMap<Operation *, int64_t> position;
  /// Per parameter argument, its scattered ranges and its planned gathers
  /// (forward, backward).
  struct Sharded {
    dpc::dist::ScatterOp scatter;
    RankedTensorType type;
    PlannedGather passes[2];
  };
  llvm::MapVector<BlockArgument, Sharded> arguments;
  SmallVector<Operation *> replicates;
  int64_t nextBucket = 0;
};

} // namespace

LogicalResult StepRewriter::shardArgument(BlockArgument arg,
                                          ArrayRef<int64_t> sizes) {
  dpc::dist::ReplicateOp replicate = getReplicate(arg);
  if (!replicate)
    return success(); // no replica reads it
  auto type = cast<RankedTensorType>(arg.getType());
  int64_t count = type.getNumElements();
  if (int64_t(sizes.size()) != replicate.getNumResults() ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != count)
    return replicate.emitError()
           << "parameter '" << getParamName(step, arg).getValue() << "' has "
           << count << " elements in @" << step.getSymName()
           << ": @train_step's ranges do not cut it";

  b.setInsertionPoint(replicate);
  auto flatType = [&](int64_t n) {
    return RankedTensorType::get({n}, type.getElementType());
  };
  Value flat = arg;
  if (type.getRank() != 1)
    flat = b.create<ReshapeOp>(replicate.getLoc(), flatType(count), arg,
                               b.getDenseI64ArrayAttr({count}));
  SmallVector<Type> parts;
  for (int64_t size : sizes)
    parts.push_back(flatType(size));
  Sharded &entry = arguments[arg];
  entry.type = type;
  entry.scatter = b.create<dpc::dist::ScatterOp>(
      replicate.getLoc(), parts, flat, b.getDenseI64ArrayAttr(sizes));

  // Where each replica's forward pass ends: reads after it are the
  // backward pass's (none in @eval_step).
  SmallVector<int64_t> lossAt;
  for (int64_t d = 0; d < replicate.getNumResults(); ++d) {
    Operation *loss = dpc::findLossOp(step, d);
    lossAt.push_back(loss ? position.lookup(loss) : INT64_MAX);
  }
  for (auto [d, copy] : llvm::enumerate(replicate.getResults())) {
    for (OpOperand &use : llvm::make_early_inc_range(copy.getUses())) {
      if (SplitOp split = getUpdateRangeRead(use, d)) {
        // The update reads the range this replica now keeps.
        Operation *reshape = split.getInput().getDefiningOp<ReshapeOp>();
        split.getResult(d).replaceAllUsesWith(entry.scatter.getResult(d));
        split.erase();
        if (reshape)
          reshape->erase();
        continue;
      }
      Operation *user = use.getOwner();
      if (getReplica(user) != int64_t(d))
        return user->emitOpError()
               << "reads replica " << d << "'s copy of parameter '"
               << getParamName(step, arg).getValue()
               << "' outside that replica: cannot shard it";
      int64_t at = position.lookup(user);
      PlannedGather &gather = entry.passes[at > lossAt[d] ? 1 : 0];
      gather.arg = arg;
      gather.uses.push_back(&use);
      if (!gather.firstUse || at < position.lookup(gather.firstUse))
        gather.firstUse = user;
    }
  }
  // Erased once its reads are moved to the gathers (placeGathers).
  replicates.push_back(replicate);
  return success();
}

void StepRewriter::placeGathers(SmallVector<PlannedGather *> pass) {
  llvm::erase_if(pass, [](PlannedGather *g) { return g->uses.empty(); });
  llvm::stable_sort(pass, [&](PlannedGather *x, PlannedGather *y) {
    return position.lookup(x->firstUse) < position.lookup(y->firstUse);
  });
  // Groups: the gathers whose first use is the same op, in use order.
  SmallVector<Operation *> groupUses;
  for (PlannedGather *gather : pass)
    if (groupUses.empty() || groupUses.back() != gather->firstUse)
      groupUses.push_back(gather->firstUse);
  int64_t firstBucket = nextBucket;
  nextBucket += groupUses.size();

  for (PlannedGather *gather : pass) {
    Sharded &entry = arguments[gather->arg];
    size_t group = llvm::find(groupUses, gather->firstUse) - groupUses.begin();
    // One group ahead: issued before the previous group's first use.
    b.setInsertionPoint(groupUses[group == 0 ? 0 : group - 1]);
    int64_t count = entry.type.getNumElements();
    auto flat = RankedTensorType::get({count}, entry.type.getElementType());
    int64_t replicas = entry.scatter.getNumResults();
    // Named by the parameter: the memory report lists it so.
    Location loc =
        NameLoc::get(getParamName(step, gather->arg), gather->arg.getLoc());
    auto allGather = b.create<dpc::dist::AllGatherOp>(
        loc, SmallVector<Type>(replicas, flat), entry.scatter.getResults(),
        b.getI64IntegerAttr(firstBucket + int64_t(group)));
    SmallVector<Value> wholes(allGather.getResults());
    for (int64_t d = 0; d < replicas && entry.type.getRank() != 1; ++d) {
      auto reshape =
          b.create<ReshapeOp>(loc, entry.type, wholes[d],
                              b.getDenseI64ArrayAttr(entry.type.getShape()));
      reshape->setAttr(DistDialect::kReplicaAttrName, b.getI64IntegerAttr(d));
      wholes[d] = reshape;
    }
    for (OpOperand *use : gather->uses)
      use->set(wholes[getReplica(use->getOwner())]);
  }
}

LogicalResult StepRewriter::returnRanges() {
  auto returnOp = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  SmallVector<Operation *> gathers;
  for (OpOperand &operand : returnOp->getOpOperands()) {
    auto [name, gather, d] = getReturnedUpdate(step, operand);
    if (!name || !sharded.count(name.getValue()))
      continue;
    if (!gather)
      return returnOp.emitOpError()
             << "returns parameter '" << name.getValue()
             << "' not from the all-gather of its updated ranges";
    // Replica d's whole is the gather's result d; its range, operand d.
    operand.set(gather.getOperand(d));
    if (!llvm::is_contained(gathers, gather.getOperation()))
      gathers.push_back(gather);
  }
  for (Operation *gather : gathers) {
    for (Operation *user : llvm::make_early_inc_range(gather->getUsers()))
      if (isa<ReshapeOp>(user) && user->use_empty())
        user->erase();
    if (!gather->use_empty())
      return gather->emitOpError()
             << "gathers an updated parameter that the step still reads";
    gather->erase();
  }
  step.setType(
      b.getFunctionType(step.getArgumentTypes(), returnOp.getOperandTypes()));
  return success();
}

LogicalResult StepRewriter::run() {
  if (step.getSymName() == dpc::steps::kTrain && failed(returnRanges()))
    return failure();
  for (BlockArgument arg : step.getArguments()) {
    StringAttr name = getParamName(step, arg);
    auto it = name ? sharded.find(name.getValue()) : sharded.end();
    if (it != sharded.end() && failed(shardArgument(arg, it->second)))
      return failure();
  }
  for (int pass : {0, 1}) {
    SmallVector<PlannedGather *> gathers;
    for (auto &[arg, entry] : arguments)
      gathers.push_back(&entry.passes[pass]);
    placeGathers(gathers);
  }
  for (Operation *replicate : replicates)
    replicate->erase();
  step->setAttr(DistDialect::kShardAttrName, b.getStringAttr("parameters"));
  return success();
}

namespace {

/// The parameters @train_step updates by ranges, and their ranges: those
/// whose returned update is the all-gather of the ranges.
ShardedParameters findShardedParameters(func::FuncOp train) {
  ShardedParameters sharded;
  auto returnOp = cast<func::ReturnOp>(train.getBody().front().getTerminator());
  for (OpOperand &operand : returnOp->getOpOperands()) {
    ReturnedUpdate update = getReturnedUpdate(train, operand);
    if (!update.gather)
      continue; // not a parameter, or updated whole: stays replicated
    SmallVector<int64_t> sizes;
    for (Value range : update.gather.getInputs())
      sizes.push_back(cast<RankedTensorType>(range.getType()).getNumElements());
    sharded[update.name.getValue()] = sizes;
  }
  return sharded;
}

struct ShardParametersPass
    : public dpc::impl::ShardParametersBase<ShardParametersPass> {
  using ShardParametersBase::ShardParametersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto train = module.lookupSymbol<func::FuncOp>(dpc::steps::kTrain);
    if (!train)
      return;
    auto devices =
        train->getAttrOfType<ArrayAttr>(DistDialect::kDevicesAttrName);
    // One device keeps the whole parameters: nothing to shard.
    if (devices && devices.size() == 1)
      return;
    auto stage = train->getAttrOfType<StringAttr>(DistDialect::kShardAttrName);
    if (!stage || stage.getValue() != "gradients") {
      if (stage && stage.getValue() == "parameters")
        train.emitError() << "@train_step's parameters are sharded already";
      else
        train.emitError() << "@train_step's gradients are not sharded: run "
                             "dpc-shard-gradients first";
      return signalPassFailure();
    }
    ShardedParameters sharded = findShardedParameters(train);
    for (StringRef name : dpc::steps::kDeviceSteps) {
      auto step = module.lookupSymbol<func::FuncOp>(name);
      if (step && step->hasAttr(DistDialect::kDevicesAttrName) &&
          failed(StepRewriter(step, sharded).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
