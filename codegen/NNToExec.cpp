//===- NNToExec.cpp - lower train/eval steps to planned kernel calls ------===//
//
// Each step function (@train_step, @eval_step) becomes an exec.step: every
// tensor value gets a buffer -- the training state's own, a bound input, a
// view of another buffer, or a planned slot in the step's arena -- and every
// nn op becomes the runtime kernel(s) that compute it, in program order on
// one compute stream: its KernelLoweringOpInterface, implemented per op
// family in codegen/lowering/, names them. Optimizer updates and batch-norm
// running statistics write the training state in place. The dist ops
// between the replicas lower in DistLowering.cpp.
//
// Which buffers scale with the batch is found by inferring every shape a
// second time at another batch size: a dim that changes is the batch.
//
//===----------------------------------------------------------------------===//

#include "codegen/BufferLiveness.h"
#include "codegen/MemoryPlanner.h"
#include "codegen/MemoryReport.h"
#include "codegen/Passes.h"
#include "codegen/StepLowering.h"
#include "codegen/StepMemory.h"
#include "ir/exec/ExecOps.h"
#include "ir/nn/NNOps.h"
#include "ir/nn/StepNames.h"
#include "passes/Passes.h"
#include "passes/RematSupport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <map>

namespace dpc {
#define GEN_PASS_DEF_CONVERTNNTOEXEC
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// The plan's name for data input `i` of `func`: "images" for a model's
/// one input (what dpc run binds its data to), the model's own input name
/// (nn.input's value) where it has several, which the data flags name.
StringRef getDataInputBinding(func::FuncOp func, unsigned i) {
  unsigned inputs = 0;
  for (unsigned a = 0; a < func.getNumArguments(); ++a)
    inputs += func.getArgAttr(a, nn::NNDialect::kInputAttrName) != nullptr;
  auto name =
      func.getArgAttrOfType<StringAttr>(i, nn::NNDialect::kInputAttrName);
  return inputs == 1 || !name ? StringRef("images") : name.getValue();
}

} // namespace

LogicalResult StepAnalysis::run(func::FuncOp func) {
  if (failed(readBatch(func)) || failed(findBatchDims(func)))
    return failure();
  int64_t index = 0;
  func.walk([&](Operation *op) { position[op] = index++; });
  groupBuckets(func);
  return success();
}

LogicalResult StepAnalysis::readBatch(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    if (!func.getArgAttr(arg.getArgNumber(), nn::NNDialect::kInputAttrName))
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    if (type.isDynamicDim(0))
      return func.emitError()
             << "the batch size is not fixed; compile with --batch N";
    batch = type.getDimSize(0);
  }
  if (batch == 0)
    return func.emitError() << "has no data input (nn.input)";
  if (auto devicesAttr = func->getAttrOfType<ArrayAttr>("dist.devices")) {
    for (Attribute device : devicesAttr)
      devices.push_back(cast<StringAttr>(device).str());
    auto splitAttr = func->getAttrOfType<DenseI64ArrayAttr>("dist.split");
    if (!splitAttr || splitAttr.size() != int64_t(devices.size()))
      return func.emitError() << "partitioned over " << devices.size()
                              << " devices without a matching dist.split";
    split.assign(splitAttr.asArrayRef().begin(), splitAttr.asArrayRef().end());
  } else {
    split = {batch};
  }
  return success();
}

