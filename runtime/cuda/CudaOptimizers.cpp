//===- CudaOptimizers.cpp - optimizer updates on a CUDA stream ------------===//
//
// SGD and AdamW, updating parameters and their state in place (own
// kernels).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/CudaKernelEntries.h"

namespace dpc::cuda::entries {

namespace {
/// The call's non-finite flag as the kernels write it: the executor places
/// it in page-locked host memory (Device::allocateHost), which kernels
/// address directly.
unsigned *nonFiniteFlag(const KernelCall &call) {
  static_assert(sizeof(*call.nonFinite) == sizeof(unsigned),
                "the flag is written as a plain 32-bit word on the GPU");
  return reinterpret_cast<unsigned *>(call.nonFinite);
}
} // namespace

void runSgdUpdate(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::SgdUpdate;
  sgdUpdate(ctx.getStream(), plan::getOptimizerSize(call),
            plan::getSgdParams(call), in(call, Lr), call.optimizerStep,
            in(call, Param), in(call, Grad), in(call, MomentumBuffer),
            nonFiniteFlag(call));
}

void runAdamWUpdate(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AdamWUpdate;
  adamwUpdate(ctx.getStream(), plan::getOptimizerSize(call),
              plan::getAdamWParams(call), in(call, Lr),
              call.operand(Step).as<int64_t>(), in(call, Param), in(call, Grad),
              in(call, ExpAvg), in(call, ExpAvgSq), nonFiniteFlag(call));
}

} // namespace dpc::cuda::entries
