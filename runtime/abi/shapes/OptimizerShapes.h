//===- OptimizerShapes.h - optimizer updates --------------------*- C++ -*-===//
//
// SgdUpdate (param, grad, lr[, momentum_buffer]) and AdamWUpdate (param,
// grad, exp_avg, exp_avg_sq, lr, step), in place over a flat parameter, and
// their hyper-parameters (SgdAttrs, AdamWAttrs; KernelAttrs.h decodes them).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_SHAPES_OPTIMIZERSHAPES_H
#define DPC_RUNTIME_ABI_SHAPES_OPTIMIZERSHAPES_H

#include "runtime/abi/shapes/ShapeTypes.h"

#include <cstdint>

namespace dpc::plan {

/// Hyper-parameters are doubles, like PyTorch's Python floats: scalars
/// derived from them (1 - beta, 1 - lr*wd) are computed in double and
/// rounded once, which keeps the float updates bit-close to torch's.
struct SgdParams {
  double momentum = 0.0;
  double dampening = 0.0;
  double weightDecay = 0.0;
  bool nesterov = false;
};

struct AdamWParams {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weightDecay = 1e-2;
};

/// Sgd/AdamW: the parameter's element count.
int64_t getOptimizerSize(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_OPTIMIZERSHAPES_H
