//===- PartitionDataParallel.cpp - one replica of a step per device -------===//
//
// What torch's DistributedDataParallel does at run time, done on the IR: the
// batch is scattered, the state replicated, the body runs once per device,
// and parameter gradients are summed with an all-reduce placed right after
// the last replica computes them, so that communication can overlap the rest
// of the backward pass. Replicas are cloned op by op, interleaved, which is
// what lets one all-reduce follow the gradient of every replica.
//
// Batch norm stays per replica by default: its statistics are those of the
// replica's own rows, like DDP without SyncBatchNorm. With sync-bn, like
// SyncBatchNorm, each replica computes per-channel sums of its rows, an
// all-reduce makes them global, and every replica normalizes (and, in the
// backward pass, differentiates) with the global batch's statistics, so
// that N devices compute what one computes on the global batch.
//
//===----------------------------------------------------------------------===//

#include "ir/dist/DistOps.h"
#include "ir/nn/NNOps.h"
#include "ir/nn/StepNames.h"
#include "passes/OptimizerUpdates.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringSet.h"

namespace dpc {
#define GEN_PASS_DEF_PARTITIONDATAPARALLEL
#include "passes/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using dpc::dist::DistDialect;
using namespace dpc::nn;

namespace {

/// The devices and each one's share of the batch.
struct Partition {
  SmallVector<Attribute> devices;
  SmallVector<int64_t> split;
  int64_t batch = 0;
};

/// Data arguments (dim 0 is the batch) are split; the rest is replicated.
bool isBatchMajor(func::FuncOp step, unsigned index) {
  return step.getArgAttr(index, NNDialect::kInputAttrName) ||
         step.getArgAttr(index, NNDialect::kLabelsAttrName);
}

RankedTensorType withBatch(RankedTensorType type, int64_t batch) {
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = batch;
  return type.clone(shape);
}

/// The static batch of `step`: dim 0 of its batch-major arguments.
FailureOr<int64_t> readBatch(func::FuncOp step) {
  std::optional<int64_t> batch;
  for (BlockArgument arg : step.getArguments()) {
    if (!isBatchMajor(step, arg.getArgNumber()))
      continue;
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0)
      return step.emitError() << "argument " << arg.getArgNumber() << " of @"
                              << step.getSymName() << " has no batch dim";
    if (type.isDynamicDim(0))
      return step.emitError()
             << "@" << step.getSymName() << " has a dynamic batch (argument "
             << arg.getArgNumber() << ": " << type
             << "); fix it with nn-set-batch before partitioning";
    if (batch && *batch != type.getDimSize(0))
      return step.emitError() << "the batch-major arguments of @"
                              << step.getSymName() << " disagree on the batch";
    batch = type.getDimSize(0);
  }
  if (!batch)
    return step.emitError() << "@" << step.getSymName()
                            << " has no batch-major argument to split";
  if (*batch == 0)
    return step.emitError()
           << "@" << step.getSymName() << " has a batch of 0: nothing to split";
  return *batch;
}

/// Names the step's devices and their batch shares, which codegen and the
/// plan carry to the runtime.
void recordDevices(func::FuncOp step, const Partition &partition) {
  Builder b(step.getContext());
  step->setAttr(DistDialect::kDevicesAttrName,
                b.getArrayAttr(partition.devices));
  step->setAttr(DistDialect::kSplitAttrName,
                b.getDenseI64ArrayAttr(partition.split));
}

/// Rewrites one step in place; see the pass description.
class StepPartitioner {
public:
  StepPartitioner(func::FuncOp step, const Partition &partition, bool syncBn)
      : step(step), partition(partition), syncBn(syncBn), b(step.getContext()),
        replicas(partition.split.size()) {}

  LogicalResult run();

private:
  size_t numReplicas() const { return replicas.size(); }
  LogicalResult distributeArguments();
  LogicalResult cloneReplicas(ArrayRef<Operation *> ops);
  LogicalResult finishResults(func::ReturnOp oldReturn);
  void allReduce(Value grad);
  /// Sums each of `perReplica[i]` (one value per replica) over the replicas
  /// with its own all-reduce; returns the results, indexed like it.
  SmallVector<SmallVector<Value>>
  allReduceStatistics(Location loc, ArrayRef<SmallVector<Value>> perReplica);
  /// Every replica's batch norm, with statistics synchronized over all.
  void syncBatchNorm(BatchNormTrainOp op);
  LogicalResult allReduceLossWeight(LossWeightOp op);
  void syncBatchNormGrad(BatchNormGradOp op);
  /// Marks `op` as replica `d`'s.
  void setReplica(Operation *op, int64_t d) {
    op->setAttr(DistDialect::kReplicaAttrName, b.getI64IntegerAttr(d));
  }

