//===- MemoryBudget.cpp - dpc compile --memory-budget ---------------------===//
//
// The sharding stage under a per-device memory budget: the plan of each
// stage, from the least sharded (the least communication: replicated, then
// optimizer state, then gradients too, then parameters too), is compiled and
// its planned peaks read as `dpc inspect` reads them; the first whose every
// device fits is written, and one line says why (the peaks of the stages that
// did not fit). When none fits, one line names the smallest peak reachable and
// what dominates it. Without --remat, each stage is then tried again with
// recomputation to the budget (dpc-rematerialize's budget mode), after all
// the stages without it: recomputation costs compute, sharding costs
// communication, and neither is timed yet. A recomputation that cannot
// reach the budget still plans the smallest peak it reaches, which the
// line compares with the others. --remat and --bucket-mb, when
// given, apply to every candidate.
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

#include <algorithm>

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
  case ShardStage::Parameters:
    return "parameters";
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

int compileUnderBudget(const PipelineOptions &flags, WriteCompiled write) {
  FailureOr<SmallVector<std::string>> devices = parseDevices();
  if (failed(devices))
    return 1;
  FailureOr<std::vector<int64_t>> budgets = parseBudgets(devices->size());
  if (failed(budgets))
    return 1;
  SmallVector<ShardStage> stages = {ShardStage::None, ShardStage::Optimizer,
                                    ShardStage::Gradients,
                                    ShardStage::Parameters};
  if (shard.getNumOccurrences())
    stages = {flags.shard};
  // The stages as the flags say, then, unless --remat was given, each with
  // recomputation to the tightest budget (slower steps: tried last).
  std::vector<PipelineOptions> candidates;
  for (ShardStage stage : stages) {
    candidates.push_back(flags);
    candidates.back().shard = stage;
  }
  bool searchesRemat = flags.remat.segments == 0 && flags.remat.budget.empty();
  if (searchesRemat)
    for (ShardStage stage : stages) {
      candidates.push_back(flags);
      candidates.back().shard = stage;
      candidates.back().remat.budget =
          StringRef(memoryBudget).contains(',')
              ? std::to_string(
                    *std::min_element(budgets->begin(), budgets->end()))
              : memoryBudget.getValue();
      // Where it cannot reach the budget, the smallest peak it reaches:
      // the line below compares it.
      candidates.back().remat.bestEffort = true;
    }

  std::string tried;
  llvm::raw_string_ostream triedStream(tried);
  std::optional<std::pair<PipelineOptions, DevicePeak>> smallest;
  for (const PipelineOptions &candidate : candidates) {
    // A recomputation that cannot reach the budget fails its compilation:
    // quietly, it is a trial.
    bool trial = !candidate.remat.budget.empty() && searchesRemat;
    std::string name = std::string(getStageName(candidate.shard)) +
                       (trial ? " with remat" : "");
    DialectRegistry registry;
    registerAllDialects(registry);
    MLIRContext context(registry);
    OwningOpRef<ModuleOp> module = compileModel(context, candidate, trial);
    if (!module && trial) {
      triedStream << (tried.empty() ? "" : ", ") << name << " out of reach";
      continue;
    }
    if (!module)
      return 1;
    FailureOr<std::vector<uint8_t>> plan = buildPlan(*module, candidate.batch);
    if (failed(plan))
      return 1;
    std::vector<DevicePeak> peaks = getDevicePeaks(*plan);
    if (peaks.size() != budgets->size()) {
      reportError(modelPath, "--memory-budget: the plan of --shard " + name +
                                 " does not load (a compiler bug)");
      return 1;
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
                   << ": --shard " << getStageName(candidate.shard) << ", "
                   << llvm::format("%g", candidate.getBucketMb())
                   << " MiB buckets"
                   << (trial ? ", --remat budget=" + candidate.remat.budget
                             : std::string())
                   << ": peak " << formatBytes(tightest.bytes) << " ("
                   << tightest.device << ")";
      if (!tried.empty())
        llvm::errs() << "; over it: " << tried;
      llvm::errs() << "\n";
      return write(*module, candidate, &*plan);
    }
    triedStream << (tried.empty() ? "" : ", ") << name << " "
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
                  (smallest->first.remat.budget.empty() ? "" : ", remat") +
                  "), most of it " + best.largestKind + " (" +
                  formatBytes(best.largestBytes) + ")");
  return 1;
}

} // namespace dpc::cli
