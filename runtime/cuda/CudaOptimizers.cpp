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

void runSgdUpdate(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::SgdUpdate;
  sgdUpdate(ctx.getStream(), plan::getOptimizerSize(call),
            plan::getSgdParams(call), in(call, Lr), call.optimizerStep,
            in(call, Param), in(call, Grad), in(call, MomentumBuffer));
}

void runAdamWUpdate(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AdamWUpdate;
  adamwUpdate(ctx.getStream(), plan::getOptimizerSize(call),
              plan::getAdamWParams(call), in(call, Lr),
              call.operand(Step).as<int64_t>(), in(call, Param), in(call, Grad),
              in(call, ExpAvg), in(call, ExpAvgSq));
}

} // namespace dpc::cuda::entries
