//===- Recompute.cpp - rewriting a step to recompute forward ops ---------===//

#include "passes/Recompute.h"
#include "ir/nn/NNOps.h"
#include "passes/RematSupport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

using namespace mlir;
using namespace dpc;
using namespace dpc::remat;

StepRegions::StepRegions(func::FuncOp step) : body(&step.getBody().front()) {
  int64_t index = 0;
  for (Operation &op : *body)
    position[&op] = index++;
  int64_t replicas = 1;
  if (auto devices = step->getAttrOfType<ArrayAttr>("dist.devices"))
    replicas = devices.size();
  for (int64_t r = 0; r < replicas; ++r) {
    Operation *loss = findLossOp(step, r);
    lossPosition.push_back(loss ? position[loss] : -1);
  }
}

bool StepRegions::isRecomputable(Operation *op) const {
  return isForward(op) && op->getNumResults() > 0 && !isa<nn::LossOp>(op);
}

std::string dpc::remat::formatBytes(int64_t bytes) {
  if (bytes >= (int64_t(1) << 30))
    return llvm::formatv("{0:F2} GiB", bytes / 1073741824.0).str();
  if (bytes >= (int64_t(1) << 20))
    return llvm::formatv("{0:F2} MiB", bytes / 1048576.0).str();
  if (bytes >= 1024)
    return llvm::formatv("{0:F2} KiB", bytes / 1024.0).str();
  return llvm::formatv("{0} bytes", bytes).str();
}

/// Rewrites `step` so that the backward ops read clones of the ops in
/// `recompute` instead of the originals, each cloned right before the first
/// backward op that reads it and reused by the later ones. A clone that
/// only feeds other clones is reused by later backward ops too if
/// `shareIntermediates` (segments: a run is recomputed once), else it is
/// used once and recomputed where needed again (budget: short-lived
/// intermediates, at the price of FLOPs).
void dpc::remat::applyRecomputation(func::FuncOp step, const OpSet &recompute,
                                    bool shareIntermediates) {
  StepRegions regions(step);
  OpBuilder b(step.getContext());
  // Clones the backward ops read, and clones that feed only other clones
  // (forgotten after each backward op unless shared).
  DenseMap<Value, Value> recomputed, intermediates;
  std::function<Value(Value, Operation *, bool)> materialize =
      [&](Value value, Operation *before, bool direct) -> Value {
    if (Value done = recomputed.lookup(value))
      return done;
    if (Value done = intermediates.lookup(value)) {
      if (direct)
        recomputed[value] = done;
      return done;
    }
    Operation *def = value.getDefiningOp();
    if (!def || !recompute.contains(def))
      return value;
    IRMapping mapping;
    for (Value operand : def->getOperands())
      mapping.map(operand, materialize(operand, before, /*direct=*/false));
    b.setInsertionPoint(before);
    // A recomputed batch norm must not update the running statistics a
    // second time: it writes them to scratch zeros instead.
    auto scratch = [&](Value stat) {
      Operation *zeros = b.create<nn::ConstantOp>(
          def->getLoc(), stat.getType(),
          cast<ElementsAttr>(b.getZeroAttr(stat.getType())));
      zeros->setAttr(kRematAttrName, b.getUnitAttr());
      mapping.map(stat, zeros->getResult(0));
    };
    if (auto bn = dyn_cast<nn::BatchNormTrainOp>(def)) {
      scratch(bn.getRunningMean());
      scratch(bn.getRunningVar());
    } else if (auto bn = dyn_cast<nn::BatchNormApplyOp>(def)) {
      scratch(bn.getRunningMean());
      scratch(bn.getRunningVar());
    }
    Operation *clone = b.clone(*def, mapping);
    clone->setAttr(kRematAttrName, b.getUnitAttr());
    for (auto [original, copy] :
         llvm::zip_equal(def->getResults(), clone->getResults()))
      (direct ? recomputed : intermediates)[original] = copy;
    return clone->getResult(cast<OpResult>(value).getResultNumber());
  };

  SmallVector<Operation *> backward;
  for (Operation &op : step.getBody().front())
    if (regions.isBackward(&op))
      backward.push_back(&op);
  for (Operation *op : backward) {
    for (OpOperand &operand : op->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if (def && recompute.contains(def))
        operand.set(materialize(operand.get(), op, /*direct=*/true));
    }
    if (!shareIntermediates)
      intermediates.clear();
  }
}

/// segments=K: every forward value of the first K - 1 runs that does not
/// cross into a later run.
OpSet dpc::remat::segmentRecomputeSet(const StepRegions &regions,
                                      int64_t segments) {
  OpSet recompute;
  for (int64_t r = 0; r < regions.numReplicas(); ++r) {
    SmallVector<Operation *> ops = regions.forwardOps(r);
    int64_t n = ops.size();
    if (n == 0)
      continue;
    DenseMap<Operation *, int64_t> segmentOf;
    for (auto [i, op] : llvm::enumerate(ops))
      segmentOf[op] = int64_t(i) * segments / n;
    // A value crossing into a later run (or into anything that is not a
    // forward op of this replica, such as a collective) is kept.
    auto crosses = [&](Operation *op) {
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers()) {
          // The step's results (running statistics) stay the original's.
          if (regions.isBackward(user) || isa<func::ReturnOp>(user))
            continue;
          auto it = segmentOf.find(user);
          if (it == segmentOf.end() || it->second != segmentOf[op])
            return true;
        }
      return false;
    };
    for (Operation *op : ops)
      if (segmentOf[op] < segments - 1 && regions.isRecomputable(op) &&
          !crosses(op))
        recompute.insert(op);
  }
  return recompute;
}
