//===- TrainLoss.h - the loss a training step minimizes ---------*- C++ -*-===//
//
// The loss chosen at compile time (--loss and its options) as the nn ops
// that compute it: the target each kind takes, the loss itself (with the
// weight of its valid targets where the mean divides by that), and the
// count of correct predictions where the loss is over classes.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_PASSES_TRAINLOSS_H
#define DPC_PASSES_TRAINLOSS_H

#include "ir/nn/NNOps.h"

#include "mlir/IR/Builders.h"

#include <optional>
#include <string>

namespace dpc {

/// The pass options that choose the loss, as the user gave them.
struct LossOptions {
  std::string loss = "cross-entropy";
  int64_t classAxis = 1; // -1: the last dim
  std::optional<int64_t> ignoreIndex;
  double labelSmoothing = 0;
  llvm::SmallVector<double> classWeights, posWeight;
  double delta = 1.0;
};

class TrainLoss {
public:
  /// The loss of `options` over `output` (the forward's first result), or
  /// a diagnostic at `loc` saying why it cannot be.
  static mlir::FailureOr<TrainLoss> get(mlir::Location loc,
                                        mlir::RankedTensorType output,
                                        const LossOptions &options);

  /// The type of the targets a step takes: integer classes for a
  /// cross-entropy, the output's own type otherwise.
  mlir::RankedTensorType getTargetType() const;
  /// The 0-d loss of `output` against `target`.
  mlir::Value build(mlir::OpBuilder &b, mlir::Location loc, mlir::Value output,
                    mlir::Value target) const;
  /// The count of targets predicted right, or null where the loss has no
  /// classes.
  mlir::Value buildCorrectCount(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Value output, mlir::Value target) const;

private:
  mlir::RankedTensorType output;
  nn::LossKind kind;
  llvm::SmallVector<mlir::NamedAttribute> attrs;
  std::optional<int64_t> ignoreIndex;
  int64_t classAxis = 1;
  bool needsDivisor = false;
};

} // namespace dpc

#endif // DPC_PASSES_TRAINLOSS_H
