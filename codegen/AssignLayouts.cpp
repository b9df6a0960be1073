//===- AssignLayouts.cpp - blocked activations where convolutions want them
//===//
//
// Runs on planned `exec` steps, before fusion. oneDNN's convolutions run in
// a blocked layout (nChw16c on AVX-512) and reorder plain NCHW arguments
// into it and back on every call; this pass decides, at compile time, which
// arena buffers live blocked so that those reorders go away:
//
//  - A buffer can be blocked when it is f32 [n, c, h, w] with c a multiple
//    of 16 (no padded channels: the planned bytes stay right) and only
//    kernels use it (no views, not a step output).
//  - The kernels' table (runtime/abi/KernelLayouts.h) ties the tensors
//    that must share a layout (batch norm's x and y, a ReLU's operands and
//    result, pooling, element-wise adds); tied buffers form one class.
//  - Where a call cannot take a class blocked (a plain-only operand, a tie
//    with a buffer that must stay plain, a broadcast), the class would need
//    an explicit reorder there. A class is blocked when its convolution
//    arguments (each saving the reorder oneDNN makes inside) outnumber the
//    reorders it needs: the deterministic rule, decided per class.
//  - An `exec.kernel "Reorder"` is inserted only where a producer and a
//    consumer disagree, through a plain buffer placed in the arena where no
//    buffer alive at that call lies (the arena grows if none fits).
//
// Blocked buffers carry `layout = "nChw16c"`. Steps on CUDA devices stay
// plain: cuDNN's kernels take NCHW.
//
//===----------------------------------------------------------------------===//

#include "codegen/BufferLiveness.h"
#include "codegen/Passes.h"
#include "ir/exec/ExecOps.h"
#include "runtime/abi/KernelLayouts.h"
#include "runtime/abi/KernelSignature.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

namespace dpc {
#define GEN_PASS_DEF_ASSIGNEXECLAYOUTS
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;
namespace plan = dpc::plan;

namespace {

constexpr plan::Layout kBlocked = plan::Layout::NChw16c;

bool isConvolution(plan::Kernel kernel) {
  return kernel == plan::Kernel::Conv2dForward ||
         kernel == plan::Kernel::Conv2dReluForward ||
         kernel == plan::Kernel::Conv2dBackwardData ||
         kernel == plan::Kernel::Conv2dBackwardWeights;
}

/// One tensor position of a kernel call: operand `index` of the op.
struct Position {
  unsigned operand;
  bool result;
  plan::LayoutUse use;
};

/// The positions of `op`'s tensors (workspace aside) with their uses.
SmallVector<Position> getPositions(ex::KernelOp op, plan::Kernel kernel) {
  SmallVector<Position> positions;
  unsigned numIns = op.getIns().size();
  for (unsigned i = 0; i < numIns; ++i)
    positions.push_back({i, false, plan::getLayoutUse(kernel, false, i)});
  for (unsigned i = 0; i < op.getOuts().size(); ++i)
    positions.push_back(
        {numIns + i, true, plan::getLayoutUse(kernel, true, i)});
  return positions;
}

class StepLayouts {
public:
  explicit StepLayouts(ex::StepOp step) : step(step) {}
  void run();

private:
  /// Whether `buffer` may be blocked at all.
  bool isCandidate(Value buffer);
  /// Whether the Tied tensors of `op` can share a blocked layout.
  bool canTieBlocked(ex::KernelOp op, ArrayRef<Position> positions);
  /// The positions of `op` that must be plain whatever their class.
  SmallVector<Position> getPlainPositions(ex::KernelOp op,
                                          ArrayRef<Position> positions);
  void insertReorders(ex::KernelOp op, ArrayRef<Position> plainPositions);

