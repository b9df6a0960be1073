//===- ScheduleStreams.cpp - gradient all-reduces on their own stream -----===//
//
// The lowering leaves every kernel call of a step in program order on the
// compute stream (0). This pass moves each AllReduce to the communication
// stream (1) and orders the two streams with events, so that a bucket's
// all-reduce overlaps the rest of the backward pass:
//
//  - the compute kernel just before an AllReduce (the one that completed its
//    bucket) signals a `ready` event, which the AllReduce waits for (a
//    collective before every compute kernel, of the training state only,
//    waits for nothing);
//  - the AllReduce signals a `reduced` event;
//  - the first later compute kernel that reads or writes a reduced buffer
//    (or a view of one: buffers count by the buffer they view) waits for
//    that event. The compute stream runs in order, so the kernels
//    after it need not wait again;
//  - a ReduceScatter's wholes (the gradients) die with it, and the arena
//    may reuse their bytes once the compute stream has waited for it
//    (BufferLiveness.h): the first compute kernel after the next
//    collective waits for it, so the wholes of at most two buckets are
//    alive at once and the backward pass of a bucket never waits for the
//    reduction of the one before.
//
// Events are numbered per step from 0, in program order.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/StepMemory.h"
#include "ir/exec/ExecOps.h"
#include "runtime/abi/KernelSignature.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace dpc {
#define GEN_PASS_DEF_SCHEDULEEXECSTREAMS
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;

namespace {

constexpr int64_t kCommunicationStream = 1;

/// Adds `event` to what `op` signals when it completes.
void addSignal(ex::KernelOp op, int64_t event) {
  SmallVector<int64_t> signals;
  if (std::optional<ArrayRef<int64_t>> existing = op.getSignal())
    llvm::append_range(signals, *existing);
  signals.push_back(event);
  op.setSignal(signals);
}

/// Whether `kernel` reads only persistent tensors (training state).
bool readsOnlyState(ex::KernelOp kernel) {
  return llvm::all_of(kernel.getIns(), [](Value buffer) {
    return isa_and_nonnull<ex::StateOp>(
        ex::getRootBuffer(buffer).getDefiningOp());
  });
}

} // namespace

LogicalResult dpc::scheduleStepStreams(ex::StepOp step) {
  ex::KernelOp lastComputeKernel;
  // Buffers whose all-reduce no compute kernel has waited for yet.
  DenseMap<Value, int64_t> pendingReduction;
  // ReduceScatters issued since the last collective, and those the next
  // compute kernel fences (waits for), by their `reduced` event.
  SmallVector<int64_t> scattering, fenced;
  int64_t numEvents = 0;
  for (auto kernel : step.getBody().front().getOps<ex::KernelOp>()) {
    if (plan::isCollectiveKernel(kernel.getKernel())) {
      // Before any compute kernel only the training state is there to
      // communicate (the parameters --shard parameters gathers first):
      // nothing to wait for.
      kernel.setStream(kCommunicationStream);
      if (lastComputeKernel) {
        int64_t ready = numEvents++;
        addSignal(lastComputeKernel, ready);
        kernel.setWait(ArrayRef<int64_t>{ready});
      } else if (!readsOnlyState(kernel)) {
        return kernel.emitError() << "communicates a value no kernel computed";
      }
      int64_t reduced = numEvents++;
      kernel.setSignal(ArrayRef<int64_t>{reduced});
      for (ValueRange buffers : {kernel.getIns(), kernel.getOuts()})
        for (Value buffer : buffers)
          pendingReduction[ex::getRootBuffer(buffer)] = reduced;
      llvm::append_range(fenced, scattering);
      scattering.clear();
      if (kernel.getKernel() == plan::Kernel::ReduceScatter)
        scattering.push_back(reduced);
      continue;
    }
    // A view of a communicated buffer (a range of a gradient) waits too.
    SmallVector<int64_t> waits = std::move(fenced);
    fenced.clear();
    for (ValueRange buffers : {kernel.getIns(), kernel.getOuts()})
      for (Value buffer : buffers)
        if (auto it = pendingReduction.find(ex::getRootBuffer(buffer));
            it != pendingReduction.end() &&
            !llvm::is_contained(waits, it->second))
          waits.push_back(it->second);
    if (!waits.empty()) {
      kernel.setWait(ArrayRef<int64_t>(waits));
      SmallVector<Value> waited;
      for (auto &[pending, event] : pendingReduction)
        if (llvm::is_contained(waits, event))
          waited.push_back(pending);
      for (Value pending : waited)
        pendingReduction.erase(pending);
    }
    lastComputeKernel = kernel;
  }
  return success();
}

namespace {

struct ScheduleExecStreamsPass
    : public dpc::impl::ScheduleExecStreamsBase<ScheduleExecStreamsPass> {
  void runOnOperation() override {
    for (auto step : getOperation().getOps<ex::StepOp>())
      if (failed(scheduleStepStreams(step)))
        return signalPassFailure();
  }
};

} // namespace
