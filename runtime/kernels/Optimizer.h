//===- Optimizer.h - In-place optimizer updates -----------------*- C++ -*-===//
//
// torch.optim.SGD and torch.optim.AdamW, element by element over a flat
// parameter buffer. `step` counts updates from 1, as PyTorch's state does;
// the caller keeps it (it is saved with the training state). The learning
// rate is a run-time argument so that schedules need no recompilation.
//
// Each update also says whether it wrote NaN or infinity (into the
// parameter or its state): the trainer's non-finite check then reads one
// flag instead of copying and scanning the whole training state, the test
// being a few vector instructions in a loop that is bound by memory.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_OPTIMIZER_H
#define DPC_RUNTIME_KERNELS_OPTIMIZER_H

#include "runtime/abi/shapes/OptimizerShapes.h"

#include <cstdint>
#include <stdexcept>

namespace dpc::kernels {

/// The hyper-parameters the plan gives (runtime/abi/shapes/OptimizerShapes.h).
using plan::AdamWParams;
using plan::SgdParams;

/// What torch.optim.SGD refuses; the CPU and CUDA updates both check it.
inline void checkSgdArguments(const SgdParams &p, int64_t step,
                              bool hasMomentumBuffer) {
  if (step < 1)
    throw std::invalid_argument("sgd: step counts from 1");
  if (p.momentum != 0.0 && !hasMomentumBuffer)
    throw std::invalid_argument("sgd: momentum needs a buffer");
  if (p.nesterov && (p.momentum <= 0.0 || p.dampening != 0.0))
    throw std::invalid_argument(
        "sgd: nesterov needs momentum and zero dampening");
}

/// At step 1 the momentum buffer is set to the gradient (PyTorch's
/// first-step rule); `momentumBuffer` may be null when momentum is 0.
/// Returns whether a value written is NaN or infinite.
bool sgdUpdate(int64_t size, const SgdParams &params, double lr, int64_t step,
               float *param, const float *grad, float *momentumBuffer);

/// Decoupled weight decay p *= 1 - lr*wd, then Adam with bias corrections
/// for step `step` and eps added outside the square root. expAvg and
/// expAvgSq start at zero. Returns whether a value written is NaN or
/// infinite.
bool adamwUpdate(int64_t size, const AdamWParams &params, double lr,
                 int64_t step, float *param, const float *grad, float *expAvg,
                 float *expAvgSq);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_OPTIMIZER_H
