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
#include "codegen/lowering/KernelBuilder.h"
#include "ir/exec/ExecOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

namespace dpc {
#define GEN_PASS_DEF_FUSEEXECKERNELS
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;
using plan::Kernel;
namespace roles = plan::roles;

namespace {

/// A call of the fused `kernel` at `loc`, built where `builder` is.
ex::KernelOp createKernel(OpBuilder &builder, Location loc, Kernel kernel,
                          ValueRange ins, ValueRange outs, Value workspace) {
  return builder.create<ex::KernelOp>(loc, kernel, ins, outs, workspace);
}

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

/// The result of a producer that getReluFusion fuses which goes through the
/// ReLU: Y, or AddForward's C.
constexpr unsigned kProduced = roles::Conv2dForward::Y;
static_assert(samePosition(kProduced, roles::LinearForward::Y) &&
              samePosition(kProduced, roles::BatchNormTrainingForward::Y) &&
              samePosition(kProduced, roles::BatchNormInferenceForward::Y) &&
              samePosition(kProduced, roles::AddForward::C));

/// The fused kernel of `producer` followed by a ReLU, if there is one. Each
/// takes the producer's operands and results, its kProduced result through
/// the ReLU.
std::optional<Kernel> getReluFusion(ex::KernelOp producer) {
  std::optional<Kernel> kernel = getKernel(producer);
  if (!kernel)
    return std::nullopt;
  switch (*kernel) {
  case Kernel::Conv2dForward:
    return Kernel::Conv2dReluForward;
  case Kernel::LinearForward:
    return Kernel::LinearReluForward;
  case Kernel::BatchNormTrainingForward:
    return Kernel::BatchNormReluTrainingForward;
  case Kernel::BatchNormInferenceForward:
    return Kernel::BatchNormReluInferenceForward;
  case Kernel::AddForward:
    return Kernel::AddReluForward;
  default:
    return std::nullopt;
  }
}

/// Whether `first` and the kernel after it may run as one call in its
/// place: same stream, no event between them, both recomputed or neither.
bool canMerge(ex::KernelOp first, ex::KernelOp second) {
  return first.getStreamAttr() == second.getStreamAttr() &&
         !first.getSignalAttr() && !second.getWaitAttr() &&
         first.getRemat() == second.getRemat();
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
  if (producer.getOuts().empty() ||
      relu.getIns().size() != roles::ReluForward::kNumOperands ||
      relu.getIns()[roles::ReluForward::X] != producer.getOuts()[kProduced] ||
      relu.getOuts().size() != roles::ReluForward::kNumResults ||
      !canMerge(producer, relu))
    return ReluTarget::None;
  // Training keeps the producer's output for ReluBackward: write there if
  // nothing else reads it and it outlives the ReLU's output's readers.
  Value produced = producer.getOuts()[kProduced],
        reluOut = relu.getOuts()[roles::ReluForward::Y];
  Operation *lastUse = producer;
  bool onlyRelus = true, readBackward = false;
  for (OpOperand &use : produced.getUses()) {
    Operation *user = use.getOwner();
    auto kernel = dyn_cast<ex::KernelOp>(user);
    // (ins come first among exec.kernel's operands)
    bool isReluY = kernel && isKernel(kernel, Kernel::ReluBackward) &&
                   use.getOperandNumber() == roles::ReluBackward::Y;
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
  bool insOk = isKernel(producer, Kernel::AddForward)
                   ? isApartOrExactly(reluOut, producer.getIns(), batch)
                   : isApart(reluOut, producer.getIns(), batch);
  if (!insOk || !isApart(reluOut, producer.getWorkspace(), batch) ||
      !isApart(reluOut, producer.getOuts().drop_front(), batch))
    return ReluTarget::None;
  return ReluTarget::ReluBuffer;
}

void fuseRelu(ex::KernelOp producer, ex::KernelOp relu, ReluTarget target) {
  Value produced = producer.getOuts()[kProduced],
        reluOut = relu.getOuts()[roles::ReluForward::Y];
  Value output = target == ReluTarget::ProducerBuffer ? produced : reluOut;
  SmallVector<Value> outs(producer.getOuts());
  outs[kProduced] = output;
  OpBuilder builder(relu);
  auto fused =
      createKernel(builder, producer.getLoc(), *getReluFusion(producer),
                   producer.getIns(), outs, producer.getWorkspace());
  for (NamedAttribute attr : producer.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  if (DenseI64ArrayAttr signal = relu.getSignalAttr())
    fused.setSignalAttr(signal);
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
  namespace reluGrad = roles::ReluBackward;
  namespace normGrad = roles::BatchNormBackward;
  if (relu.getIns().size() != reluGrad::kNumOperands ||
      relu.getOuts().size() != reluGrad::kNumResults ||
      norm.getIns().size() != normGrad::kNumOperands ||
      norm.getOuts().size() != normGrad::kNumResults ||
      norm.getIns()[normGrad::DY] != relu.getOuts()[reluGrad::DX] ||
      !canMerge(relu, norm) || relu->hasAttr("wait"))
    return false;
  Value gradient = relu.getOuts()[reluGrad::DX];
  for (OpOperand &use : gradient.getUses())
    if (use.getOwner() != relu &&
        !(use.getOwner() == norm && use.getOperandNumber() == normGrad::DY))
      return false;
  // The batch norm's results are now written where the ReLU's operands
  // are read. DX may take exactly the bytes of one of them: the kernel
  // reads element i of each before it writes element i of DX.
  ValueRange reads = relu.getIns();
  return isApartOrExactly(norm.getOuts()[normGrad::DX], reads, batch) &&
         isApart(norm.getOuts()[normGrad::DScale], reads, batch) &&
         isApart(norm.getOuts()[normGrad::DShift], reads, batch);
}

void fuseReluBatchNormBackward(ex::KernelOp relu, ex::KernelOp norm) {
  namespace reluGrad = roles::ReluBackward;
  namespace normGrad = roles::BatchNormBackward;
  using namespace roles::BatchNormReluBackward;
  ValueRange normIns = norm.getIns(), reluIns = relu.getIns();
  SmallVector<Value> ins = KernelBuilder::orderByRole(
      {{X, normIns[normGrad::X]},
       {Y, reluIns[reluGrad::Y]},
       {DY, reluIns[reluGrad::DY]},
       {Scale, normIns[normGrad::Scale]},
       {SavedMean, normIns[normGrad::SavedMean]},
       {SavedInvStd, normIns[normGrad::SavedInvStd]}});
  OpBuilder builder(norm);
  auto fused =
      createKernel(builder, norm.getLoc(), Kernel::BatchNormReluBackward, ins,
                   norm.getOuts(), Value());
  for (NamedAttribute attr : norm.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  Value gradient = relu.getOuts()[reluGrad::DX];
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
  namespace sum = roles::AddForward;
  namespace reluGrad = roles::ReluBackward;
  if (add.getIns().size() != sum::kNumOperands ||
      add.getOuts().size() != sum::kNumResults ||
      relu.getIns().size() != reluGrad::kNumOperands ||
      relu.getOuts().size() != reluGrad::kNumResults ||
      relu.getIns()[reluGrad::DY] != add.getOuts()[sum::C] ||
      !canMerge(add, relu))
    return false;
  Value c = add.getOuts()[sum::C], dx = relu.getOuts()[reluGrad::DX];
  Value y = relu.getIns()[reluGrad::Y];
  Type type = c.getType();
  if (add.getIns()[sum::A].getType() != type ||
      add.getIns()[sum::B].getType() != type || y.getType() != type ||
      dx.getType() != type)
    return false;
  for (OpOperand &use : c.getUses())
    if (use.getOwner() != add &&
        !(use.getOwner() == relu && use.getOperandNumber() == reluGrad::DY))
      return false;
  return isApartOrExactly(dx, add.getIns(), batch) && isApart(dx, y, batch);
}

void fuseAddReluBackward(ex::KernelOp add, ex::KernelOp relu) {
  namespace sum = roles::AddForward;
  namespace reluGrad = roles::ReluBackward;
  using namespace roles::AddReluBackward;
  SmallVector<Value> ins =
      KernelBuilder::orderByRole({{Y, relu.getIns()[reluGrad::Y]},
                                  {A, add.getIns()[sum::A]},
                                  {B, add.getIns()[sum::B]}});
  OpBuilder builder(relu);
  auto fused = createKernel(builder, add.getLoc(), Kernel::AddReluBackward, ins,
                            relu.getOuts(), Value());
  for (NamedAttribute attr : add.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  if (DenseI64ArrayAttr signal = relu.getSignalAttr())
    fused.setSignalAttr(signal);
  Value c = add.getOuts()[sum::C];
  relu.erase();
  add.erase();
  if (Operation *buffer = c.getDefiningOp(); buffer && buffer->use_empty())
    buffer->erase();
}

/// The weight-gradient kernel that also writes the bias gradient `sum`
/// computes, when the kernel `weights` is followed by it, if any.
std::optional<Kernel> getBiasFusion(ex::KernelOp weights, ex::KernelOp sum) {
  // The weight gradient has no bias gradient yet: one result.
  if (!isKernel(sum, Kernel::ReduceSum) ||
      sum.getIns().size() != roles::ReduceSum::kNumOperands ||
      sum.getOuts().size() != roles::ReduceSum::kNumResults ||
      weights.getIns().size() != 2 || weights.getOuts().size() != 1)
    return std::nullopt;
  auto dims = sum->getAttrOfType<DenseI64ArrayAttr>("dims");
  if (!dims)
    return std::nullopt;
  ArrayRef<int64_t> reduced = dims.asArrayRef();
  Value dy = sum.getIns()[roles::ReduceSum::X];
  int64_t rank = cast<MemRefType>(dy.getType()).getRank();
  ValueRange ins = weights.getIns();
  if (isKernel(weights, Kernel::Conv2dBackwardWeights) &&
      ins[roles::Conv2dBackwardWeights::DY] == dy && rank == 4 &&
      reduced == ArrayRef<int64_t>{0, 2, 3})
    return Kernel::Conv2dBackwardWeights;
  namespace matmul = roles::MatmulTransposedA;
  if (isKernel(weights, Kernel::MatmulTransposedA) && ins[matmul::A] == dy &&
      rank == 2 && cast<MemRefType>(ins[matmul::B].getType()).getRank() == 2 &&
      reduced == ArrayRef<int64_t>{0})
    return Kernel::LinearBackwardWeights;
  return std::nullopt;
}

/// Whether `weights` may write the bias gradient of `sum` too: the bias
/// gradient, written one call earlier, must share no bytes with what the
/// weight gradient reads (which may die there) or writes.
bool canFuseBias(ex::KernelOp weights, ex::KernelOp sum, int64_t batch) {
  Value bias = sum.getOuts()[roles::ReduceSum::Y];
  return canMerge(weights, sum) && isApart(bias, weights.getIns(), batch) &&
         isApart(bias, weights.getOuts(), batch) &&
         isApart(bias, weights.getWorkspace(), batch);
}

void fuseBias(ex::KernelOp weights, ex::KernelOp sum, Kernel kernel) {
  // Conv2dBackwardWeights and LinearBackwardWeights: (X, DY) -> (DW, DB).
  static_assert(samePosition(roles::Conv2dBackwardWeights::DW,
                             roles::LinearBackwardWeights::DW) &&
                samePosition(roles::Conv2dBackwardWeights::DB,
                             roles::LinearBackwardWeights::DB) &&
                samePosition(roles::Conv2dBackwardWeights::DW,
                             roles::MatmulTransposedA::C));
  using namespace roles::LinearBackwardWeights;
  SmallVector<Value> ins(weights.getIns());
  // LinearBackwardWeights takes (X, DY) where MatmulTransposedA took (DY, X).
  if (kernel == Kernel::LinearBackwardWeights) {
    namespace matmul = roles::MatmulTransposedA;
    ins = KernelBuilder::orderByRole(
        {{X, weights.getIns()[matmul::B]}, {DY, weights.getIns()[matmul::A]}});
  }
  SmallVector<Value> outs = KernelBuilder::orderByRole(
      {{DW, weights.getOuts()[roles::Conv2dBackwardWeights::DW]},
       {DB, sum.getOuts()[roles::ReduceSum::Y]}});
  OpBuilder builder(sum);
  auto fused = createKernel(builder, weights.getLoc(), kernel, ins, outs,
                            weights.getWorkspace());
  for (NamedAttribute attr : weights.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  if (DenseI64ArrayAttr signal = sum.getSignalAttr())
    fused.setSignalAttr(signal);
  sum.erase();
  weights.erase();
}

/// Whether `count`, right after the loss `loss`, counts the same rows, and
/// may be written one call earlier (apart from what the loss reads).
bool canFuseCorrectCount(ex::KernelOp loss, ex::KernelOp count, int64_t batch) {
  // The loss has no count yet: one result. Both read (Logits, Labels).
  if (!isKernel(count, Kernel::CorrectCount) || loss.getOuts().size() != 1 ||
      count.getOuts().size() != roles::CorrectCount::kNumResults ||
      loss.getIns() != count.getIns() || !canMerge(loss, count))
    return false;
  Value counted = count.getOuts()[roles::CorrectCount::Count];
  return isApart(counted, loss.getIns(), batch) &&
         isApart(counted, loss.getOuts(), batch);
}

void fuseCorrectCount(ex::KernelOp loss, ex::KernelOp count) {
  using namespace roles::CrossEntropyForward;
  SmallVector<Value> outs = KernelBuilder::orderByRole(
      {{Loss, loss.getOuts()[Loss]},
       {Correct, count.getOuts()[roles::CorrectCount::Count]}});
  OpBuilder builder(count);
  auto fused = createKernel(builder, loss.getLoc(), Kernel::CrossEntropyForward,
                            loss.getIns(), outs, Value());
  for (NamedAttribute attr : loss.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  if (DenseI64ArrayAttr signal = count.getSignalAttr())
    fused.setSignalAttr(signal);
  count.erase();
  loss.erase();
}

/// The Fill of a scalar 1 that only `backward` reads, as its DLoss.
bool isUnitSeedOf(ex::KernelOp fill, ex::KernelOp backward) {
  namespace lossGrad = roles::CrossEntropyBackward;
  if (!isKernel(fill, Kernel::Fill) ||
      fill.getOuts().size() != roles::Fill::kNumResults ||
      backward.getIns().size() != lossGrad::kNumOperands ||
      backward.getIns()[lossGrad::DLoss] != fill.getOuts()[roles::Fill::Y])
    return false;
  auto value = fill->getAttrOfType<FloatAttr>("value");
  return value && value.getValueAsDouble() == 1.0 &&
         llvm::all_of(
             getReaders(fill.getOuts()[roles::Fill::Y]),
             [&](Operation *user) { return user == fill || user == backward; });
}

/// Fuses the loss `loss` with its gradient, when the CrossEntropyBackward
/// of the same logits and labels follows it (past at most a Fill, of its
/// DLoss). The fused call runs in the backward's place: the loss and the
/// count, written later than before, are read by no call between.
void fuseLossGradient(ex::KernelOp loss) {
  namespace forward = roles::CrossEntropyForward;
  namespace lossGrad = roles::CrossEntropyBackward;
  ex::KernelOp next = getNextKernel(loss);
  if (!next || !canMerge(loss, next))
    return;
  ex::KernelOp fill, backward = next;
  if (isKernel(next, Kernel::Fill)) {
    fill = next;
    backward = getNextKernel(fill);
    if (!backward || !canMerge(fill, backward))
      return;
  }
  // The same (Logits, Labels).
  if (!isKernel(backward, Kernel::CrossEntropyBackward) ||
      backward.getOuts().size() != lossGrad::kNumResults ||
      backward.getIns().size() < 2 ||
      backward.getIns().take_front(2) != loss.getIns())
    return;
  bool dropSeed = fill && isUnitSeedOf(fill, backward);
  Value seed;
  if (!dropSeed && backward.getIns().size() == lossGrad::kNumOperands)
    seed = backward.getIns()[lossGrad::DLoss];
  ValueRange lossIns = loss.getIns(), lossOuts = loss.getOuts();
  Value correct = lossOuts.size() == forward::kNumResults
                      ? lossOuts[forward::Correct]
                      : Value();
  using namespace roles::CrossEntropyForwardBackward;
  SmallVector<Value> ins =
      KernelBuilder::orderByRole({{Logits, lossIns[forward::Logits]},
                                  {Labels, lossIns[forward::Labels]},
                                  {DLoss, seed}});
  SmallVector<Value> outs = KernelBuilder::orderByRole(
      {{Loss, lossOuts[forward::Loss]},
       {DLogits, backward.getOuts()[lossGrad::DLogits]},
       {Correct, correct}});
  OpBuilder builder(backward);
  auto fused =
      createKernel(builder, loss.getLoc(), Kernel::CrossEntropyForwardBackward,
                   ins, outs, Value());
  for (NamedAttribute attr : backward.getKernelAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  backward.erase();
  loss.erase();
  if (dropSeed) {
    Value unitSeed = fill.getOuts()[roles::Fill::Y];
    fill.erase();
    if (Operation *buffer = unitSeed.getDefiningOp();
        buffer && buffer->use_empty())
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
        if (getReluFusion(op))
          producers.push_back(op);
        else if (isKernel(op, Kernel::ReluBackward))
          reluGrads.push_back(op);
        else if (isKernel(op, Kernel::Conv2dBackwardWeights) ||
                 isKernel(op, Kernel::MatmulTransposedA))
          weightGrads.push_back(op);
        else if (isKernel(op, Kernel::CrossEntropyForward))
          losses.push_back(op);
      });
      for (ex::KernelOp producer : producers) {
        ex::KernelOp relu = getNextKernel(producer);
        if (!relu || !isKernel(relu, Kernel::ReluForward))
          continue;
        ReluTarget target = getReluTarget(producer, relu, batch);
        if (target != ReluTarget::None)
          fuseRelu(producer, relu, target);
      }
      for (ex::KernelOp relu : reluGrads) {
        ex::KernelOp norm = getNextKernel(relu);
        if (norm && isKernel(norm, Kernel::BatchNormBackward) &&
            canFuseReluBatchNormBackward(relu, norm, batch))
          fuseReluBatchNormBackward(relu, norm);
      }
      // The adds the ReLU fusion left: gradient sums a ReluBackward masks.
      SmallVector<ex::KernelOp> adds;
      step.getBody().walk([&](ex::KernelOp op) {
        if (isKernel(op, Kernel::AddForward))
          adds.push_back(op);
      });
      for (ex::KernelOp add : adds) {
        ex::KernelOp relu = getNextKernel(add);
        if (relu && isKernel(relu, Kernel::ReluBackward) &&
            canFuseAddReluBackward(add, relu, batch))
          fuseAddReluBackward(add, relu);
      }
      for (ex::KernelOp weights : weightGrads) {
        ex::KernelOp sum = getNextKernel(weights);
        if (!sum)
          continue;
        std::optional<Kernel> kernel = getBiasFusion(weights, sum);
        if (kernel && canFuseBias(weights, sum, batch))
          fuseBias(weights, sum, *kernel);
      }
      for (ex::KernelOp loss : losses) {
        ex::KernelOp count = getNextKernel(loss);
        if (count && canFuseCorrectCount(loss, count, batch))
          fuseCorrectCount(loss, count);
      }
      // Again: the count fusion replaced the losses it fused.
      SmallVector<ex::KernelOp> fusedLosses;
      step.getBody().walk([&](ex::KernelOp op) {
        if (isKernel(op, Kernel::CrossEntropyForward))
          fusedLosses.push_back(op);
      });
      for (ex::KernelOp loss : fusedLosses)
        fuseLossGradient(loss);
    }
  }
};

} // namespace