  func::FuncOp step;
  const Partition &partition;
  bool syncBn;
  OpBuilder b;
  /// Original value -> its counterpart in replica d.
  SmallVector<IRMapping> replicas;
  /// Original parameter gradients, and their all-reduced values per replica.
  DenseSet<Value> grads;
  DenseMap<Value, SmallVector<Value>> reduced;
};

} // namespace

LogicalResult StepPartitioner::distributeArguments() {
  Block &body = step.front();
  b.setInsertionPointToStart(&body);
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return step.emitError() << "argument " << arg.getArgNumber()
                              << " is not a ranked tensor: " << arg.getType();
    Operation *op;
    if (isBatchMajor(step, arg.getArgNumber())) {
      SmallVector<Type> parts;
      for (int64_t size : partition.split)
        parts.push_back(withBatch(type, size));
      op = b.create<dpc::dist::ScatterOp>(
          arg.getLoc(), parts, arg, b.getDenseI64ArrayAttr(partition.split));
    } else {
      op = b.create<dpc::dist::ReplicateOp>(
          arg.getLoc(), SmallVector<Type>(numReplicas(), type), arg);
    }
    for (auto [mapping, part] : llvm::zip(replicas, op->getResults()))
      mapping.map(arg, part);
  }
  return success();
}

void StepPartitioner::allReduce(Value grad) {
  if (reduced.contains(grad))
    return;
  SmallVector<Value> parts;
  for (IRMapping &mapping : replicas)
    parts.push_back(mapping.lookup(grad));
  auto op = b.create<dpc::dist::AllReduceOp>(
      grad.getLoc(), ValueRange(parts).getTypes(), parts,
      b.getStringAttr("sum"), IntegerAttr());
  reduced[grad] = SmallVector<Value>(op.getResults());
}

SmallVector<SmallVector<Value>>
StepPartitioner::allReduceStatistics(Location loc,
                                     ArrayRef<SmallVector<Value>> perReplica) {
  SmallVector<SmallVector<Value>> global;
  for (const SmallVector<Value> &parts : perReplica) {
    auto op = b.create<dpc::dist::AllReduceOp>(
        loc, ValueRange(parts).getTypes(), parts, b.getStringAttr("sum"),
        IntegerAttr());
    op->setAttr(DistDialect::kStatisticsAttrName, b.getUnitAttr());
    global.emplace_back(op.getResults());
  }
  return global;
}

void StepPartitioner::syncBatchNorm(BatchNormTrainOp op) {
  SmallVector<SmallVector<Value>> local(3);
  for (auto [d, mapping] : llvm::enumerate(replicas)) {
    auto stats =
        b.create<BatchNormStatsOp>(op.getLoc(), mapping.lookup(op.getInput()));
    setReplica(stats, d);
    for (auto [i, result] : llvm::enumerate(stats->getResults()))
      local[i].push_back(result);
  }
  SmallVector<SmallVector<Value>> global =
      allReduceStatistics(op.getLoc(), local);
  for (auto [d, mapping] : llvm::enumerate(replicas)) {
    auto apply = b.create<BatchNormApplyOp>(
        op.getLoc(), mapping.lookup(op.getInput()),
        mapping.lookup(op.getScale()), mapping.lookup(op.getShift()),
        mapping.lookup(op.getRunningMean()), mapping.lookup(op.getRunningVar()),
        global[0][d], global[1][d], global[2][d], op.getEpsilonAttr(),
        op.getMomentumAttr());
    setReplica(apply, d);
    mapping.map(op->getResults(), apply->getResults());
  }
}

/// The weight of the valid targets is the global batch's: each replica
/// weighs its own targets, and every replica's loss divides by the sum, so
/// that the replicas' losses add up to PyTorch's mean over the batch
/// however the ignored targets fall.
LogicalResult StepPartitioner::allReduceLossWeight(LossWeightOp op) {
  SmallVector<SmallVector<Value>> local(1);
  for (auto [d, mapping] : llvm::enumerate(replicas)) {
    auto clone = cast<LossWeightOp>(b.clone(*op, mapping));
    setReplica(clone, d);
    if (failed(inferResultTypes(clone)))
      return failure();
    local[0].push_back(clone.getResult());
  }
  SmallVector<SmallVector<Value>> global =
      allReduceStatistics(op.getLoc(), local);
  for (auto [d, mapping] : llvm::enumerate(replicas))
    mapping.map(op.getResult(), global[0][d]);
  return success();
}