  /// The representative of `buffer`'s class (union-find).
  Value findClass(Value buffer) {
    auto it = parent.try_emplace(buffer, buffer).first;
    if (it->second == buffer)
      return buffer;
    Value root = findClass(it->second);
    parent[buffer] = root;
    return root;
  }
  void unite(Value a, Value b) {
    Value ra = findClass(a), rb = findClass(b);
    if (ra != rb)
      parent[rb] = ra;
  }

  ex::StepOp step;
  DenseMap<Value, bool> candidates;
  DenseMap<Value, Value> parent;
  DenseSet<Value> blocked;
  std::optional<ArenaLiveness> liveness;
};

bool StepLayouts::isCandidate(Value buffer) {
  auto [it, inserted] = candidates.try_emplace(buffer, false);
  if (!inserted)
    return it->second;
  auto arena = buffer.getDefiningOp<ex::ArenaOp>();
  if (!arena)
    return false;
  // The batch, if any, as n: dim 0 as it is.
  auto type = cast<MemRefType>(buffer.getType());
  std::vector<int64_t> dims(type.getShape().begin(), type.getShape().end());
  if (!dims.empty() && ShapedType::isDynamic(dims[0]) &&
      arena.getBatchScale() == 1)
    dims[0] = 1;
  if (!type.getElementType().isF32() ||
      !plan::canHaveLayout(kBlocked, plan::DType::F32, dims))
    return false;
  bool onlyKernels = llvm::all_of(buffer.getUsers(), [](Operation *user) {
    return isa<ex::KernelOp>(user);
  });
  return candidates[buffer] = onlyKernels;
}

bool StepLayouts::canTieBlocked(ex::KernelOp op, ArrayRef<Position> positions) {
  plan::Kernel kernel = op.getKernel();
  Type firstType;
  for (const Position &p : positions) {
    if (p.use != plan::LayoutUse::Tied)
      continue;
    Value buffer = op->getOperand(p.operand);
    if (!isCandidate(buffer))
      return false;
    if (plan::isElementwiseLayout(kernel)) {
      if (firstType && buffer.getType() != firstType)
        return false;
      firstType = buffer.getType();
    }
  }
  return true;
}

SmallVector<Position>
StepLayouts::getPlainPositions(ex::KernelOp op, ArrayRef<Position> positions) {
  bool tiePlain = !canTieBlocked(op, positions);
  SmallVector<Position> plain;
  for (const Position &p : positions)
    if (p.use == plan::LayoutUse::Plain ||
        (p.use == plan::LayoutUse::Tied && tiePlain))
      plain.push_back(p);
  return plain;
}

void StepLayouts::insertReorders(ex::KernelOp op,
                                 ArrayRef<Position> plainPositions) {
  // One plain buffer per blocked buffer the call reads or writes.
  // Accumulate adds to its result: that is read too.
  bool readsResults = op.getKernel() == plan::Kernel::Accumulate;
  llvm::MapVector<Value, std::pair<bool, bool>> accesses; // read, written
  for (const Position &p : plainPositions) {
    Value buffer = op->getOperand(p.operand);
    if (!blocked.contains(buffer))
      continue;
    auto &[read, written] = accesses[buffer];
    read |= !p.result || readsResults;
    written |= p.result;
  }
  if (accesses.empty())
    return;
  int64_t position = liveness->getPosition(op);
  OpBuilder builder(op);
  DenseMap<Value, Value> plainOf;
  for (auto &[buffer, access] : accesses) {
    auto type = cast<MemRefType>(buffer.getType());
    int64_t offset = liveness->placeAt(position, buffer);
    auto temp = builder.create<ex::ArenaOp>(op.getLoc(), type, offset,
                                            /*batch_scale=*/1);
    plainOf[buffer] = temp.getBuffer();
  }
  auto reorder = [&](Value from, Value to) {
    auto kernel =
        builder.create<ex::KernelOp>(op.getLoc(), plan::Kernel::Reorder,
                                     ValueRange{from}, ValueRange{to}, Value());
    for (StringAttr name : {op.getStreamAttrName(), op.getRematAttrName()})
      if (Attribute attr = op->getAttr(name))
        kernel->setAttr(name, attr);
    return kernel;
  };
  // Reads before the call, which takes over its waits; writes after it,
  // which take over its signals.
  for (auto &[buffer, access] : accesses)
    if (access.first) {
      ex::KernelOp before = reorder(buffer, plainOf[buffer]);
      if (DenseI64ArrayAttr wait = op.getWaitAttr()) {
        before.setWaitAttr(wait);
        op.removeWaitAttr();
      }
    }
  builder.setInsertionPointAfter(op);
  for (auto &[buffer, access] : llvm::reverse(accesses))
    if (access.second) {
      ex::KernelOp after = reorder(plainOf[buffer], buffer);
      if (DenseI64ArrayAttr signal = op.getSignalAttr()) {
        after.setSignalAttr(signal);
        op.removeSignalAttr();
      }
    }
  for (const Position &p : plainPositions)
    if (Value plain = plainOf.lookup(op->getOperand(p.operand)))
      op->setOperand(p.operand, plain);
}

void StepLayouts::run() {
  SmallVector<std::pair<ex::KernelOp, plan::Kernel>> kernels;
  step.getBody().walk([&](ex::KernelOp op) {
    kernels.push_back({op, op.getKernel()});
  });
  // Classes of buffers that must share a layout.
  for (auto [op, kernel] : kernels) {
    SmallVector<Position> positions = getPositions(op, kernel);
    if (!canTieBlocked(op, positions))
      continue;
    Value first;
    for (const Position &p : positions) {
      if (p.use != plan::LayoutUse::Tied)
        continue;
      Value buffer = op->getOperand(p.operand);
      if (first)
        unite(first, buffer);
      first = buffer;
    }
  }
  // Per class, the convolution arguments blocking saves a reorder at, and
  // the reorders it needs.
  DenseMap<Value, int64_t> saved, needed;
  for (auto [op, kernel] : kernels) {
    SmallVector<Position> positions = getPositions(op, kernel);
    for (const Position &p : positions) {
      Value buffer = op->getOperand(p.operand);
      if (p.use == plan::LayoutUse::Free && isConvolution(kernel) &&
          isCandidate(buffer))
        ++saved[findClass(buffer)];
    }
    DenseSet<Value> reordered;
    for (const Position &p : getPlainPositions(op, positions)) {
      Value buffer = op->getOperand(p.operand);
      if (isCandidate(buffer) && reordered.insert(buffer).second)
        ++needed[findClass(buffer)];
    }
  }
  for (auto [buffer, isCandidate] : candidates)
    if (isCandidate) {
      Value root = findClass(buffer);
      if (saved.lookup(root) > needed.lookup(root))
        blocked.insert(buffer);
    }
  if (blocked.empty())
    return;

  liveness.emplace(step);
  for (auto [op, kernel] : kernels)
    insertReorders(op, getPlainPositions(op, getPositions(op, kernel)));
  Builder builder(step.getContext());
  for (Value buffer : blocked)
    buffer.getDefiningOp<ex::ArenaOp>().setLayoutAttr(
        builder.getStringAttr(plan::getLayoutName(kBlocked)));
  step.setArenaBytes(liveness->getArenaBytes());
}

struct AssignExecLayoutsPass
    : public dpc::impl::AssignExecLayoutsBase<AssignExecLayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto devices = module->getAttrOfType<ArrayAttr>("exec.devices");
    for (auto step : module.getOps<ex::StepOp>()) {
      // cuDNN's kernels take plain NCHW: a GPU's steps keep it.
      int64_t device = static_cast<int64_t>(step.getDevice());
      if (devices && device < static_cast<int64_t>(devices.size()))
        if (auto name = dyn_cast<StringAttr>(devices[device]);
            name && name.getValue().starts_with("cuda:"))
          continue;
      StepLayouts(step).run();
    }
  }
};

} // namespace
