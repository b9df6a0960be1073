//===- FuseKernels.cpp - one kernel call where the plan made several ------===//
//
// Runs on planned `exec` steps and merges adjacent kernel calls on one
// stream (no event between them) into the fused kernels of Kernels.def:
//
//  - Conv2dForward, LinearForward, BatchNormTrainingForward or
//    BatchNormInferenceForward whose output the very next kernel, a
//    ReluForward, reads: one call that applies the ReLU as it writes
//    (oneDNN's post-op for the convolution and the linear layer),
//    so the activation is written once instead of written, read and
//    written again.
//  - AddForward followed by a ReluForward of its sum (a residual join):
//    one AddReluForward, as the producers above.
//  - AddForward whose sum only the next kernel, a ReluBackward, reads as
//    its DY (two gradients summed, then masked): one AddReluBackward.
//  - ReluBackward whose result only the next kernel, a BatchNormBackward,
//    reads (as its DY): one BatchNormReluBackward that masks the gradient
//    as it reads it.
//  - A weight gradient followed by the bias gradient, a ReduceSum of the
//    same DY over all but its channels: Conv2dBackwardWeights with its DB
//    result, and MatmulTransposedA(DY, X) of 2-D operands as
//    LinearBackwardWeights(X, DY) with DB. The bias sum then rides on the
//    pass over DY that the weight gradient makes anyway, one call fewer.
//  - CrossEntropyForward followed by CorrectCount of the same logits and
//    labels: the loss kernel's optional Correct result, counted on its
//    pass over the rows.
//  - That loss and, next (past the Fill of its seed gradient), the
//    CrossEntropyBackward of the same logits and labels: one
//    CrossEntropyForwardBackward in the backward's place, each row's
//    logsumexp computed once. A seed of 1 that nothing else reads goes
//    (1 is the kernel's default).
//
// In training, ReluBackward reads the producer's output as its Y (the
// ReLU's output has the same signs), so that buffer lives on: the fused
// forward writes there, and the ReLU's readers -- all before that buffer's
// last reader, so within its planned life -- read it instead.
//
// The arena is already planned, so a fusion must not make a buffer live
// where the planner let another one use its bytes: a buffer a fused call
// writes that the unfused calls wrote later (the ReLU's output in
// evaluation; the batch norm gradients) must share no bytes with what the
// fused call reads that may die at the first call. A buffer no call uses
// any more goes; the arena keeps its size.
//
//===----------------------------------------------------------------------===//

#include "codegen/BufferLiveness.h"
#include "codegen/Passes.h"
#include "ir/exec/ExecOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <optional>

