//===- LossShapes.h - the losses of nn.loss ---------------------*- C++ -*-===//
//
// LossForward, LossBackward, LossWeight and LossCorrectCount (Kernels.def)
// take one LossShape: which loss, its options (LossAttrs) and its extents.
// A cross-entropy's output is logits [outer, classes, inner] (the classes
// at LossAttrs.class_axis), its target I32 [outer, inner]; any other loss's
// output and target are `elements` floats, the weights (pos_weight) cycling
// with the last dim. A plain struct, passed by value to CUDA kernels too.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_SHAPES_LOSSSHAPES_H
#define DPC_RUNTIME_ABI_SHAPES_LOSSSHAPES_H

#include "runtime/abi/HostDevice.h"
#include "runtime/abi/shapes/ShapeTypes.h"

#include <cstdint>

namespace dpc::plan {

/// The most class weights (or pos_weight entries) a loss takes: they ride
/// in the shape, by value, into the kernels.
inline constexpr int32_t kMaxLossWeights = 512;

/// Plan.fbs's LossKind, for code without the schema.
enum class LossCode : int32_t {
  CrossEntropy = 0,
  Mse,
  L1,
  Huber,
  SmoothL1,
  BceWithLogits
};

struct LossShape {
  LossCode kind = LossCode::CrossEntropy;
  bool hasIgnoreIndex = false;
  int64_t ignoreIndex = 0;
  float labelSmoothing = 0;
  float delta = 1;
  /// Cross-entropy: logits [outer, classes, inner]. Otherwise `elements`
  /// floats whose last dim is `lastDim`.
  int64_t outer = 0, classes = 0, inner = 0;
  int64_t elements = 0, lastDim = 1;
  /// The mean's divisor without a Divisor operand: the global batch times
  /// the targets per sample.
  double countDivisor = 1;
  int32_t numWeights = 0;
  float weights[kMaxLossWeights];

  DPC_HOST_DEVICE bool isCrossEntropy() const {
    return kind == LossCode::CrossEntropy;
  }
  /// Targets (cross-entropy: class positions) in the local rows.
  DPC_HOST_DEVICE int64_t targets() const {
    return isCrossEntropy() ? outer * inner : elements;
  }
};

/// Checks every tensor of a Loss* call against its LossAttrs; throws
/// ShapeError.
LossShape getLossShape(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_LOSSSHAPES_H
