//===- Loss.h - the losses of nn.loss on the CPU ----------------*- C++ -*-===//
//
// Loops over a LossShape's targets (LossMath.h has the formulas). Targets
// are I32 classes for a cross-entropy, floats of the output's shape
// otherwise. Sums run serially, in target order, so that a loss does not
// depend on the thread count.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_LOSS_H
#define DPC_RUNTIME_KERNELS_LOSS_H

#include "runtime/abi/shapes/LossShapes.h"

#include <cstdint>

namespace dpc::kernels {

/// Throws std::runtime_error naming the first class target outside
/// [0, classes) that is not the ignore index.
void checkClassTargets(const plan::LossShape &s, const int32_t *targets);

/// The sum over the targets of their losses.
double lossSum(const plan::LossShape &s, const float *output,
               const void *target);

/// dOutput = d(sum of the losses)/d(output) * scale.
void lossGradient(const plan::LossShape &s, const float *output,
                  const void *target, double scale, float *dOutput);

/// The sum of the weights of a cross-entropy's valid targets.
double lossWeight(const plan::LossShape &s, const int32_t *targets);

/// The valid targets that are the first argmax of their logits.
int64_t lossCorrectCount(const plan::LossShape &s, const float *logits,
                         const int32_t *targets);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_LOSS_H
