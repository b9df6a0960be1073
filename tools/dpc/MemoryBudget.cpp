//===- MemoryBudget.cpp - dpc compile --memory-budget ---------------------===//
//
// The sharding stage under a per-device memory budget: the plan of each
// stage, from the least sharded (the least communication: replicated, then
// optimizer state, then gradients too), is compiled and its planned peaks
// read as `dpc inspect` reads them; the first whose every device fits is
// written, and one line says why (the peaks of the stages that did not
// fit). When none fits, one line names the smallest peak reachable and
// what dominates it. --remat and --bucket-mb apply to every candidate (a
// remat budget one cannot reach stops the search with the remat pass's
// error); rematerialization itself is not searched yet.
//
//===----------------------------------------------------------------------===//

#include "tools/dpc/MemoryBudget.h"
#include "runtime/plan/ByteSize.h"
#include "tools/Registration.h"
#include "tools/dpc/CompileCommand.h"
#include "tools/dpc/CompileFlags.h"
#include "tools/dpc/Inspect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace dpc::cli {

namespace {

const char *getStageName(ShardStage stage) {
  switch (stage) {
  case ShardStage::None:
    return "none";
  case ShardStage::Optimizer:
    return "optimizer";
  case ShardStage::Gradients:
    return "gradients";
  }
  return "?";
}

/// One budget per device from --memory-budget, or an error.
FailureOr<std::vector<int64_t>> parseBudgets(size_t numDevices) {
  SmallVector<StringRef> sizes;
  StringRef(memoryBudget).split(sizes, ',');
  std::vector<int64_t> budgets;
  for (StringRef size : sizes) {
    std::optional<int64_t> bytes = plan::parseByteSize(size.trim().str());
    if (!bytes || *bytes <= 0) {
      reportError(modelPath, "--memory-budget: '" + size +
                                 "' is not a size (e.g. 2GiB, 512MiB)");
      return failure();
    }
    budgets.push_back(*bytes);
  }
  if (budgets.size() == 1)
    budgets.assign(numDevices, budgets.front());
  if (budgets.size() != numDevices) {
    reportError(modelPath, "--memory-budget lists " + Twine(sizes.size()) +
                               " sizes for " + Twine(numDevices) +
                               " devices: give one, or one per device");
    return failure();
  }
  return budgets;
}

/// The device of `peaks` furthest over (or nearest to) its budget.
const DevicePeak &getTightest(const std::vector<DevicePeak> &peaks,
                              const std::vector<int64_t> &budgets) {
  size_t tightest = 0;
  for (size_t d = 1; d < peaks.size(); ++d)
    if (double(peaks[d].bytes) / budgets[d] >
        double(peaks[tightest].bytes) / budgets[tightest])
      tightest = d;
  return peaks[tightest];
}

} // namespace

FailureOr<PipelineOptions> chooseUnderBudget(const PipelineOptions &flags) {
  FailureOr<SmallVector<std::string>> devices = parseDevices();
  if (failed(devices))
    return failure();
  FailureOr<std::vector<int64_t>> budgets = parseBudgets(devices->size());
  if (failed(budgets))
    return failure();
  SmallVector<ShardStage> stages = {ShardStage::None, ShardStage::Optimizer,
                                    ShardStage::Gradients};
  if (shard.getNumOccurrences())
    stages = {flags.shard};

  std::string tried;
  llvm::raw_string_ostream triedStream(tried);
  std::optional<std::pair<PipelineOptions, DevicePeak>> smallest;
  for (ShardStage stage : stages) {
    PipelineOptions candidate = flags;
    candidate.shard = stage;
    DialectRegistry registry;
    registerAllDialects(registry);
    MLIRContext context(registry);
    OwningOpRef<ModuleOp> module = compileModel(context, candidate);
    if (!module)
      return failure();
    FailureOr<std::vector<uint8_t>> plan = buildPlan(*module, candidate.batch);
    if (failed(plan))
      return failure();
    std::vector<DevicePeak> peaks = getDevicePeaks(*plan);
    if (peaks.size() != budgets->size()) {
      reportError(modelPath, "--memory-budget: the plan of --shard " +
                                 Twine(getStageName(stage)) +
                                 " does not load (a compiler bug)");
      return failure();
    }
    const DevicePeak &tightest = getTightest(peaks, *budgets);
    size_t d = &tightest - peaks.data();
    bool fits = llvm::all_of(llvm::seq<size_t>(0, peaks.size()), [&](size_t i) {
      return peaks[i].bytes <= (*budgets)[i];
    });
    if (fits) {
      llvm::errs() << "dpc: memory budget " << formatBytes((*budgets)[d])
                   << (StringRef(memoryBudget).contains(',')
                           ? " on " + tightest.device
                           : std::string(" per device"))
                   << ": --shard " << getStageName(stage) << ", "
                   << llvm::format("%g", candidate.getBucketMb())
                   << " MiB buckets: peak " << formatBytes(tightest.bytes)
                   << " (" << tightest.device << ")";
      if (!tried.empty())
        llvm::errs() << "; over it: " << tried;
      llvm::errs() << "\n";
      return candidate;
    }
    triedStream << (tried.empty() ? "" : ", ") << getStageName(stage) << " "
                << formatBytes(tightest.bytes);
    if (!smallest || tightest.bytes < smallest->second.bytes)
      smallest = {candidate, tightest};
  }
  const DevicePeak &best = smallest->second;
  reportError(modelPath,
              "--memory-budget " + Twine(memoryBudget) +
                  ": nothing fits; the smallest peak reachable is " +
                  formatBytes(best.bytes) + " on " + best.device +
                  " (--shard " + getStageName(smallest->first.shard) +
                  "), most of it " + best.largestKind + " (" +
                  formatBytes(best.largestBytes) + ")" +
                  (flags.remat.segments == 0 && flags.remat.budget.empty()
                       ? " (rematerialization is not searched: try --remat "
                         "segments=K)"
                       : ""));
  return failure();
}

} // namespace dpc::cli
