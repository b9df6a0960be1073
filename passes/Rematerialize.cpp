//===- Rematerialize.cpp - recompute activations to save memory ----------===//
//
// Gradient checkpointing as a compile-time decision: which forward values
// the backward pass recomputes (Recompute.cpp), chosen by segments or to fit
// a memory budget (RematBudget.cpp). See the pass description in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ir/exec/ExecDialect.h"
#include "ir/nn/NNOps.h"
#include "ir/nn/StepNames.h"
#include "passes/Passes.h"
#include "passes/Recompute.h"
#include "runtime/plan/ByteSize.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdlib>
#include <unistd.h>

namespace dpc {
#define GEN_PASS_DEF_REMATERIALIZE
#include "passes/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
using namespace dpc::remat;

namespace {

/// auto: DPC_DEVICE_MEMORY if set, else 75% of physical memory, shared by
/// the CPU devices.
FailureOr<int64_t> autoBudget(func::FuncOp step) {
  int64_t devices = 1;
  if (auto list = step->getAttrOfType<ArrayAttr>("dist.devices")) {
    devices = list.size();
    for (Attribute device : list)
      if (!cast<StringAttr>(device).getValue().starts_with("cpu:") &&
          !std::getenv("DPC_DEVICE_MEMORY"))
        return step.emitError()
               << "--remat=auto: the memory of " << device
               << " is not known at compile time; give budget=SIZE (or set "
                  "DPC_DEVICE_MEMORY)";
  }
  if (const char *fake = std::getenv("DPC_DEVICE_MEMORY")) {
    if (std::optional<int64_t> bytes = plan::parseByteSize(fake))
      return *bytes;
    return step.emitError() << "DPC_DEVICE_MEMORY: '" << fake
                            << "' is not a size (e.g. 1.5GiB, 300MiB)";
  }
  int64_t physical =
      int64_t(sysconf(_SC_PHYS_PAGES)) * int64_t(sysconf(_SC_PAGESIZE));
  return int64_t(0.75 * double(physical)) / devices;
}

struct RematerializePass
    : public dpc::impl::RematerializeBase<RematerializePass> {
  using RematerializeBase::RematerializeBase;
  RematerializePass(const RematerializeOptions &options,
                    StepMemoryEstimator estimateMemory)
      : RematerializeBase(options), estimateMemory(std::move(estimateMemory)) {}

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (segments != 0 && !budget.empty()) {
      module.emitError() << "dpc-rematerialize: give segments or budget, "
                            "not both";
      return signalPassFailure();
    }
    if (segments < 0 || segments == 1) {
      module.emitError() << "dpc-rematerialize: segments must be > 1, got "
                         << int64_t(segments);
      return signalPassFailure();
    }
    if (segments == 0 && budget.empty())
      return;
    // Every step with a backward pass: with gradient accumulation the
    // micro-batch steps share the device's arena with @train_step, so each
    // must fit.
    for (StringRef name : dpc::steps::kTrainingSteps)
      if (auto step = module.lookupSymbol<func::FuncOp>(name))
        if (failed(rematerialize(module, step)))
          return signalPassFailure();
  }

  LogicalResult rematerialize(ModuleOp module, func::FuncOp step) {
    if (segments > 0) {
      applyRecomputation(step, segmentRecomputeSet(StepRegions(step), segments),
                         /*shareIntermediates=*/true);
      return success();
    }
    FailureOr<int64_t> bytes = failure();
    if (budget == "auto") {
      bytes = autoBudget(step);
    } else if (std::optional<int64_t> parsed = plan::parseByteSize(budget)) {
      bytes = *parsed;
    } else {
      module.emitError() << "dpc-rematerialize: budget '" << budget
                         << "' is not a size (e.g. 1.5GiB, 300MiB) or auto";
    }
    if (failed(bytes))
      return failure();
    if (!estimateMemory)
      return module.emitError()
             << "dpc-rematerialize: budget=SIZE measures memory with the "
                "back end's arena plan, which this pipeline did not provide";
    FailureOr<RecomputePlan> plan =
        planForBudget(module, step, estimateMemory, *bytes, bestEffort);
    if (failed(plan))
      return failure();
    applyRecomputation(step, plan->ops, plan->shareIntermediates);
    return success();
  }

  StepMemoryEstimator estimateMemory;
};

} // namespace

std::unique_ptr<Pass>
dpc::createRematerialize(const RematerializeOptions &options,
                         StepMemoryEstimator estimateMemory) {
  return std::make_unique<RematerializePass>(options,
                                             std::move(estimateMemory));
}
