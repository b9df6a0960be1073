//===- ShareCasts.cpp - cast an operand read by several bf16 calls once ---===//
//
// A bf16 convolution or linear layer casts its f32 operands to bf16 as it
// runs. When several calls of a step read the same tensor in bf16 -- the
// MLP's first layer: its forward and its weight gradient both read the
// input batch; a convolution's backward-data and backward-weights both
// read its DY -- the first keeps its copy in a cast slot (`cast_slot = K`)
// and the later ones read that copy (`cast_slot = K, cast_reuse`): one
// cast per step instead of one per call (runtime/abi/SharedCast.h names
// the operand each kernel shares). Same bits: the copy is the one the
// later call would have made.
//
// Safe only while the tensor keeps its value from the first call to the
// last, so a group of calls shares a slot when they run on one stream and
// nothing between the first and the last writes the tensor, a view of the
// same buffer, or arena bytes it lies on. Training state (which the
// optimizer updates in place) is never shared. A slot holds its copy from
// the group's first call to its last; a later group of the stream takes a
// slot no group still holds, so a step keeps few copies at once.
//
//===----------------------------------------------------------------------===//

#include "codegen/BufferLiveness.h"
#include "codegen/Passes.h"
#include "ir/exec/ExecOps.h"
#include "ir/exec/KernelAttributes.h"
#include "runtime/abi/KernelSignature.h"
#include "runtime/abi/SharedCast.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

namespace dpc {
#define GEN_PASS_DEF_SHAREEXECCASTS
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;

namespace {

/// The operand `kernel` reads through a bf16 copy it could share, or null.
Value getSharedCastOperand(ex::KernelOp kernel) {
  std::optional<Type> precision = kernel.getPrecision();
  if (!precision || !precision->isBF16())
    return {};
  int operand = plan::getSharedCastOperand(kernel.getKernel());
  if (operand < 0 || static_cast<size_t>(operand) >= kernel.getIns().size())
    return {};
  return kernel.getIns()[operand];
}

/// Whether `kernel` may change the bytes of `x` (at the step's `batch`).
bool mayWrite(ex::KernelOp kernel, Value x, int64_t batch) {
  Value root = ex::getRootBuffer(x);
  auto bytes = getArenaBytes(x, batch);
  for (Value out : kernel.getOuts()) {
    if (ex::getRootBuffer(out) == root)
      return true;
    auto outBytes = getArenaBytes(out, batch);
    if (bytes && outBytes && bytes->first < outBytes->second &&
        outBytes->first < bytes->second)
      return true;
  }
  if (Value workspace = kernel.getWorkspace()) {
    auto outBytes = getArenaBytes(workspace, batch);
    if (bytes && outBytes && bytes->first < outBytes->second &&
        outBytes->first < bytes->second)
      return true;
  }
  return false;
}

void shareCasts(ex::StepOp step) {
  SmallVector<ex::KernelOp> kernels;
  step.walk([&](ex::KernelOp kernel) { kernels.push_back(kernel); });
  // The calls that read each tensor in bf16, by tensor and stream, in step
  // order.
  llvm::MapVector<std::pair<Value, Attribute>, SmallVector<size_t>> readers;
  for (auto [index, kernel] : llvm::enumerate(kernels)) {
    Value operand = getSharedCastOperand(kernel);
    if (operand && !ex::getRootBuffer(operand).getDefiningOp<ex::StateOp>())
      readers[{operand, kernel.getStreamAttr()}].push_back(index);
  }

  // Runs of readers of one tensor with no write of it between neighbours:
  // each run of two or more shares one copy.
  struct Group {
    Attribute stream;
    SmallVector<size_t> calls;
  };
  SmallVector<Group> groups;
  for (auto &entry : readers) {
    // A plain reference: clang 14 cannot capture structured bindings.
    const auto &key = entry.first;
    const auto &calls = entry.second;
    size_t begin = 0;
    for (size_t end = 1; end <= calls.size(); ++end) {
      if (end < calls.size() &&
          llvm::none_of(
              llvm::seq(calls[end - 1] + 1, calls[end]), [&](size_t between) {
                return mayWrite(kernels[between], key.first, step.getBatch());
              }))
        continue;
      if (end - begin >= 2)
        groups.push_back({key.second, SmallVector<size_t>(ArrayRef(calls).slice(
                                          begin, end - begin))});
      begin = end;
    }
  }

  // Slots by first call: each group takes its stream's lowest slot whose
  // last group ended before it begins.
  llvm::stable_sort(groups, [](const Group &a, const Group &b) {
    return a.calls.front() < b.calls.front();
  });
  llvm::DenseMap<Attribute, SmallVector<size_t>> slotEnds; // by slot - 1
  for (const Group &group : groups) {
    SmallVector<size_t> &ends = slotEnds[group.stream];
    const auto *free = llvm::find_if(
        ends, [&](size_t end) { return end < group.calls.front(); });
    size_t slot = free - ends.begin();
    if (slot == plan::kMaxCastSlots)
      continue;
    if (free == ends.end())
      ends.push_back(0);
    ends[slot] = group.calls.back();
    for (auto [i, call] : llvm::enumerate(group.calls)) {
      kernels[call].setCastSlot(slot + 1);
      if (i > 0)
        kernels[call].setCastReuse(true);
    }
  }
}

struct ShareExecCastsPass
    : public dpc::impl::ShareExecCastsBase<ShareExecCastsPass> {
  void runOnOperation() override {
    getOperation().walk([](ex::StepOp step) { shareCasts(step); });
  }
};

} // namespace