LogicalResult StepAnalysis::findBatchDims(func::FuncOp func) {
  // Infer every shape again with one more row per replica, and compare.
  auto probe = cast<func::FuncOp>(func->clone());
  auto eraseProbe = llvm::make_scope_exit([&] { probe->erase(); });
  for (BlockArgument arg : probe.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (!probe.getArgAttr(i, nn::NNDialect::kInputAttrName) &&
        !probe.getArgAttr(i, "nn.labels"))
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = batch + int64_t(split.size());
    arg.setType(type.clone(shape));
  }
  probe.walk([&](Operation *op) {
    if (op->getName().getStringRef() != kScatter)
      return;
    // The batch's scatters only: sharded optimizer state is scattered too.
    auto input = dyn_cast<BlockArgument>(op->getOperand(0));
    if (!input || (!probe.getArgAttr(input.getArgNumber(),
                                     nn::NNDialect::kInputAttrName) &&
                   !probe.getArgAttr(input.getArgNumber(), "nn.labels")))
      return;
    for (Value result : op->getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      SmallVector<int64_t> shape(type.getShape());
      ++shape[0];
      result.setType(type.clone(shape));
    }
  });
  if (failed(inferShapes(probe)))
    return failure();

  // A replica's value grows by `scale` where it holds the batch (one more
  // row per replica); a global one (a data argument) by `scale` per replica.
  auto compare = [&](Value original, Value probed) -> LogicalResult {
    auto a = dyn_cast<RankedTensorType>(original.getType());
    auto b = dyn_cast<RankedTensorType>(probed.getType());
    if (!a || a == b)
      return success();
    std::optional<int64_t> axis;
    for (int64_t d = 0; d < a.getRank(); ++d) {
      if (a.getDimSize(d) == b.getDimSize(d))
        continue;
      if (axis)
        return emitError(original.getLoc())
               << "the batch is in dims " << *axis << " and " << d << " of "
               << a << "; a plan tensor holds it in one dim";
      axis = d;
    }
    if (!axis)
      return success();
    int64_t growth = b.getDimSize(*axis) - a.getDimSize(*axis);
    if (isa<BlockArgument>(original))
      growth /= static_cast<int64_t>(split.size());
    if (growth < 1 || a.getDimSize(*axis) % growth != 0)
      return emitError(original.getLoc())
             << "dim " << *axis << " of " << a
             << " does not hold the batch as a whole multiple";
    batchDims[original] = {*axis, growth};
    return success();
  };
  for (auto [a, b] : llvm::zip_equal(func.getArguments(), probe.getArguments()))
    if (failed(compare(a, b)))
      return failure();
  SmallVector<Operation *> originalOps, probeOps;
  func.walk([&](Operation *op) { originalOps.push_back(op); });
  probe.walk([&](Operation *op) { probeOps.push_back(op); });
  for (auto [a, b] : llvm::zip_equal(originalOps, probeOps))
    for (auto [ra, rb] : llvm::zip_equal(a->getResults(), b->getResults()))
      if (failed(compare(ra, rb)))
        return failure();
  return success();
}

void StepAnalysis::groupBuckets(func::FuncOp func) {
  // Each kind of collective buckets apart: one collective each.
  std::map<std::pair<StringRef, int64_t>, SmallVector<Operation *>> buckets;
  int64_t unbucketed = -1;
  func.walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if (name != kAllReduce && name != kAllGather && name != kReduceScatter)
      return;
    auto bucket = op->getAttrOfType<IntegerAttr>("bucket");
    buckets[{name, bucket ? bucket.getInt() : unbucketed--}].push_back(op);
  });
  for (auto &[id, members] : buckets)
    for (Operation *member : members)
      bucketOf[member] = members;
}

MemRefType StepLowering::bufferType(Value value) const {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  auto batch = batchDims.find(value);
  if (batch != batchDims.end())
    shape[batch->second.axis] = kDynamic;
  Type element = type.getElementType();
  // Labels travel as int32, the kernels' index type.
  if (isa<IntegerType>(element) && batch != batchDims.end())
    element = IntegerType::get(value.getContext(), 32);
  return MemRefType::get(shape, element);
}

Value StepLowering::allocate(Value value) {
  auto op = builder.create<ex::ArenaOp>(value.getLoc(), bufferType(value),
                                        /*offset=*/0, batchScaleOf(value));
  arenaIndex[op.getBuffer()] = arena.size();
  arena.push_back({op, {value}});
  buffers[value] = op.getBuffer();
  return op.getBuffer();
}

Value StepLowering::allocateWorkspace(int64_t bytes) {
  auto op = builder.create<ex::ArenaOp>(
      builder.getUnknownLoc(), MemRefType::get({bytes}, builder.getI8Type()),
      /*offset=*/0, /*batch_scale=*/1);
  arenaIndex[op.getBuffer()] = arena.size();
  arena.push_back({op, {}});
  return op.getBuffer();
}

