//===- RematBudget.cpp - what to recompute to fit a memory budget --------===//
//
// Every candidate is measured with the estimator the pass was given -- in
// dpc and dpc-opt, the lowering's own arena plan (codegen/StepMemory.h) --
// on a trial copy of the step, so the budget is met by the plan that runs,
// not by a second estimate.
//
//===----------------------------------------------------------------------===//

#include "ir/nn/NNOps.h"
#include "ir/nn/StepNames.h"
#include "passes/Recompute.h"
#include "passes/RematSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>

using namespace mlir;
using namespace dpc;
using namespace dpc::remat;

namespace {

/// The elements of `arg` one device holds: all of them, or where sharding
/// scatters it (flattened first: dpc-shard-optimizer-state) the largest
/// part.
int64_t elementsHeld(BlockArgument arg) {
  int64_t whole = cast<RankedTensorType>(arg.getType()).getNumElements();
  SmallVector<Operation *> users(arg.getUsers());
  for (size_t i = 0; i < users.size(); ++i) {
    Operation *user = users[i];
    if (user->getName().getStringRef() == "dist.scatter")
      if (auto sizes = user->getAttrOfType<DenseI64ArrayAttr>("sizes");
          sizes && !sizes.empty())
        return *llvm::max_element(sizes.asArrayRef());
    if (isa<nn::ReshapeOp>(user) && !user->hasAttr("dist.replica"))
      llvm::append_range(users, user->getUsers());
  }
  return whole;
}

/// Bytes of training state one device holds: every replica keeps a copy,
/// or its part of a sharded tensor.
int64_t stateBytes(func::FuncOp step) {
  int64_t bytes = 0;
  for (BlockArgument arg : step.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (!step.getArgAttr(i, nn::NNDialect::kParamAttrName) &&
        !step.getArgAttr(i, nn::NNDialect::kBufferAttrName) &&
        !step.getArgAttr(i, "nn.opt_state"))
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    bytes += elementsHeld(arg) * ((type.getElementTypeBitWidth() + 7) / 8);
  }
  return bytes;
}

/// Cheap ops (elementwise, normalization, pooling: at most 16 FLOPs per
/// result element) are recomputed rather than kept where a value needs
/// them; convolutions and matrix products are kept.
bool isCheap(Operation *op) {
  int64_t elements = 0;
  for (Value result : op->getResults())
    if (auto type = dyn_cast<RankedTensorType>(result.getType()))
      elements = std::max(elements, type.getNumElements());
  return estimateFlops(op) <= 16 * std::max<int64_t>(elements, 1);
}

/// The longest chain of recomputed ops budget=SIZE builds.
constexpr int64_t kMaxChain = 8;

/// The greedy search of budget=SIZE.
///
/// The recompute set grows by closures: to free a value the backward pass
/// reads, recompute its op and whatever it reads that is not kept anyway;
/// a cheap value it reads that the backward pass also reads is recomputed
/// with it (one level deep), freeing that too. What a closure reads and
/// does not recompute becomes a checkpoint: kept for good, never
/// recomputed later, so recomputation chains stay as short as they were
/// planned (without this, recomputing a residual stream value by value
/// would chain through a whole stage at once).
class BudgetSearch {
public:
  BudgetSearch(ModuleOp module, func::FuncOp step,
               const StepMemoryEstimator &estimateMemory, int64_t budget,
               bool bestEffort)
      : module(module), step(step), estimateMemory(estimateMemory),
        regions(step), budget(budget), bestEffort(bestEffort) {}

  /// The recomputation that fits, or failure (diagnosed); with
  /// `bestEffort`, where none fits, the one with the smallest peak.
  FailureOr<RecomputePlan> run();

private:
  /// The greedy search; failure (not diagnosed) if it does not fit.
  FailureOr<RecomputePlan> greedy();
  /// The segment scheme with the fewest recomputed FLOPs that fits.
  FailureOr<RecomputePlan> segments();
  /// Plans every replica's arena with `plan` applied to a copy of the step;
  /// `original` maps the copy's ops back. Notes the worst peak.
  FailureOr<std::vector<ReplicaMemory>>
  trial(const RecomputePlan &plan, DenseMap<Operation *, Operation *> &original,
        OwningOpRef<func::FuncOp> &copy);
  /// A device's peak: training state and its largest arena.
  int64_t peakOf(const ReplicaMemory &replica) const {
    return state + std::max(replica.arenaBytes, evalArena);
  }
  /// The ops to add to the recompute set so that the backward pass needs
  /// none of `values`, and the stashed values that frees; none if a value
  /// is a checkpoint or cannot be recomputed.
  std::optional<std::pair<OpSet, SmallVector<Value>>>
  closure(ArrayRef<Value> values);
  /// Adds a closure's ops and makes what they read checkpoints.
  void accept(const OpSet &ops);

