//===- Recompute.h - shared by the rematerialization pass ------*- C++ -*-===//
//
// The pieces of dpc-rematerialize (Rematerialize.cpp): where a training
// step's forward pass ends, rewriting it to recompute ops, the segment
// scheme, and the budget search (RematBudget.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_PASSES_RECOMPUTE_H
#define DPC_PASSES_RECOMPUTE_H

#include "passes/StepMemory.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <string>

namespace dpc::remat {

using OpSet = llvm::SetVector<mlir::Operation *>;

/// Where each replica's forward pass ends, and which ops may be recomputed.
class StepRegions {
public:
  explicit StepRegions(mlir::func::FuncOp step);

  int64_t numReplicas() const { return lossPosition.size(); }
  int64_t replicaOf(mlir::Operation *op) const {
    auto attr = op->getAttrOfType<mlir::IntegerAttr>("dist.replica");
    return attr ? attr.getInt() : 0;
  }
  int64_t positionOf(mlir::Operation *op) const { return position.lookup(op); }

  /// A forward nn op of a replica with a backward pass.
  bool isForward(mlir::Operation *op) const {
    if (!op || op->getBlock() != body ||
        op->getName().getDialectNamespace() != "nn")
      return false;
    int64_t loss = lossPosition[replicaOf(op)];
    return loss >= 0 && positionOf(op) < loss;
  }
  /// A forward op whose clone computes the same results: every nn forward
  /// op is pure, batch norm included once its running statistics are
  /// redirected (see applyRecomputation).
  bool isRecomputable(mlir::Operation *op) const;
  /// An op of the backward pass (or the optimizer) that reads forward
  /// values: an nn op after its replica's loss.
  bool isBackward(mlir::Operation *op) const {
    if (op->getName().getDialectNamespace() != "nn" || op->getBlock() != body)
      return false;
    int64_t loss = lossPosition[replicaOf(op)];
    return loss >= 0 && positionOf(op) > loss;
  }
  /// Whether the backward pass reads `value` (a forward value).
  bool isStashed(mlir::Value value) const {
    return llvm::any_of(value.getUsers(), [&](mlir::Operation *user) {
      return isBackward(user);
    });
  }

  /// The forward ops of replica `r`, in order.
  llvm::SmallVector<mlir::Operation *> forwardOps(int64_t r) const {
    llvm::SmallVector<mlir::Operation *> ops;
    for (mlir::Operation &op : *body)
      if (replicaOf(&op) == r && isForward(&op))
        ops.push_back(&op);
    return ops;
  }

private:
  mlir::Block *body;
  llvm::DenseMap<mlir::Operation *, int64_t> position;
  llvm::SmallVector<int64_t> lossPosition;
};

/// What to recompute, and whether intermediates are shared (see
/// applyRecomputation).
struct RecomputePlan {
  OpSet ops;
  bool shareIntermediates = false;
};

/// Rewrites `step` so that the backward ops read clones of the ops in
/// `recompute` instead of the originals, each cloned right before the first
/// backward op that reads it and reused by the later ones. A clone that
/// only feeds other clones is reused by later backward ops too if
/// `shareIntermediates` (segments: a run is recomputed once), else it is
/// used once and recomputed where needed again (budget: short-lived
/// intermediates, at the price of FLOPs).
void applyRecomputation(mlir::func::FuncOp step, const OpSet &recompute,
                        bool shareIntermediates);

/// segments=K: every forward value of the first K - 1 runs that does not
/// cross into a later run.
OpSet segmentRecomputeSet(const StepRegions &regions, int64_t segments);

/// budget=SIZE: the recomputation that makes every replica's planned peak
/// fit `budget` bytes (see RematBudget.cpp), or failure (diagnosed); with
/// `bestEffort`, where none fits, the one that reached the smallest peak.
mlir::FailureOr<RecomputePlan>
planForBudget(mlir::ModuleOp module, mlir::func::FuncOp step,
              const StepMemoryEstimator &estimateMemory, int64_t budget,
              bool bestEffort = false);

/// "1.50 GiB", "300.00 MiB", "19.53 KiB", "12 bytes".
std::string formatBytes(int64_t bytes);

} // namespace dpc::remat

#endif // DPC_PASSES_RECOMPUTE_H