void StepPartitioner::syncBatchNormGrad(BatchNormGradOp op) {
  // The count is that of the forward batch norm's statistics.
  auto forward = op.getBatchMean().getDefiningOp<BatchNormTrainOp>();
  SmallVector<SmallVector<Value>> local(2);
  for (auto [d, mapping] : llvm::enumerate(replicas)) {
    auto stats = b.create<BatchNormGradStatsOp>(
        op.getLoc(), mapping.lookup(op.getResultGrad()),
        mapping.lookup(op.getInput()), mapping.lookup(op.getBatchMean()),
        mapping.lookup(op.getBatchInvstd()));
    setReplica(stats, d);
    local[0].push_back(stats.getSumDy());
    local[1].push_back(stats.getSumDyXhat());
    // The replica's own sums are its parameter gradients: the gradient
    // all-reduce sums them, so they must not be the global ones.
    mapping.map(op.getScaleGrad(), stats.getSumDyXhat());
    mapping.map(op.getShiftGrad(), stats.getSumDy());
  }
  SmallVector<SmallVector<Value>> global =
      allReduceStatistics(op.getLoc(), local);
  for (auto [d, mapping] : llvm::enumerate(replicas)) {
    auto apply = mapping.lookup(forward.getBatchMean())
                     .getDefiningOp<BatchNormApplyOp>();
    auto gradApply = b.create<BatchNormGradApplyOp>(
        op.getLoc(), mapping.lookup(op.getResultGrad()),
        mapping.lookup(op.getInput()), mapping.lookup(op.getScale()),
        mapping.lookup(op.getBatchMean()), mapping.lookup(op.getBatchInvstd()),
        global[0][d], global[1][d], apply.getCount());
    setReplica(gradApply, d);
    mapping.map(op.getInputGrad(), gradApply.getInputGrad());
  }
}

LogicalResult StepPartitioner::cloneReplicas(ArrayRef<Operation *> ops) {
  // Gradients that are arguments are complete from the start.
  for (BlockArgument arg : step.getArguments())
    if (grads.contains(arg))
      allReduce(arg);
  for (Operation *op : ops) {
    if (auto weight = dyn_cast<LossWeightOp>(op)) {
      if (failed(allReduceLossWeight(weight)))
        return failure();
      continue;
    }
    if (auto bn = dyn_cast<BatchNormTrainOp>(op); bn && syncBn) {
      syncBatchNorm(bn);
      continue;
    }
    if (auto grad = dyn_cast<BatchNormGradOp>(op); grad && syncBn) {
      if (!grad.getBatchMean().getDefiningOp<BatchNormTrainOp>())
        return grad.emitOpError()
               << "cannot be synchronized: its statistics do not come from "
                  "an nn.batch_norm_train";
      syncBatchNormGrad(grad);
      for (Value result : op->getResults())
        if (grads.contains(result))
          allReduce(result);
      continue;
    }
    for (auto [d, mapping] : llvm::enumerate(replicas)) {
      Operation *clone = b.clone(*op, mapping);
      clone->setAttr(DistDialect::kReplicaAttrName, b.getI64IntegerAttr(d));
      // No reweighting of the loss: in a replica, nn.loss and its
      // gradient average over the global batch (see the dist dialect), so
      // the replicas' losses and gradients sum to the global mean for any
      // split, including the run-time split of a short last batch.
      if (OpOperand *grad = dpc::getGradOperand(clone))
        grad->set(reduced.lookup(dpc::getGradOperand(op)->get())[d]);
      if (auto inferable = dyn_cast<InferTypeOpInterface>(clone)) {
        if (failed(inferResultTypes(inferable)))
          return failure();
      } else if (clone->getOperandTypes() != op->getOperandTypes()) {
        return clone->emitOpError()
               << "cannot infer its result types for a batch of "
               << partition.split[d];
      }
    }
    for (Value result : op->getResults())
      if (grads.contains(result))
        allReduce(result);
  }
  return success();
}