LogicalResult StepLowering::addView(Value value, Value source,
                                    std::optional<int64_t> offset) {
  Value sourceBuffer = buffer(source);
  buffers[value] = builder.create<ex::ViewOp>(
      value.getLoc(), bufferType(value), sourceBuffer, batchScaleOf(value),
      offset ? builder.getI64IntegerAttr(*offset) : IntegerAttr());
  // Copy the index out: inserting into arenaIndex may rehash it.
  if (auto it = arenaIndex.find(sourceBuffer); it != arenaIndex.end()) {
    size_t index = it->second;
    arenaIndex[buffers[value]] = index;
    arena[index].values.push_back(value);
  }
  return success();
}

LogicalResult StepLowering::inPlace(Value value, Value operand) {
  for (Operation *user : operand.getUsers())
    if (position.lookup(user) > currentPosition)
      return emitError(value.getLoc())
             << "cannot update in place: the old value is read later";
  Value shared = buffer(operand);
  buffers[value] = shared;
  // The new value's readers keep the buffer alive too.
  if (auto it = arenaIndex.find(shared); it != arenaIndex.end())
    arena[it->second].values.push_back(value);
  return success();
}

LogicalResult StepLowering::joinBuffer(Value value, Value input) {
  shareBuffer(value, buffer(input));
  return success();
}

void StepLowering::shareBuffer(Value value, Value source) {
  buffers[value] = source;
  if (auto it = arenaIndex.find(source); it != arenaIndex.end())
    arena[it->second].values.push_back(value);
}

StringRef StepLowering::declarePersistent(StringRef name, RankedTensorType type,
                                          StringRef kind, StringRef init,
                                          StringRef source, StringRef parameter,
                                          ElementsAttr value) {
  std::string symbol = symbolFor(name);
  if (auto existing = module.lookupSymbol<ex::PersistentOp>(symbol))
    return existing.getSymName();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(step);
  auto optional = [&](StringRef value) {
    return value.empty() ? StringAttr() : builder.getStringAttr(value);
  };
  auto op = builder.create<ex::PersistentOp>(
      func.getLoc(), builder.getStringAttr(symbol), TypeAttr::get(type),
      builder.getStringAttr(kind), builder.getStringAttr(init),
      optional(source), optional(parameter), builder.getI64IntegerAttr(replica),
      replica == 0 ? StringAttr() : builder.getStringAttr(name), value,
      /*logical_shape=*/nullptr, /*shard_offset=*/nullptr);
  return op.getSymName();
}

/// Named by a hash of the contents, so every step and replica shares one
/// per device.
LogicalResult StepLowering::constantBuffer(Value value,
                                           DenseElementsAttr contents) {
  auto type = cast<RankedTensorType>(contents.getType());
  std::string name;
  ArrayRef<char> raw = contents.getRawData();
  llvm::raw_string_ostream os(name);
  os << "constant.";
  llvm::interleave(type.getShape(), os, "x");
  os << "."
     << llvm::format_hex_no_prefix(
            llvm::xxh3_64bits(StringRef(raw.data(), raw.size())), 16);
  StringRef symbol =
      declarePersistent(name, type, "buffer", "constant", "", "", contents);
  buffers[value] =
      builder.create<ex::StateOp>(value.getLoc(), bufferType(value), symbol);
  return success();
}

