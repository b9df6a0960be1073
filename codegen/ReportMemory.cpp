//===- ReportMemory.cpp - what a step's arena holds at its peak -----------===//
//
// Records on every exec step, at the position where the most arena bytes
// are alive: the activation and gradient bytes alive there, and the ten
// largest buffers alive there by what they hold. What each buffer holds is
// the lowering's record on its exec.arena (MemoryReport.h), which this pass
// removes; a buffer without one (added after the lowering) counts as
// workspace.
//
//===----------------------------------------------------------------------===//

#include "codegen/BufferLiveness.h"
#include "codegen/MemoryReport.h"
#include "codegen/Passes.h"
#include "ir/exec/ExecOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace dpc {
#define GEN_PASS_DEF_REPORTEXECMEMORY
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;

namespace {

/// The most buffers the report lists: they say where the memory goes.
constexpr size_t kLargestListed = 10;

void reportMemory(ex::StepOp step) {
  Builder builder(step.getContext());
  std::vector<ArenaLifetime> lifetimes = getArenaLifetimes(step);
  int64_t peakPosition = getLivePeak(lifetimes).first;
  int64_t activations = 0, gradients = 0, parameters = 0;
  SmallVector<std::pair<int64_t, DictionaryAttr>> live;
  for (const ArenaLifetime &lifetime : lifetimes) {
    if (!lifetime.liveAt(peakPosition))
      continue;
    auto kind = lifetime.op->getAttrOfType<StringAttr>(kArenaKindAttrName);
    auto holds = lifetime.op->getAttrOfType<StringAttr>(kArenaHoldsAttrName);
    StringRef kindName = kind ? kind.getValue() : "workspace";
    if (kindName == "activation")
      activations += lifetime.bytes;
    else if (kindName == "gradient")
      gradients += lifetime.bytes;
    else if (kindName == "parameter")
      parameters += lifetime.bytes;
    live.push_back(
        {lifetime.bytes,
         builder.getDictionaryAttr(
             {builder.getNamedAttr("name", holds ? holds
                                                 : builder.getStringAttr(
                                                       "a kernel's workspace")),
              builder.getNamedAttr("kind", builder.getStringAttr(kindName)),
              builder.getNamedAttr(
                  "bytes", builder.getI64IntegerAttr(lifetime.bytes))})});
  }
  llvm::stable_sort(live, [](auto &a, auto &b) { return a.first > b.first; });
  if (live.size() > kLargestListed)
    live.resize(kLargestListed);
  SmallVector<Attribute> liveAttrs;
  for (auto &[bytes, dict] : live)
    liveAttrs.push_back(dict);
  step.setActivationBytes(activations);
  step.setGradientBytes(gradients);
  if (parameters)
    step.setGatheredParameterBytes(parameters);
  step.setLiveAtPeakAttr(builder.getArrayAttr(liveAttrs));
  for (const ArenaLifetime &lifetime : lifetimes) {
    lifetime.op->removeAttr(kArenaKindAttrName);
    lifetime.op->removeAttr(kArenaHoldsAttrName);
  }
}

struct ReportExecMemoryPass
    : public dpc::impl::ReportExecMemoryBase<ReportExecMemoryPass> {
  void runOnOperation() override {
    for (auto step : getOperation().getOps<ex::StepOp>())
      reportMemory(step);
  }
};

} // namespace