  ModuleOp module;
  func::FuncOp step;
  const StepMemoryEstimator &estimateMemory;
  StepRegions regions;
  int64_t budget;
  int64_t state = 0, evalArena = 0;
  OpSet recompute;
  DenseSet<Value> checkpoints;
  /// The smallest worst-device peak any trial reached, that device, and
  /// the recomputation that reached it.
  int64_t bestPeak = INT64_MAX;
  std::string bestDevice;
  std::optional<RecomputePlan> bestPlan;
  bool bestEffort;
};

FailureOr<std::vector<ReplicaMemory>>
BudgetSearch::trial(const RecomputePlan &plan,
                    DenseMap<Operation *, Operation *> &original,
                    OwningOpRef<func::FuncOp> &copy) {
  copy = cast<func::FuncOp>(step->clone());
  DenseMap<Operation *, Operation *> toCopy;
  for (auto [a, b] :
       llvm::zip_equal(step.getBody().front(), copy->getBody().front())) {
    original[&b] = &a;
    toCopy[&a] = &b;
  }
  OpSet mapped;
  for (Operation *op : plan.ops)
    mapped.insert(toCopy.lookup(op));
  applyRecomputation(*copy, mapped, plan.shareIntermediates);
  FailureOr<std::vector<ReplicaMemory>> memory = estimateMemory(*copy);
  if (failed(memory))
    return failure();
  const ReplicaMemory *worst = nullptr;
  for (const ReplicaMemory &replica : *memory)
    if (!worst || peakOf(replica) > peakOf(*worst))
      worst = &replica;
  if (worst && peakOf(*worst) < bestPeak) {
    auto devices = step->getAttrOfType<ArrayAttr>("dist.devices");
    bestPeak = peakOf(*worst);
    bestPlan = plan;
    bestDevice = devices ? cast<StringAttr>(devices[worst->replica]).str()
                         : std::string("cpu:0");
  }
  return memory;
}

std::optional<std::pair<OpSet, SmallVector<Value>>>
BudgetSearch::closure(ArrayRef<Value> values) {
  OpSet added;
  SmallVector<Value> freed;
  SmallVector<std::pair<Operation *, int>> worklist; // op, stashed depth
  auto add = [&](Operation *op, int depth) {
    if (!recompute.contains(op) && added.insert(op))
      worklist.push_back({op, depth});
  };
  for (Value value : values) {
    Operation *def = value.getDefiningOp();
    if (checkpoints.contains(value) || !regions.isRecomputable(def))
      return std::nullopt;
    add(def, 0);
  }
  while (!worklist.empty()) {
    auto [op, depth] = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !regions.isRecomputable(def) || checkpoints.contains(operand))
        continue;
      if (!regions.isStashed(operand)) {
        add(def, depth); // freed after the forward pass anyway
      } else if (depth == 0 && isCheap(def) &&
                 !llvm::is_contained(values, operand)) {
        add(def, depth + 1);
        freed.push_back(operand);
      }
    }
  }
  // Recomputing a value recomputes the chain of recomputed ops back to
  // kept values, at every backward op that needs it: keep chains short.
  DenseMap<Operation *, int64_t> depth;
  std::function<int64_t(Operation *)> chain = [&](Operation *op) -> int64_t {
    if (auto it = depth.find(op); it != depth.end())
      return it->second;
    int64_t longest = 0;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && (recompute.contains(def) || added.contains(def)))
        longest = std::max(longest, chain(def));
    return depth[op] = longest + 1;
  };
  for (Operation *op : added)
    if (chain(op) > kMaxChain)
      return std::nullopt;
  for (Value value : values)
    freed.push_back(value);
  return std::make_pair(std::move(added), std::move(freed));
}

void BudgetSearch::accept(const OpSet &ops) {
  for (Operation *op : ops)
    recompute.insert(op);
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && regions.isForward(def) && !recompute.contains(def))
        checkpoints.insert(operand);
}

FailureOr<RecomputePlan> BudgetSearch::run() {
  state = stateBytes(step);
  // The eval step's arena counts towards the peak too; recomputation cannot
  // shrink it.
  if (auto eval = module.lookupSymbol<func::FuncOp>(dpc::steps::kEval)) {
    FailureOr<std::vector<ReplicaMemory>> evalMemory = estimateMemory(eval);
    if (failed(evalMemory))
      return failure();
    for (const ReplicaMemory &replica : *evalMemory)
      evalArena = std::max(evalArena, replica.arenaBytes);
  }
  // The greedy recomputes cheap values and keeps what convolutions and
  // matrix products compute; below that, whole segments (convolutions
  // included) must be recomputed.
  if (succeeded(greedy()))
    return RecomputePlan{recompute, /*shareIntermediates=*/false};
  if (FailureOr<RecomputePlan> plan = segments(); succeeded(plan))
    return plan;
  if (bestPeak == INT64_MAX)
    return failure(); // a trial failed, diagnosed
  if (bestEffort)
    return std::move(*bestPlan);
  step.emitError() << "cannot fit the memory budget of " << formatBytes(budget)
                   << " per device: the smallest planned peak "
                      "rematerialization reaches is "
                   << formatBytes(bestPeak) << " (" << bestDevice
                   << ", of which " << formatBytes(state) << " training state)";
  return failure();
}