LogicalResult StepLowering::declareArguments() {
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    Value value = replicaValue(arg);
    auto type = cast<RankedTensorType>(arg.getType());
    auto name = [&](StringRef attrName) -> StringRef {
      auto str = func.getArgAttrOfType<StringAttr>(i, attrName);
      return str ? str.getValue() : StringRef();
    };
    auto state = [&](StringRef symbol) {
      return builder.create<ex::StateOp>(arg.getLoc(), bufferType(value),
                                         symbol);
    };
    // Sharded (dist.scatter'ed: optimizer state, or parameters with
    // --shard parameters), this replica keeps its range alone.
    auto declareShard = [&](StringRef symbol) {
      if (std::optional<int64_t> offset = getShardOffset(arg)) {
        auto persistent = module.lookupSymbol<ex::PersistentOp>(symbol);
        persistent.setLogicalShape(type.getShape());
        persistent.setShardOffset(*offset);
      }
      return state(symbol);
    };
    auto mine = cast<RankedTensorType>(value.getType());
    Value buffer;
    if (StringRef param = name(nn::NNDialect::kParamAttrName); !param.empty()) {
      StringRef source = name(nn::NNDialect::kInitFromAttrName);
      buffer =
          declareShard(declarePersistent(param, mine, "parameter", "model",
                                         source.empty() ? param : source, ""));
    } else if (StringRef stateName = name(nn::NNDialect::kBufferAttrName);
               !stateName.empty()) {
      StringRef source = name(nn::NNDialect::kInitFromAttrName);
      buffer =
          state(declarePersistent(stateName, type, "buffer", "model",
                                  source.empty() ? stateName : source, ""));
    } else if (StringRef opt = name("nn.opt_state"); !opt.empty()) {
      // "<parameter>.<state>": the state's parameter is the name's prefix.
      buffer = declareShard(declarePersistent(
          opt, mine, "optimizer_state", "zeros", "", opt.rsplit('.').first));
    } else {
      StringRef binding = func.getArgAttr(i, nn::NNDialect::kInputAttrName)
                              ? getDataInputBinding(func, i)
                          : func.getArgAttr(i, "nn.labels") ? "labels"
                          : func.getArgAttr(i, "nn.lr")     ? "lr"
                          : func.getArgAttr(i, "nn.step")   ? "step"
                                                            : "";
      if (binding.empty())
        return func.emitError()
               << "argument " << i << " is neither state nor a known input";
      buffer =
          builder.create<ex::InputOp>(arg.getLoc(), bufferType(value), binding);
    }
    buffers[value] = buffer;
  }
  return success();
}

LogicalResult StepLowering::lowerOp(Operation *op) {
  if (isa<func::ReturnOp>(op))
    return success();
  if (auto lowering = dyn_cast<nn::KernelLoweringOpInterface>(op))
    return lowering.lowerToKernels(*this);
  return op->emitError() << "cannot be lowered to a runtime kernel";
}

LogicalResult StepLowering::declareOutputs() {
  Operation *terminator = func.getBody().back().getTerminator();
  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    if (auto name = func.getResultAttrOfType<StringAttr>(
            i, nn::NNDialect::kOutputAttrName)) {
      // A gathered output is each replica's part, which the runtime joins.
      Operation *gather = value.getDefiningOp();
      if (gather && gather->getName().getStringRef() == kGather)
        value = gather->getOperand(replica);
      builder.create<ex::OutputOp>(func.getLoc(), name, buffer(value));
      continue;
    }
    // Every other result is updated training state (one per replica when
    // partitioned): it must already live in the state's own buffer.
    if (auto owner = func.getResultAttrOfType<IntegerAttr>(i, kReplicaAttr);
        owner && owner.getInt() != replica)
      continue;
    StringRef updated;
    for (StringRef attrName :
         {"nn.param_update", "nn.buffer_update", "nn.opt_state_update"})
      if (auto name = func.getResultAttrOfType<StringAttr>(i, attrName))
        updated = name.getValue();
    if (updated.empty())
      return func.emitError() << "result " << i << " has no role";
    // Updated in place, or through a view of the whole state (a sharded
    // step's all-gathered parameter): no copy.
    Value result = buffer(value);
    std::string symbol = symbolFor(updated);
    auto state = ex::getRootBuffer(result).getDefiningOp<ex::StateOp>();
    if (!state || state.getTensor() != symbol ||
        ex::getBufferDims(result, 1) != ex::getBufferDims(state, 1))
      kernel(plan::Kernel::Copy, {result},
             {builder.create<ex::StateOp>(
                 func.getLoc(), cast<MemRefType>(result.getType()), symbol)});
  }
  return success();
}

