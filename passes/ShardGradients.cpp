//===- ShardGradients.cpp - ZeRO-2 on a step with sharded state -----------===//
//
// Gradient sharding (ZeRO stage 2) on the step dpc-shard-optimizer-state
// left: there, each replica d reads only range d of a sharded parameter's
// all-reduced gradient (flattened, then split by the state's ranges). An
// all-reduce whose replicas read nothing else is a reduce-scatter: replica
// d gets range d of the sum and nothing more, so the whole reduced
// gradient is never held, and a backend with a native reduce-scatter
// (NCCL) sends half the bytes of the all-reduce.
//
// The reduce-scatter sums each element over the replicas as the all-reduce
// did (the communicators' reduce-scatter is, by construction, the range of
// their all-reduce), so the step computes the same bits. Gradients read
// whole elsewhere (a parameter without optimizer state, or batch-norm
// statistics) stay all-reduced. dpc-shard-optimizer-state's `stateless`
// option cuts the updates of parameters without state too (plain SGD), so
// that their gradients are sharded as well.
//
//===----------------------------------------------------------------------===//

#include "ir/dist/DistOps.h"
#include "ir/nn/NNOps.h"
#include "ir/nn/StepNames.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace dpc {
#define GEN_PASS_DEF_SHARDGRADIENTS
#include "passes/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using dpc::dist::DistDialect;
using namespace dpc::nn;

namespace {

/// Replica `d`'s only read of all-reduced `result`: an nn.split (of the
/// value, or of its flattening) of which only result `d` is used. Null if
/// the replica reads anything else of it.
SplitOp getRangeRead(Value result, int64_t d) {
  auto inReplica = [&](Operation *op) {
    auto replica =
        op->getAttrOfType<IntegerAttr>(DistDialect::kReplicaAttrName);
    return replica && replica.getInt() == d;
  };
  if (!result.hasOneUse())
    return nullptr;
  Operation *user = *result.getUsers().begin();
  if (auto reshape = dyn_cast<ReshapeOp>(user)) {
    auto flat = cast<RankedTensorType>(reshape.getType());
    if (!inReplica(reshape) || flat.getRank() != 1 ||
        !reshape.getResult().hasOneUse())
      return nullptr;
    user = *reshape.getResult().getUsers().begin();
  }
  auto split = dyn_cast<SplitOp>(user);
  if (!split || !inReplica(split) || split.getAxis() != 0 ||
      cast<RankedTensorType>(split.getInput().getType()).getRank() != 1 ||
      d >= split.getNumResults())
    return nullptr;
  for (OpResult part : split->getResults())
    if (part.getResultNumber() != d && !part.use_empty())
      return nullptr;
  return split;
}

/// Replaces `allReduce` by a reduce-scatter when every replica reads only
/// its range of the result; returns whether it did.
bool shardGradient(dpc::dist::AllReduceOp allReduce) {
  int64_t replicas = allReduce.getNumResults();
  SmallVector<SplitOp> reads;
  for (auto [d, result] : llvm::enumerate(allReduce.getResults())) {
    SplitOp split = getRangeRead(result, d);
    if (!split || (!reads.empty() && split.getSizes() != reads[0].getSizes()))
      return false;
    reads.push_back(split);
  }
  if (int64_t(reads[0].getSizes().size()) != replicas)
    return false;

  OpBuilder b(allReduce);
  Type flat = reads[0].getInput().getType();
  SmallVector<Value> wholes;
  SmallVector<Type> parts;
  for (auto [d, gradient] : llvm::enumerate(allReduce.getInputs())) {
    Value whole = gradient;
    if (gradient.getType() != flat) {
      auto reshape = b.create<ReshapeOp>(
          allReduce.getLoc(), flat, gradient,
          b.getDenseI64ArrayAttr(cast<RankedTensorType>(flat).getShape()));
      reshape->setAttr(DistDialect::kReplicaAttrName, b.getI64IntegerAttr(d));
      whole = reshape;
    }
    wholes.push_back(whole);
    parts.push_back(reads[d].getResult(d).getType());
  }
  auto reduceScatter = b.create<dpc::dist::ReduceScatterOp>(
      allReduce.getLoc(), parts, wholes, allReduce.getReductionAttr(),
      b.getDenseI64ArrayAttr(reads[0].getSizes()), IntegerAttr());
  for (auto [d, split] : llvm::enumerate(reads)) {
    split.getResult(d).replaceAllUsesWith(reduceScatter.getResult(d));
    Operation *reshape = split.getInput().getDefiningOp<ReshapeOp>();
    split.erase();
    if (reshape && reshape->use_empty())
      reshape->erase();
  }
  allReduce.erase();
  return true;
}

struct ShardGradientsPass
    : public dpc::impl::ShardGradientsBase<ShardGradientsPass> {
  using ShardGradientsBase::ShardGradientsBase;

  void runOnOperation() override {
    for (auto step : getOperation().getOps<func::FuncOp>()) {
      if (step.getSymName() != dpc::steps::kTrain)
        continue;
      auto devices =
          step->getAttrOfType<ArrayAttr>(DistDialect::kDevicesAttrName);
      // One device keeps the whole gradient: nothing to shard.
      if (devices && devices.size() == 1)
        continue;
      auto stage = step->getAttrOfType<StringAttr>(DistDialect::kShardAttrName);
      if (!stage || stage.getValue() != "optimizer") {
        if (stage)
          step.emitError() << "@train_step's gradients are sharded already";
        else
          step.emitError() << "@train_step's optimizer state is not sharded: "
                              "run dpc-shard-optimizer-state first";
        return signalPassFailure();
      }
      SmallVector<dpc::dist::AllReduceOp> allReduces;
      step.walk([&](dpc::dist::AllReduceOp op) {
        if (!op->hasAttr(DistDialect::kStatisticsAttrName))
          allReduces.push_back(op);
      });
      for (dpc::dist::AllReduceOp op : allReduces)
        shardGradient(op);
      step->setAttr(DistDialect::kShardAttrName,
                    Builder(step).getStringAttr("gradients"));
    }
  }
};

} // namespace