FailureOr<RecomputePlan> BudgetSearch::segments() {
  int64_t forward = 0;
  for (int64_t r = 0; r < regions.numReplicas(); ++r)
    forward = std::max<int64_t>(forward, regions.forwardOps(r).size());
  std::optional<RecomputePlan> best;
  int64_t bestFlops = INT64_MAX;
  for (int64_t k = 2; k <= std::min<int64_t>(forward, 32); ++k) {
    RecomputePlan plan{segmentRecomputeSet(regions, k),
                       /*shareIntermediates=*/true};
    DenseMap<Operation *, Operation *> original;
    OwningOpRef<func::FuncOp> copy;
    FailureOr<std::vector<ReplicaMemory>> memory = trial(plan, original, copy);
    if (failed(memory))
      return failure();
    if (llvm::any_of(*memory, [&](const ReplicaMemory &replica) {
          return peakOf(replica) > budget;
        }))
      continue;
    int64_t flops = 0;
    copy->walk([&](Operation *op) {
      if (op->hasAttr(kRematAttrName))
        flops += estimateFlops(op);
    });
    if (flops < bestFlops) {
      bestFlops = flops;
      best = std::move(plan);
    }
  }
  if (!best)
    return failure();
  return std::move(*best);
}

FailureOr<RecomputePlan> BudgetSearch::greedy() {
  while (true) {
    DenseMap<Operation *, Operation *> original;
    OwningOpRef<func::FuncOp> copy;
    FailureOr<std::vector<ReplicaMemory>> memory =
        trial(RecomputePlan{recompute, false}, original, copy);
    if (failed(memory))
      return failure();
    // Each original value's arena bytes (views count with their source).
    DenseMap<Value, int64_t> bytesOf;
    auto originalValue = [&](Value value) -> Value {
      Operation *def = original.lookup(value.getDefiningOp());
      return def ? def->getResult(cast<OpResult>(value).getResultNumber())
                 : Value();
    };
    for (const ReplicaMemory &replica : *memory)
      for (const PlannedBuffer &buffer : replica.buffers)
        if (!buffer.values.empty()) // not a kernel's workspace
          if (Value value = originalValue(buffer.values.front()))
            bytesOf[value] = buffer.bytes;

    int64_t worstPeak = 0;
    bool progress = false;
    for (const ReplicaMemory &replica : *memory) {
      int64_t peak = peakOf(replica);
      worstPeak = std::max(worstPeak, peak);
      if (peak <= budget)
        continue;
      // Candidates: the forward values alive at the peak that the backward
      // pass reads (an arena buffer: a value and its views).
      struct Candidate {
        SmallVector<Value> values;
        double bytesPerFlop;
      };
      SmallVector<Candidate> candidates;
      for (const PlannedBuffer &buffer : replica.buffers) {
        if (!buffer.liveAt(replica.peakPosition))
          continue;
        SmallVector<Value> values;
        for (Value value : buffer.values)
          values.push_back(originalValue(value));
        if (llvm::is_contained(values, Value()) ||
            llvm::none_of(values,
                          [&](Value v) { return regions.isStashed(v); }))
          continue; // a clone, an argument, or not kept for the backward
        auto ops = closure(values);
        if (!ops)
          continue;
        int64_t flops = 0, bytes = 0;
        for (Operation *op : ops->first)
          flops += estimateFlops(op);
        for (Value value : ops->second)
          bytes += bytesOf.lookup(value);
        candidates.push_back({values, double(bytes) / double(flops + 1)});
      }
      llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
        return a.bytesPerFlop > b.bytesPerFlop;
      });
      // Accept the best until what they free covers the excess; each
      // closure again, as earlier ones may have made checkpoints.
      int64_t excess = peak - budget, freed = 0;
      for (const Candidate &candidate : candidates) {
        if (freed >= excess)
          break;
        auto ops = closure(candidate.values);
        if (!ops || ops->first.empty())
          continue;
        accept(ops->first);
        for (Value value : ops->second)
          freed += bytesOf.lookup(value);
        progress = true;
      }
    }
    if (worstPeak <= budget)
      return RecomputePlan{recompute, false};
    if (!progress)
      return failure();
  }
}

} // namespace

FailureOr<RecomputePlan>
dpc::remat::planForBudget(ModuleOp module, func::FuncOp step,
                          const StepMemoryEstimator &estimateMemory,
                          int64_t budget, bool bestEffort) {
  return BudgetSearch(module, step, estimateMemory, budget, bestEffort).run();
}