DenseMap<Operation *, SmallVector<Value>> StepLowering::getArenaValues() const {
  DenseMap<Operation *, SmallVector<Value>> values;
  for (const ArenaBuffer &buf : arena)
    values[buf.op] = buf.values;
  return values;
}

void StepLowering::recordArenaHolds() {
  Operation *loss = findLossOp(func, replica);
  int64_t lossPosition = loss ? position.lookup(loss) : INT64_MAX;
  auto kindOf = [&](const ArenaBuffer &buf) -> StringRef {
    if (buf.values.empty()) // a kernel's own scratch
      return "workspace";
    for (Value v : buf.values)
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if ((isa<nn::SgdUpdateOp, nn::AdamWUpdateOp>(user) &&
             use.getOperandNumber() == 1) ||
            (user->getName().getStringRef() == kAllReduce &&
             !user->hasAttr("dist.statistics")) ||
            user->getName().getStringRef() == kReduceScatter)
          return "gradient";
      }
    Operation *def = buf.values.front().getDefiningOp();
    // A whole parameter gathered from the devices' shards for a pass
    // (--shard parameters): ZeRO-1's gathers write into the parameter.
    if (def && def->getName().getStringRef() == kAllGather)
      return "parameter";
    if (def &&
        (position.lookup(def) < lossPosition || def->hasAttr(kRematAttrName)))
      return "activation";
    return "workspace";
  };
  for (const ArenaBuffer &buf : arena) {
    // Named by the model's node where the importer recorded it.
    std::string name;
    llvm::raw_string_ostream os(name);
    if (buf.values.empty()) {
      os << "a kernel's workspace";
    } else {
      Value value = buf.values.front();
      if (Operation *def = value.getDefiningOp()) {
        os << def->getName().getStringRef();
        if (auto loc = dyn_cast<NameLoc>(def->getLoc()))
          os << " " << loc.getName().getValue();
        if (def->hasAttr(kRematAttrName))
          os << " (recomputed)";
      }
      os << " " << value.getType();
    }
    buf.op->setAttr(kArenaHoldsAttrName, builder.getStringAttr(name));
    buf.op->setAttr(kArenaKindAttrName, builder.getStringAttr(kindOf(buf)));
  }
  int64_t rematFlops = 0;
  for (Operation &op : func.getBody().front())
    if (op.hasAttr(kRematAttrName) && inReplica(&op))
      rematFlops += estimateFlops(&op);
  step.setRematFlops(rematFlops);
}

LogicalResult StepLowering::run() {
  // In place of the function, or at the end of a scratch module.
  if (func->getParentOp() == module.getOperation())
    builder.setInsertionPoint(func);
  else
    builder.setInsertionPointToEnd(module.getBody());
  step = builder.create<ex::StepOp>(
      func.getLoc(), func.getSymName(), /*device=*/replica,
      /*batch=*/analysis.split[replica], /*arena_bytes=*/0,
      /*activation_bytes=*/nullptr, /*gradient_bytes=*/nullptr,
      /*remat_flops=*/nullptr, /*live_at_peak=*/nullptr,
      /*gathered_parameter_bytes=*/nullptr);
  step.getBody().emplaceBlock();
  builder.setInsertionPointToStart(&step.getBody().front());
  if (failed(declareArguments()))
    return failure();
  for (Operation &op : func.getBody().front()) {
    currentPosition = position.lookup(&op);
    Block *body = builder.getInsertionBlock();
    Operation *last = body->empty() ? nullptr : &body->back();
    LogicalResult lowered = isDistOp(&op)         ? lowerDistOp(&op)
                            : isStateFlatten(&op) ? success()
                            : inReplica(&op)      ? lowerOp(&op)
                                                  : success();
    if (failed(lowered))
      return failure();
    // The kernels that recompute a forward op say so (the runtime ignores
    // it); every kernel takes the op's location (its model node), which
    // the verifier's and the plan writer's errors name.
    for (Operation &emitted :
         llvm::make_range(last ? std::next(last->getIterator()) : body->begin(),
                          body->end())) {
      if (!isa<ex::KernelOp>(emitted))
        continue;
      if (op.hasAttr(kRematAttrName))
        emitted.setAttr("remat", builder.getUnitAttr());
      if (isa<UnknownLoc>(emitted.getLoc()))
        emitted.setLoc(op.getLoc());
    }
  }
  if (failed(declareOutputs()))
    return failure();
  recordArenaHolds();
  return success();
}

