//===- ShareCasts.cpp - cast an operand read by several bf16 calls once ---===//
//
// A bf16 linear layer casts its f32 X to bf16 as it runs. When several
// calls of a step read the same X in bf16 -- the MLP's first layer: its
// forward and its weight gradient both read the input batch -- the first
// keeps its copy in a cast slot (`cast_slot = K`) and the later ones read
// that copy (`cast_slot = K, cast_reuse`): one cast per step instead of
// one per call (runtime/plan/SharedCast.h). Same bits: the copy is the
// one the later call would have made.
//
// Safe only while X keeps its value from the first call to the last, so a
// group of calls shares a slot when they run on one stream and nothing
// between the first and the last writes X, a view of the same buffer, or
// arena bytes X lies on. Training state (which the optimizer updates in
// place) is never shared.
//
//===----------------------------------------------------------------------===//

#include "codegen/BufferLiveness.h"
#include "codegen/Passes.h"
#include "ir/exec/ExecOps.h"
#include "ir/exec/KernelAttributes.h"
#include "runtime/plan/KernelSignature.h"
#include "runtime/plan/SharedCast.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

namespace dpc {
#define GEN_PASS_DEF_SHAREEXECCASTS
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;

namespace {

/// The buffer `value` is a view of (itself when not a view).
Value getRoot(Value value) {
  while (auto view = value.getDefiningOp<ex::ViewOp>())
    value = view.getSource();
  return value;
}

/// Whether `kernel` reads its X through a bf16 copy it could share.
bool readsCastX(ex::KernelOp kernel) {
  const plan::Kernel *kind = plan::findKernel(kernel.getKernel());
  auto precision = kernel->getAttrOfType<TypeAttr>(ex::kPrecisionAttrName);
  return kind && plan::canShareCastOperand(*kind) && precision &&
         precision.getValue().isBF16() && !kernel.getIns().empty();
}

/// Whether `kernel` may change the bytes of `x` (at the step's `batch`).
bool mayWrite(ex::KernelOp kernel, Value x, int64_t batch) {
  Value root = getRoot(x);
  auto bytes = getArenaBytes(x, batch);
  for (Value out : kernel.getOuts()) {
    if (getRoot(out) == root)
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
  // The calls that read each X in bf16, by X and stream, in step order.
  llvm::MapVector<std::pair<Value, Attribute>, SmallVector<size_t>> readers;
  for (auto [index, kernel] : llvm::enumerate(kernels))
    if (readsCastX(kernel) &&
        !getRoot(kernel.getIns()[0]).getDefiningOp<ex::StateOp>())
      readers[{kernel.getIns()[0], kernel->getAttr("stream")}].push_back(index);

  OpBuilder b(step.getContext());
  int64_t slot = 0;
  auto share = [&](ArrayRef<size_t> run) {
    if (run.size() < 2 || slot == plan::kMaxCastSlots)
      return;
    ++slot;
    for (auto [i, call] : llvm::enumerate(run)) {
      kernels[call]->setAttr(ex::kCastSlotAttrName, b.getI64IntegerAttr(slot));
      if (i > 0)
        kernels[call]->setAttr(ex::kCastReuseAttrName, b.getUnitAttr());
    }
  };
  for (auto &entry : readers) {
    // A plain reference: clang 14 cannot capture structured bindings.
    const auto &key = entry.first;
    const auto &calls = entry.second;
    // Runs of readers with no write of X between neighbours: each run
    // shares one copy.
    size_t begin = 0;
    for (size_t end = 1; end <= calls.size(); ++end) {
      if (end < calls.size() &&
          llvm::none_of(
              llvm::seq(calls[end - 1] + 1, calls[end]), [&](size_t between) {
                return mayWrite(kernels[between], key.first, step.getBatch());
              }))
        continue;
      share(ArrayRef(calls).slice(begin, end - begin));
      begin = end;
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
