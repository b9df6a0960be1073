//===- CpuOptimizers.cpp - optimizer updates on the CPU -------------------===//
//
// SGD and AdamW, updating parameters and their state in place.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cpu/CpuKernelEntries.h"
#include "runtime/kernels/Optimizer.h"

namespace dpc::rt::cpu {

using namespace dpc::kernels;

namespace {
/// An update that wrote NaN or infinity says so where the call asks.
void reportNonFinite(const KernelCall &call, bool nonFinite) {
  if (nonFinite && call.nonFinite)
    call.nonFinite->store(1, std::memory_order_relaxed);
}
} // namespace

void runSgdUpdate(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::SgdUpdate;
  // SGD has no step operand: its first-step rule (buffer = grad) uses the
  // executor's count.
  reportNonFinite(call, sgdUpdate(plan::getOptimizerSize(call),
                                  plan::getSgdParams(call), *in(call, Lr),
                                  call.optimizerStep, in(call, Param),
                                  in(call, Grad), in(call, MomentumBuffer)));
}

void runAdamWUpdate(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::AdamWUpdate;
  reportNonFinite(call, adamwUpdate(plan::getOptimizerSize(call),
                                    plan::getAdamWParams(call), *in(call, Lr),
                                    *call.operand(Step).as<int64_t>(),
                                    in(call, Param), in(call, Grad),
                                    in(call, ExpAvg), in(call, ExpAvgSq)));
}

} // namespace dpc::rt::cpu