namespace dpc {
#define GEN_PASS_DEF_FUSEEXECKERNELS
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;

namespace {

bool overlap(std::optional<std::pair<int64_t, int64_t>> a,
             std::optional<std::pair<int64_t, int64_t>> b) {
  return a && b && a->first < b->second && b->first < a->second;
}

/// The operations that read `buffer`, directly or through views of it.
SmallVector<Operation *> getReaders(Value buffer) {
  SmallVector<Operation *> readers;
  for (Operation *user : buffer.getUsers()) {
    if (auto view = dyn_cast<ex::ViewOp>(user))
      readers.append(getReaders(view.getBuffer()));
    else
      readers.push_back(user);
  }
  return readers;
}

/// The kernel after `op` in its step, skipping the buffer definitions.
ex::KernelOp getNextKernel(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (auto kernel = dyn_cast<ex::KernelOp>(next))
      return kernel;
    if (!isa<ex::ArenaOp, ex::ViewOp, ex::InputOp, ex::StateOp>(next))
      return nullptr;
  }
  return nullptr;
}

/// The fused kernel of `producer` followed by a ReLU, or "".
StringRef getReluFusion(StringRef producer) {
  return llvm::StringSwitch<StringRef>(producer)
      .Case("Conv2dForward", "Conv2dReluForward")
      .Case("LinearForward", "LinearReluForward")
      .Case("BatchNormTrainingForward", "BatchNormReluTrainingForward")
      .Case("BatchNormInferenceForward", "BatchNormReluInferenceForward")
      .Case("AddForward", "AddReluForward")
      .Default("");
}

/// Whether `first` and the kernel after it may run as one call in its
/// place: same stream, no event between them, both recomputed or neither.
bool canMerge(ex::KernelOp first, ex::KernelOp second) {
  return first->getAttr("stream") == second->getAttr("stream") &&
         !first->hasAttr("signal") && !second->hasAttr("wait") &&
         first->hasAttr("remat") == second->hasAttr("remat");
}

/// Whether a fused call may write `written` while reading `reads` (which
/// may die at the first of the unfused calls).
bool isApart(Value written, ValueRange reads, int64_t batch) {
  auto bytes = getArenaBytes(written, batch);
  return llvm::none_of(reads, [&](Value read) {
    return read && overlap(bytes, getArenaBytes(read, batch));
  });
}

/// Whether a fused call that reads element i of each of `reads` before it
/// writes element i of `written` may write it: each read apart from it or
/// on exactly its bytes, with its type.
bool isApartOrExactly(Value written, ValueRange reads, int64_t batch) {
  auto bytes = getArenaBytes(written, batch);
  return llvm::all_of(reads, [&](Value read) {
    if (!read)
      return true;
    auto readBytes = getArenaBytes(read, batch);
    return !overlap(bytes, readBytes) ||
           (readBytes == bytes && read.getType() == written.getType());
  });
}

/// Where a fused producer + ReLU call may write, if anywhere.
enum class ReluTarget { None, ReluBuffer, ProducerBuffer };

ReluTarget getReluTarget(ex::KernelOp producer, ex::KernelOp relu,
                         int64_t batch) {
  if (producer.getOuts().empty() || relu.getIns().size() != 1 ||
      relu.getIns()[0] != producer.getOuts()[0] || relu.getOuts().size() != 1 ||
      !canMerge(producer, relu))
    return ReluTarget::None;
  // Training keeps the producer's output for ReluBackward: write there if
  // nothing else reads it and it outlives the ReLU's output's readers.
  Value produced = producer.getOuts()[0], reluOut = relu.getOuts()[0];
  Operation *lastUse = producer;
  bool onlyRelus = true, readBackward = false;
  for (OpOperand &use : produced.getUses()) {
    Operation *user = use.getOwner();
    auto kernel = dyn_cast<ex::KernelOp>(user);
    bool isReluY = kernel && kernel.getKernel() == "ReluBackward" &&
                   use.getOperandNumber() == 0;
    if (user != producer && user != relu && !isReluY)
      onlyRelus = false;
    readBackward |= isReluY;
    if (lastUse->isBeforeInBlock(user))
      lastUse = user;
  }
  if (!onlyRelus)
    return ReluTarget::None;
  bool covered = llvm::all_of(getReaders(reluOut), [&](Operation *user) {
    return user == lastUse || user->isBeforeInBlock(lastUse);
  });
  if (lastUse != relu && covered)
    return ReluTarget::ProducerBuffer;
  if (readBackward)
    return ReluTarget::None;
  // Otherwise the fused call writes the ReLU's buffer, which is then live
  // from the producer on: apart from what the producer reads, and from
  // its other results (a batch norm's statistics that nothing reads, e.g.
  // when it is recomputed, die there and may lend the ReLU their bytes).
  // An element-wise producer reads element i of its operands before it
  // writes element i, so it may also write exactly over an operand.
  bool insOk = producer.getKernel() == "AddForward"
                   ? isApartOrExactly(reluOut, producer.getIns(), batch)
                   : isApart(reluOut, producer.getIns(), batch);
  if (!insOk || !isApart(reluOut, producer.getWorkspace(), batch) ||
      !isApart(reluOut, producer.getOuts().drop_front(), batch))
    return ReluTarget::None;
  return ReluTarget::ReluBuffer;
}

void fuseRelu(ex::KernelOp producer, ex::KernelOp relu, ReluTarget target) {
  Value produced = producer.getOuts()[0], reluOut = relu.getOuts()[0];
  Value output = target == ReluTarget::ProducerBuffer ? produced : reluOut;
  SmallVector<Value> outs(producer.getOuts());
  outs[0] = output;
  OpBuilder builder(relu);
  auto fused = builder.create<ex::KernelOp>(
      producer.getLoc(), getReluFusion(producer.getKernel()), producer.getIns(),
      outs, producer.getWorkspace());
  for (NamedAttribute attr : producer.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  if (Attribute signal = relu->getAttr("signal"))
    fused->setAttr("signal", signal);
  relu.erase();
  producer.erase();
  Value unused = produced;
  if (target == ReluTarget::ProducerBuffer) {
    reluOut.replaceAllUsesWith(produced);
    unused = reluOut;
  }
  if (Operation *buffer = unused.getDefiningOp(); buffer && buffer->use_empty())
    buffer->erase();
}

/// Whether ReluBackward `relu` and the BatchNormBackward after it may run
/// as one BatchNormReluBackward.
bool canFuseReluBatchNormBackward(ex::KernelOp relu, ex::KernelOp norm,
                                  int64_t batch) {
  if (relu.getIns().size() != 2 || relu.getOuts().size() != 1 ||
      norm.getIns().size() != 5 || norm.getOuts().size() != 3 ||
      norm.getIns()[1] != relu.getOuts()[0] || !canMerge(relu, norm) ||
      relu->hasAttr("wait"))
    return false;
  Value gradient = relu.getOuts()[0];
  for (OpOperand &use : gradient.getUses())
    if (use.getOwner() != relu &&
        !(use.getOwner() == norm && use.getOperandNumber() == 1))
      return false;
  // The batch norm's results are now written where the ReLU's operands
  // are read. DX may take exactly the bytes of one of them: the kernel
  // reads element i of each before it writes element i of DX.
  ValueRange reads = relu.getIns();
  return isApartOrExactly(norm.getOuts()[0], reads, batch) &&
         isApart(norm.getOuts()[1], reads, batch) &&
         isApart(norm.getOuts()[2], reads, batch);
}

void fuseReluBatchNormBackward(ex::KernelOp relu, ex::KernelOp norm) {
  ValueRange normIns = norm.getIns();
  SmallVector<Value> ins = {normIns[0], relu.getIns()[0], relu.getIns()[1],
                            normIns[2], normIns[3],       normIns[4]};
  OpBuilder builder(norm);
  auto fused = builder.create<ex::KernelOp>(
      norm.getLoc(), "BatchNormReluBackward", ins, norm.getOuts(), Value());
  for (NamedAttribute attr : norm.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  Value gradient = relu.getOuts()[0];
  norm.erase();
  relu.erase();
  if (Operation *buffer = gradient.getDefiningOp();
      buffer && buffer->use_empty())
    buffer->erase();
}

/// Whether AddForward `add` and the ReluBackward after it, which masks the
/// sum as its DY, may run as one AddReluBackward: same-shaped operands, the
/// sum read by nothing else, and DX on bytes the kernel may write -- exactly
/// those of an addend (each element is read before it is written) or apart
/// from them, and apart from Y (the CUDA kernel writes the sum into DX
/// before it reads Y).
bool canFuseAddReluBackward(ex::KernelOp add, ex::KernelOp relu,
                            int64_t batch) {
  if (add.getIns().size() != 2 || add.getOuts().size() != 1 ||
      relu.getIns().size() != 2 || relu.getOuts().size() != 1 ||
      relu.getIns()[1] != add.getOuts()[0] || !canMerge(add, relu))
    return false;
  Value sum = add.getOuts()[0], dx = relu.getOuts()[0];
  Type type = sum.getType();
  if (add.getIns()[0].getType() != type || add.getIns()[1].getType() != type ||
      relu.getIns()[0].getType() != type || dx.getType() != type)
    return false;
  for (OpOperand &use : sum.getUses())
    if (use.getOwner() != add &&
        !(use.getOwner() == relu && use.getOperandNumber() == 1))
      return false;
  return isApartOrExactly(dx, add.getIns(), batch) &&
         isApart(dx, relu.getIns()[0], batch);
}

void fuseAddReluBackward(ex::KernelOp add, ex::KernelOp relu) {
  SmallVector<Value> ins = {relu.getIns()[0], add.getIns()[0], add.getIns()[1]};
  OpBuilder builder(relu);
  auto fused = builder.create<ex::KernelOp>(add.getLoc(), "AddReluBackward",
                                            ins, relu.getOuts(), Value());
  for (NamedAttribute attr : add.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  if (Attribute signal = relu->getAttr("signal"))
    fused->setAttr("signal", signal);
  Value sum = add.getOuts()[0];
  relu.erase();
  add.erase();
  if (Operation *buffer = sum.getDefiningOp(); buffer && buffer->use_empty())
    buffer->erase();
}

/// The weight-gradient kernel that also writes the bias gradient `sum`
/// computes, when the kernel `weights` is followed by it, or "".
StringRef getBiasFusion(ex::KernelOp weights, ex::KernelOp sum) {
  if (sum.getKernel() != "ReduceSum" || sum.getIns().size() != 1 ||
      sum.getOuts().size() != 1 || weights.getIns().size() != 2 ||
      weights.getOuts().size() != 1)
    return "";
  auto dims = sum->getAttrOfType<DenseI64ArrayAttr>("dims");
  if (!dims)
    return "";
  ArrayRef<int64_t> reduced = dims.asArrayRef();
  Value dy = sum.getIns()[0];
  int64_t rank = cast<MemRefType>(dy.getType()).getRank();
  if (weights.getKernel() == "Conv2dBackwardWeights" &&
      weights.getIns()[1] == dy && rank == 4 &&
      reduced == ArrayRef<int64_t>{0, 2, 3})
    return "Conv2dBackwardWeights";
  if (weights.getKernel() == "MatmulTransposedA" && weights.getIns()[0] == dy &&
      rank == 2 &&
      cast<MemRefType>(weights.getIns()[1].getType()).getRank() == 2 &&
      reduced == ArrayRef<int64_t>{0})
    return "LinearBackwardWeights";
  return "";
}

/// Whether `weights` may write the bias gradient of `sum` too: the bias
/// gradient, written one call earlier, must share no bytes with what the
/// weight gradient reads (which may die there) or writes.
bool canFuseBias(ex::KernelOp weights, ex::KernelOp sum, int64_t batch) {
  Value bias = sum.getOuts()[0];
  return canMerge(weights, sum) && isApart(bias, weights.getIns(), batch) &&
         isApart(bias, weights.getOuts(), batch) &&
         isApart(bias, weights.getWorkspace(), batch);
}

void fuseBias(ex::KernelOp weights, ex::KernelOp sum, StringRef kernel) {
  // LinearBackwardWeights takes (X, DY) where MatmulTransposedA took (DY, X).
  SmallVector<Value> ins(weights.getIns());
  if (kernel != weights.getKernel())
    std::swap(ins[0], ins[1]);
  SmallVector<Value> outs = {weights.getOuts()[0], sum.getOuts()[0]};
  OpBuilder builder(sum);
  auto fused = builder.create<ex::KernelOp>(weights.getLoc(), kernel, ins, outs,
                                            weights.getWorkspace());
  for (NamedAttribute attr : weights.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  if (Attribute signal = sum->getAttr("signal"))
    fused->setAttr("signal", signal);
  sum.erase();
  weights.erase();
}

/// Whether `count`, right after the loss `loss`, counts the same rows, and
/// may be written one call earlier (apart from what the loss reads).
bool canFuseCorrectCount(ex::KernelOp loss, ex::KernelOp count, int64_t batch) {
  return count.getKernel() == "CorrectCount" && loss.getOuts().size() == 1 &&
         count.getOuts().size() == 1 && loss.getIns() == count.getIns() &&
         canMerge(loss, count) &&
         isApart(count.getOuts()[0], loss.getIns(), batch) &&
         isApart(count.getOuts()[0], loss.getOuts(), batch);
}

void fuseCorrectCount(ex::KernelOp loss, ex::KernelOp count) {
  SmallVector<Value> outs = {loss.getOuts()[0], count.getOuts()[0]};
  OpBuilder builder(count);
  auto fused = builder.create<ex::KernelOp>(loss.getLoc(), loss.getKernel(),
                                            loss.getIns(), outs, Value());
  for (NamedAttribute attr : loss.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  if (Attribute signal = count->getAttr("signal"))
    fused->setAttr("signal", signal);
  count.erase();
  loss.erase();
}

/// The Fill of a scalar 1 that only `backward` reads, as its DLoss.
bool isUnitSeedOf(ex::KernelOp fill, ex::KernelOp backward) {
  if (fill.getKernel() != "Fill" || fill.getOuts().size() != 1 ||
      backward.getIns().size() != 3 ||
      backward.getIns()[2] != fill.getOuts()[0])
    return false;
  auto value = fill->getAttrOfType<FloatAttr>("value");
  return value && value.getValueAsDouble() == 1.0 &&
         llvm::all_of(getReaders(fill.getOuts()[0]), [&](Operation *user) {
           return user == fill || user == backward;
         });
}

/// Fuses the loss `loss` with its gradient, when the CrossEntropyBackward
/// of the same logits and labels follows it (past at most a Fill, of its
/// DLoss). The fused call runs in the backward's place: the loss and the
/// count, written later than before, are read by no call between.
void fuseLossGradient(ex::KernelOp loss) {
  ex::KernelOp next = getNextKernel(loss);
  if (!next || !canMerge(loss, next))
    return;
  ex::KernelOp fill, backward = next;
  if (next.getKernel() == "Fill") {
    fill = next;
    backward = getNextKernel(fill);
    if (!backward || !canMerge(fill, backward))
      return;
  }
  if (backward.getKernel() != "CrossEntropyBackward" ||
      backward.getOuts().size() != 1 || backward.getIns().size() < 2 ||
      backward.getIns().take_front(2) != loss.getIns())
    return;
  bool dropSeed = fill && isUnitSeedOf(fill, backward);
  SmallVector<Value> ins(loss.getIns());
  if (!dropSeed && backward.getIns().size() == 3)
    ins.push_back(backward.getIns()[2]);
  SmallVector<Value> outs = {loss.getOuts()[0], backward.getOuts()[0]};
  if (loss.getOuts().size() == 2)
    outs.push_back(loss.getOuts()[1]);
  OpBuilder builder(backward);
  auto fused = builder.create<ex::KernelOp>(
      loss.getLoc(), "CrossEntropyForwardBackward", ins, outs, Value());
  for (NamedAttribute attr : backward.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  backward.erase();
  loss.erase();
  if (dropSeed) {
    Value seed = fill.getOuts()[0];
    fill.erase();
    if (Operation *buffer = seed.getDefiningOp(); buffer && buffer->use_empty())
      buffer->erase();
  }
}

struct FuseExecKernelsPass
    : public dpc::impl::FuseExecKernelsBase<FuseExecKernelsPass> {
  void runOnOperation() override {
    for (auto step : getOperation().getOps<ex::StepOp>()) {
      int64_t batch = static_cast<int64_t>(step.getBatch());
      SmallVector<ex::KernelOp> producers, reluGrads, weightGrads, losses;
      step.getBody().walk([&](ex::KernelOp op) {
        if (!getReluFusion(op.getKernel()).empty())
          producers.push_back(op);
        else if (op.getKernel() == "ReluBackward")
          reluGrads.push_back(op);
        else if (op.getKernel() == "Conv2dBackwardWeights" ||
                 op.getKernel() == "MatmulTransposedA")
          weightGrads.push_back(op);
        else if (op.getKernel() == "CrossEntropyForward")
          losses.push_back(op);
      });
      for (ex::KernelOp producer : producers) {
        ex::KernelOp relu = getNextKernel(producer);
        if (!relu || relu.getKernel() != "ReluForward")
          continue;
        ReluTarget target = getReluTarget(producer, relu, batch);
        if (target != ReluTarget::None)
          fuseRelu(producer, relu, target);
      }
      for (ex::KernelOp relu : reluGrads) {
        ex::KernelOp norm = getNextKernel(relu);
        if (norm && norm.getKernel() == "BatchNormBackward" &&
            canFuseReluBatchNormBackward(relu, norm, batch))
          fuseReluBatchNormBackward(relu, norm);
      }
      // The adds the ReLU fusion left: gradient sums a ReluBackward masks.
      SmallVector<ex::KernelOp> adds;
      step.getBody().walk([&](ex::KernelOp op) {
        if (op.getKernel() == "AddForward")
          adds.push_back(op);
      });
      for (ex::KernelOp add : adds) {
        ex::KernelOp relu = getNextKernel(add);
        if (relu && relu.getKernel() == "ReluBackward" &&
            canFuseAddReluBackward(add, relu, batch))
          fuseAddReluBackward(add, relu);
      }
      for (ex::KernelOp weights : weightGrads) {
        ex::KernelOp sum = getNextKernel(weights);
        if (!sum)
          continue;
        StringRef kernel = getBiasFusion(weights, sum);
        if (!kernel.empty() && canFuseBias(weights, sum, batch))
          fuseBias(weights, sum, kernel);
      }
      for (ex::KernelOp loss : losses) {
        ex::KernelOp count = getNextKernel(loss);
        if (count && canFuseCorrectCount(loss, count, batch))
          fuseCorrectCount(loss, count);
      }
      // Again: the count fusion replaced the losses it fused.
      SmallVector<ex::KernelOp> fusedLosses;
      step.getBody().walk([&](ex::KernelOp op) {
        if (op.getKernel() == "CrossEntropyForward")
          fusedLosses.push_back(op);
      });
      for (ex::KernelOp loss : fusedLosses)
        fuseLossGradient(loss);
    }
  }
};

} // namespace