namespace {

/// Lowers every replica of `func` to its own exec.step, then erases it.
LogicalResult lowerStep(ModuleOp module, func::FuncOp func) {
  StepAnalysis analysis;
  if (failed(analysis.run(func)))
    return failure();
  // The devices, for the plan: every step of a module runs on the same ones.
  Builder builder(module.getContext());
  SmallVector<StringRef> devices(analysis.devices.begin(),
                                 analysis.devices.end());
  if (devices.empty())
    devices.push_back("cpu:0");
  ArrayAttr devicesAttr = builder.getStrArrayAttr(devices);
  if (auto existing = module->getAttrOfType<ArrayAttr>("exec.devices");
      existing && existing != devicesAttr)
    return func.emitError()
           << "runs on " << devicesAttr << " but another step on " << existing;
  module->setAttr("exec.devices", devicesAttr);
  for (int64_t replica = 0; replica < int64_t(analysis.split.size()); ++replica)
    if (failed(StepLowering(module, func, analysis, replica).run()))
      return failure();
  func.erase();
  return success();
}

} // namespace

FailureOr<std::vector<ReplicaMemory>> dpc::planStepMemory(func::FuncOp step) {
  StepAnalysis analysis;
  if (failed(analysis.run(step)))
    return failure();
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(step.getLoc());
  std::vector<ReplicaMemory> replicas;
  for (int64_t replica = 0; replica < int64_t(analysis.split.size());
       ++replica) {
    StepLowering lowering(*scratch, step, analysis, replica);
    if (failed(lowering.run()) ||
        failed(scheduleStepStreams(lowering.getStep())))
      return failure();
    // The arena as plan-exec-arena plans it, from the same liveness.
    std::vector<ArenaLifetime> lifetimes =
        getArenaLifetimes(lowering.getStep());
    ReplicaMemory &memory = replicas.emplace_back();
    memory.replica = replica;
    memory.arenaBytes = planArena(lifetimes).peakBytes;
    std::tie(memory.peakPosition, memory.liveBytesAtPeak) =
        getLivePeak(lifetimes);
    DenseMap<Operation *, SmallVector<Value>> values =
        lowering.getArenaValues();
    for (const ArenaLifetime &lifetime : lifetimes) {
      PlannedBuffer &planned = memory.buffers.emplace_back();
      planned.values = values.lookup(lifetime.op);
      planned.bytes = lifetime.bytes;
      planned.first = lifetime.first;
      planned.last = lifetime.last;
    }
  }
  return replicas;
}

namespace {

struct ConvertNNToExecPass
    : public dpc::impl::ConvertNNToExecBase<ConvertNNToExecPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> steps;
    for (auto func : module.getOps<func::FuncOp>())
      if (llvm::is_contained(dpc::steps::kDeviceSteps, func.getSymName()))
        steps.push_back(func);
    if (steps.empty()) {
      module.emitError() << "no @train_step or @eval_step to lower; run "
                            "nn-build-train-step first";
      return signalPassFailure();
    }
    for (func::FuncOp func : steps)
      if (failed(lowerStep(module, func)))
        return signalPassFailure();
    // The forward graph has served its purpose.
    if (auto forward = module.lookupSymbol<func::FuncOp>(dpc::steps::kForward))
      forward.erase();
    // Training state first, then the steps, as in the plan file.
    Block &body = *module.getBody();
    SmallVector<ex::PersistentOp> states(module.getOps<ex::PersistentOp>());
    for (ex::PersistentOp state : llvm::reverse(states))
      state->moveBefore(&body, body.begin());
  }
};

} // namespace
