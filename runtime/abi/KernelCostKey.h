//===- KernelCostKey.h - what a kernel call's time depends on ---*- C++ -*-===//
//
// The key of a kernel call in a measured cost table (`dpc calibrate
// --kernels` writes one, `dpc compile --precision auto --costs` reads it):
// the kernel, the dims of its operands and results with the batch as `?`,
// and a convolution's geometry -- everything its time depends on but the
// batch and the machine. The runtime computes it from a plan, the compiler
// from an exec.kernel op; both through this one function, so they agree:
//
//   Conv2dForward(?x1x28x28, 6x1x5x5, 6) -> (?x6x28x28) stride 1x1
//       padding 2,2,2,2 dilation 1x1 groups 1
//
// A forward fused with its ReLU (Conv2dReluForward, LinearReluForward) has
// the unfused kernel's key: the post-op costs the same in f32 and bf16, and
// a layer fused in one step (training) but not in another (evaluation,
// where the planner may have shared the ReLU's bytes) gets one choice.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_KERNELCOSTKEY_H
#define DPC_RUNTIME_ABI_KERNELCOSTKEY_H

#include "runtime/plan/Plan_generated.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::plan {

/// `operands` and `results` hold each present tensor's dims, -1 for the
/// batch; `conv` is the convolution's attributes (null for other kernels).
std::string getKernelCostKey(Kernel kernel,
                             const std::vector<std::vector<int64_t>> &operands,
                             const std::vector<std::vector<int64_t>> &results,
                             const Conv2dAttrsT *conv);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_KERNELCOSTKEY_H