LogicalResult StepPartitioner::finishResults(func::ReturnOp oldReturn) {
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (auto [i, value] : llvm::enumerate(oldReturn.getOperands())) {
    DictionaryAttr attrs = step.getResultAttrDict(i);
    auto output = attrs ? attrs.getAs<StringAttr>(NNDialect::kOutputAttrName)
                        : StringAttr();
    if (!output) {
      // State updates: each replica's, for the runtime to write back.
      for (auto [d, mapping] : llvm::enumerate(replicas)) {
        NamedAttrList named(attrs);
        named.set(DistDialect::kReplicaAttrName, b.getI64IntegerAttr(d));
        results.push_back(mapping.lookup(value));
        resultAttrs.push_back(named.getDictionary(step.getContext()));
      }
      continue;
    }
    SmallVector<Value> parts;
    for (auto [d, mapping] : llvm::enumerate(replicas)) {
      Value part = mapping.lookup(value);
      auto type = cast<RankedTensorType>(part.getType());
      if (type.getRank() > 0 && type.getDimSize(0) != partition.split[d])
        return step.emitError()
               << "output '" << output.getValue()
               << "' is neither a scalar nor batch-major, so it cannot be "
                  "gathered";
      parts.push_back(part);
    }
    auto first = cast<RankedTensorType>(parts.front().getType());
    RankedTensorType type =
        first.getRank() == 0
            ? RankedTensorType::get({static_cast<int64_t>(numReplicas())},
                                    first.getElementType())
            : withBatch(first, partition.batch);
    results.push_back(
        b.create<dpc::dist::GatherOp>(step.getLoc(), type, parts));
    resultAttrs.push_back(attrs);
  }
  b.create<func::ReturnOp>(oldReturn.getLoc(), results);
  step.setType(b.getFunctionType(step.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  step.setAllResultAttrs(resultAttrs);
  return success();
}

LogicalResult StepPartitioner::run() {
  if (!step.getBody().hasOneBlock())
    return step.emitError()
           << "@" << step.getSymName() << " must have a body of one block";
  Block &body = step.front();
  auto oldReturn = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator()) {
    ops.push_back(&op);
    if (OpOperand *grad = dpc::getGradOperand(&op))
      grads.insert(grad->get());
  }

  if (failed(distributeArguments()))
    return failure();
  b.setInsertionPoint(oldReturn);
  if (failed(cloneReplicas(ops)) || failed(finishResults(oldReturn)))
    return failure();
  oldReturn.erase();
  for (Operation *op : llvm::reverse(ops))
    op->erase();

  recordDevices(step, partition);
  return success();
}

namespace {
struct PartitionDataParallelPass
    : public dpc::impl::PartitionDataParallelBase<PartitionDataParallelPass> {
  using PartitionDataParallelBase::PartitionDataParallelBase;

  void runOnOperation() override;

private:
  LogicalResult readDevices(ModuleOp module, Partition &partition);
  LogicalResult resolveSplit(func::FuncOp step, Partition &partition);
};
} // namespace

LogicalResult PartitionDataParallelPass::readDevices(ModuleOp module,
                                                     Partition &partition) {
  SmallVector<StringRef> names;
  StringRef(devices).split(names, ',');
  llvm::StringSet<> seen;
  for (StringRef name : names) {
    name = name.trim();
    if (!dpc::dist::isDeviceName(name))
      return module.emitError()
             << "bad device '" << name << "': expected cpu:K or cuda:K";
    if (!seen.insert(name).second)
      return module.emitError() << "device '" << name << "' is listed twice";
    partition.devices.push_back(StringAttr::get(&getContext(), name));
  }
  return success();
}

/// The explicit split, checked against the batch, or torch.chunk's: ceil(B /
/// N) per device, the last ones smaller (or empty).
LogicalResult PartitionDataParallelPass::resolveSplit(func::FuncOp step,
                                                      Partition &partition) {
  size_t n = partition.devices.size();
  int64_t batch = partition.batch;
  if (split.empty()) {
    int64_t chunk = (batch + n - 1) / n, left = batch;
    for (size_t d = 0; d < n; ++d) {
      partition.split.push_back(std::min(chunk, left));
      left -= partition.split.back();
    }
    return success();
  }
  if (split.size() != n)
    return step.emitError()
           << "split has " << split.size() << " sizes for " << n << " devices";
  int64_t total = 0;
  for (int64_t size : split) {
    if (size < 0)
      return step.emitError() << "split size " << size << " is negative";
    total += size;
  }
  if (total != batch)
    return step.emitError() << "split sums to " << total << ", but the batch"
                            << " of @" << step.getSymName() << " is " << batch;
  partition.split.assign(split.begin(), split.end());
  return success();
}

void PartitionDataParallelPass::runOnOperation() {
  ModuleOp module = getOperation();
  Partition devicesOnly;
  if (failed(readDevices(module, devicesOnly)))
    return signalPassFailure();
  SmallVector<func::FuncOp> steps;
  for (StringRef name : dpc::steps::kDeviceSteps)
    if (auto step = module.lookupSymbol<func::FuncOp>(name))
      steps.push_back(step);
  if (steps.empty()) {
    module.emitError() << "no @train_step or @eval_step to partition; run "
                          "nn-build-train-step first";
    return signalPassFailure();
  }
  for (func::FuncOp step : steps) {
    if (step.isExternal()) {
      step.emitError() << "@" << step.getSymName() << " has no body";
      return signalPassFailure();
    }
    Partition partition = devicesOnly;
    FailureOr<int64_t> batch = readBatch(step);
    if (failed(batch))
      return signalPassFailure();
    partition.batch = *batch;
    if (failed(resolveSplit(step, partition)))
      return signalPassFailure();
    if (partition.devices.size() == 1) {
      // Nothing to split, but the plan must run where it was asked to.
      recordDevices(step, partition);
      continue;
    }
    if (failed(StepPartitioner(step, partition, syncBn).run()))
      return signalPassFailure();
  }
}
