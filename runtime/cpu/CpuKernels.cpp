//===- CpuKernels.cpp - a KernelCall on the CPU kernel library ------------===//
//
// The CPU backend's kernel table and its dispatch. The table's functions
// live in one file per op family (CpuKernelEntries.h lists them).
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/CpuKernels.h"
#include "runtime/abi/KernelDispatch.h"
#include "runtime/cpu/CpuKernelEntries.h"

#include <cstring>
#include <memory>

namespace dpc::rt {

using plan::KernelCall;
using namespace dpc::kernels;

namespace {

/// A replica on 0 rows (see KernelCall.h): zeros for every non-empty
/// result. oneDNN rejects zero dims, so no kernel runs.
void zeroNonEmptyResults(KernelContext &, const KernelCall &call) {
  for (const plan::TensorArg &result : call.results)
    if (result.present && result.getNumElements() > 0)
      std::memset(result.data, 0, result.getNumBytes());
}

const plan::KernelTable<KernelContext> kCpuKernels = {"the CPU",
                                                      {
#define DPC_KERNEL(Name, ...) cpu::run##Name,
#define DPC_INPUT_ACTIVATION(Name)                                             \
  cpu::runInputActivationForward, cpu::runInputActivationBackward,
#include "runtime/abi/Kernels.def"
                                                      },
                                                      &zeroNonEmptyResults,
                                                      /*blockedLayouts=*/true};

} // namespace

const plan::KernelTable<KernelContext> &getCpuKernelTable() {
  return kCpuKernels;
}

namespace {
/// The CPU's KernelState: the instruction's bound oneDNN primitives.
struct CpuKernelState : plan::KernelState {
  CallSite site;
};

/// Points `context` at the call's site for the duration of one call.
class CallSiteScope {
public:
  CallSiteScope(KernelContext &context, const KernelCall &call)
      : context(context) {
    if (!call.state)
      return;
    if (!*call.state)
      *call.state = std::make_unique<CpuKernelState>();
    context.setCallSite(&static_cast<CpuKernelState &>(**call.state).site);
  }
  ~CallSiteScope() { context.setCallSite(nullptr); }

private:
  KernelContext &context;
};
} // namespace

void runCpuKernel(KernelContext &context, const KernelCall &call) {
  CallSiteScope site(context, call);
  plan::dispatchKernel(kCpuKernels, context, call);
}

} // namespace dpc::rt
